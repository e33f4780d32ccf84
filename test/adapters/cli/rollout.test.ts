import * as fs from 'node:fs';
import * as path from 'node:path';
import { runCli } from '../../../lib/adapters/cli/program';
import { tempDir } from '../../helpers/clusters';

/** `worker-stacks rollout status|pause|resume` on a directory of objects (no AWS: status reads what was recorded). */

const REPO = path.resolve(__dirname, '..', '..', '..');

function fleetDir(): string {
  const dir = tempDir('rollout-cli');
  fs.cpSync(path.join(REPO, 'clusters'), path.join(dir, 'clusters'), { recursive: true });
  return path.join(dir, 'clusters');
}

async function cli(...args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(args, { out: (t) => out.push(t), err: (t) => err.push(t) });
  return { code, out: out.join(''), err: err.join('') };
}

const POLICY = `apiVersion: worker-stacks.io/v1alpha1
kind: WorkerRolloutPolicy
metadata: { name: fleet }
spec:
  waves:
    - { name: canary, selector: { matchLabels: { ring: canary } }, maxConcurrent: 1, soak: 1h }
`;

test('no policy: status says every roll starts as --concurrency allows; exit 0', async () => {
  const r = await cli('rollout', 'status', '--clusters', fleetDir());
  expect(r.code).toBe(0);
  expect(r.out).toContain('no rollout policy');
});

test('a policy: every cluster in its wave, as JSON too; nothing is written', async () => {
  // GIVEN the example clusters, one labelled canary, and a policy
  const dir = fleetDir();
  fs.writeFileSync(
    path.join(dir, 'prod-eu1.yaml'),
    fs
      .readFileSync(path.join(dir, 'prod-eu1.yaml'), 'utf8')
      .replace('  name: prod-eu1\n', '  name: prod-eu1\n  labels: { ring: canary }\n'),
  );
  fs.mkdirSync(path.join(dir, 'rollout-policies'));
  fs.writeFileSync(path.join(dir, 'rollout-policies', 'fleet.yaml'), POLICY);
  const before = fs.readdirSync(dir).sort();
  // WHEN
  const text = await cli('rollout', 'status', '--clusters', dir);
  const json = await cli('rollout', 'status', '--clusters', dir, '-o', 'json');
  // THEN (no stack recorded yet: nothing pending, every wave settled)
  expect(text.code).toBe(0);
  expect(text.out).toContain('wave 1 canary [settled] ring=canary: 1 clusters, maxConcurrent 1, soak 1h');
  expect(text.out).toContain(
    'wave 2 remainder [settled] every cluster no wave selects: 4 clusters, maxConcurrent 25% = 1, soak 0s',
  );
  const report = JSON.parse(json.out);
  expect(report.policies[0].waves.map((w: { name: string; size: number }) => `${w.name}:${w.size}`)).toEqual([
    'canary:1',
    'remainder:4',
  ]);
  expect(fs.readdirSync(dir).sort()).toEqual(before);
});

test('an invalid policy: every problem with file and field path, exit 1', async () => {
  const dir = fleetDir();
  fs.mkdirSync(path.join(dir, 'rollout-policies'));
  fs.writeFileSync(
    path.join(dir, 'rollout-policies', 'fleet.yaml'),
    POLICY.replace('soak: 1h', 'soak: soon').replace('maxConcurrent: 1', 'maxConcurrent: 0'),
  );
  const r = await cli('rollout', 'status', '--clusters', dir);
  expect(r.code).toBe(1);
  expect(r.out).toMatch(
    /^problem: \S*clusters\/rollout-policies\/fleet\.yaml: spec\.waves\[0\]\.maxConcurrent: 0 is not a count/m,
  );
  expect(r.out).toMatch(
    /^problem: \S*clusters\/rollout-policies\/fleet\.yaml: spec\.waves\[0\]\.soak: "soon" is not a duration/m,
  );
  expect(r.out).toContain('no roll starts while a rollout policy is invalid');
  expect(r.out).not.toContain('no rollout policy:');
});

test('validate refuses an invalid policy too, with the file and field path; exit 1', async () => {
  const dir = fleetDir();
  fs.mkdirSync(path.join(dir, 'rollout-policies'));
  fs.writeFileSync(path.join(dir, 'rollout-policies', 'fleet.yaml'), POLICY.replace('soak: 1h', 'soak: soon'));
  const r = await cli('validate', '--clusters', dir);
  expect(r.code).toBe(1);
  expect(r.err).toMatch(
    /^\S*clusters\/rollout-policies\/fleet\.yaml: spec\.waves\[0\]\.soak: "soon" is not a duration/m,
  );
  fs.rmSync(path.join(dir, 'rollout-policies'), { recursive: true });
  expect((await cli('validate', '--clusters', dir)).code).toBe(0);
}, 120_000);

test('pause and resume an unknown policy: exit 2, naming it', async () => {
  const r = await cli('rollout', 'pause', 'nope', '--clusters', fleetDir());
  expect(r.code).toBe(2);
  expect(r.err).toContain('no rollout policy nope');
});
