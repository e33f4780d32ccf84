import * as fs from 'node:fs';
import * as path from 'node:path';
import { generateCluster } from '../../../bench/generate-fleet';
import { buildFleetApp } from '../../../lib/engines/stacks/app';
import { changedProperties, RollKey, rollKeyOf } from '../../../lib/engines/stacks/roll-key';
import { EXAMPLE_NAMES, example, tempDir, validated } from '../../helpers/clusters';

/**
 * A code change that alters the roll key of a stack replaces the nodes of every cluster like it, on every fleet that
 * upgrades (issue 33: the release that wrote the launch template's security groups as NetworkInterfaces rolled every
 * node of the fleet). The daemon gates such a change (waves, windows, maxConcurrentPools) and says it is the release;
 * this test makes it a decision: it fails naming each stack, pool and property whose roll key a change of the code
 * altered. If that is on purpose, write it in the release notes ("this release replaces the nodes of …: <property>"),
 * then record the new keys with UPDATE_GOLDEN=1 and say why in the commit.
 */

const GOLDEN = path.join(__dirname, 'golden', 'roll-keys.json');
const GENERATED = 8;

type Keys = Partial<Record<string, RollKey>>;

/** Every stack of the examples and of a generated fleet, synthesized as `cdk synth` does: its roll key by stack name. */
function rollKeysNow(): Keys {
  const clusters = [
    ...EXAMPLE_NAMES.map((n) => ({ file: `clusters/${n}.yaml`, cluster: example(n) })),
    ...Array.from({ length: GENERATED }, (_, i) => {
      const raw = generateCluster(i) as { metadata: { name: string } };
      return {
        file: `generated/${raw.metadata.name}.yaml`,
        cluster: validated(raw, `generated/${raw.metadata.name}.yaml`),
      };
    }),
  ];
  const outdir = tempDir('roll-keys');
  try {
    const assembly = buildFleetApp({ clusters, outdir, nag: false, bootstrap: false }).app.synth();
    const keys: Keys = {};
    for (const s of assembly.stacks) {
      const key = rollKeyOf(JSON.parse(fs.readFileSync(s.templateFullPath, 'utf8')));
      if (key) keys[s.stackName] = key;
    }
    return keys;
  } finally {
    fs.rmSync(outdir, { recursive: true, force: true });
  }
}

/** "WorkerStack-apps-eu1-Pool-spot: launchTemplate.NetworkInterfaces changed" … for every difference. */
function differences(recorded: Keys, now: Keys): string[] {
  const names = [...new Set([...Object.keys(recorded), ...Object.keys(now)])].sort();
  return names.flatMap((name) => {
    const [a, b] = [recorded[name], now[name]];
    const pool = /-Pool-(.+)$/.exec(name)?.[1] ?? 'default (the shared stack)';
    if (!a || !b) return [`${name} (pool ${pool}): ${a ? 'no longer has' : 'now has'} a group`];
    if (a.key === b.key) return [];
    return [`${name} (pool ${pool}): ${changedProperties(a, b).join(', ')} changed: its nodes are replaced on upgrade`];
  });
}

test('no change of the code alters the roll key of any example or generated stack unless it is recorded here', () => {
  // GIVEN the roll keys recorded by the last release that changed them on purpose
  const now = rollKeysNow();
  if (process.env.UPDATE_GOLDEN === '1') fs.writeFileSync(GOLDEN, `${JSON.stringify(now, null, 2)}\n`);
  const recorded = JSON.parse(fs.readFileSync(GOLDEN, 'utf8')) as Keys;
  // WHEN / THEN the stacks' keys are those, stack by stack and property by property
  expect(differences(recorded, now)).toEqual([]);
  expect(Object.keys(now).length).toBeGreaterThanOrEqual(EXAMPLE_NAMES.length + GENERATED);
}, 120_000);

test('a changed property is named with its stack and pool', () => {
  // GIVEN a recorded key and the same key with one property changed (what a release that rewrites it does)
  const recorded: Keys = { 'WorkerStack-a-Pool-spot': { key: 'rk1:1', parts: { 'launchTemplate.ImageId': '1' } } };
  const now: Keys = { 'WorkerStack-a-Pool-spot': { key: 'rk1:2', parts: { 'launchTemplate.ImageId': '2' } } };
  // WHEN / THEN
  expect(differences(recorded, now)).toEqual([
    'WorkerStack-a-Pool-spot (pool spot): launchTemplate.ImageId changed: its nodes are replaced on upgrade',
  ]);
});
