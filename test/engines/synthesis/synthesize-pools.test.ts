import * as fs from 'node:fs';
import { renderPools } from '../../../lib/model/cloudconfig/render';
import { sha256Hex } from '../../../lib/model/cloudconfig/checksum';
import { UsageError } from '../../../lib/core/errors';
import { poolStackName, workerStackName } from '../../../lib/core/naming';
import { synthesizeStack } from '../../../lib/engines/synthesis/synthesize';
import { assemblyDir, assemblyKey } from '../../../lib/engines/synthesis/assembly-dir';
import { originOf } from '../../../lib/engines/synthesis/synthesis-check';
import { example, tempDir } from '../../helpers/clusters';
import { dropRulesOfMissingPools, poolsVariant, synthAll } from '../stacks/pool-helpers';
import { DEFAULT_TEMPLATES_DIR, defaultTemplates } from '../../../lib/platform/files/template-directory';

const SHARED = workerStackName('pools-eu1');
const SPOT = poolStackName('pools-eu1', 'spot');
const ARM = poolStackName('pools-eu1', 'arm64');
const opts = (workDir: string, stackName?: string) => ({
  templatesDir: DEFAULT_TEMPLATES_DIR,
  workDir,
  fingerprint: 'c'.repeat(64),
  nag: false,
  stackName,
});

describe('synthesizeStack picks one of the cluster’s stacks', () => {
  test.each([
    [undefined, SHARED],
    [SHARED, SHARED],
    [SPOT, SPOT],
    [ARM, ARM],
  ])(
    'stackName %s → %s, the bytes `cdk synth` writes, with that pool’s config object as its one asset',
    (asked, name) => {
      // GIVEN the three-pool fixture and its templates as `cdk synth` writes them
      const cluster = poolsVariant();
      const cli = synthAll(cluster);
      const workDir = tempDir('synth-pools');
      // WHEN the reconciler synthesizes one of its stacks
      const out = synthesizeStack(cluster, opts(workDir, asked));
      // THEN it is that stack, byte for byte, and its one asset is its own pool's config, under its checksum
      expect(out.stackName).toBe(name);
      expect(out.templateBody).toBe(cli.get(name));
      const checksum = JSON.parse(out.templateBody).Outputs.ConfigChecksum.Value as string;
      expect(out.assets).toHaveLength(1);
      expect(out.assets[0].objectKey).toBe(`clusters/pools-eu1/${checksum}.ign`);
      expect(sha256Hex(fs.readFileSync(out.assets[0].sourcePath))).toBe(checksum);
    },
    60_000,
  );

  test('a shared stack without the pool default has no config object; its checksum output is the first pool’s', () => {
    // GIVEN the fixture without its pool default
    const cluster = poolsVariant((raw) => {
      raw.spec.pools = raw.spec.pools.slice(1);
      dropRulesOfMissingPools(raw);
    });
    // WHEN
    const out = synthesizeStack(cluster, opts(tempDir('synth-no-default')));
    // THEN the security group, role and profile stay (and are exported); no group, launch template or config
    const t = JSON.parse(out.templateBody);
    const types = new Set(Object.values(t.Resources as Record<string, { Type: string }>).map((r) => r.Type));
    expect(types).not.toContain('AWS::AutoScaling::AutoScalingGroup');
    expect(types).not.toContain('AWS::EC2::LaunchTemplate');
    expect(types).toContain('AWS::IAM::InstanceProfile');
    expect(out.assets).toEqual([]);
    // (the checksum the reconciler compares for this stack: model/cluster/pools/pools.ts, tasks/prepare.ts)
    expect(t.Outputs.ConfigChecksum.Value).toBe(
      renderPools(cluster, defaultTemplates()).get(cluster.spec.pools?.[0]?.name ?? '')?.checksum,
    );
    expect(Object.keys(t.Outputs)).toEqual(
      expect.arrayContaining(['WorkerSecurityGroupId', 'InstanceProfileArn', 'ExportSecurityGroupId']),
    );
  }, 60_000);

  test('a stack that is not the cluster’s is refused with the names of its stacks', () => {
    // GIVEN / WHEN / THEN
    expect(() => synthesizeStack(example('prod-eu1'), opts(tempDir('synth-bad'), SPOT))).toThrow(UsageError);
    expect(() => synthesizeStack(example('prod-eu1'), opts(tempDir('synth-bad'), SPOT))).toThrow(
      /prod-eu1 has no stack WorkerStack-pools-eu1-Pool-spot[\s\S]*WorkerStack-prod-eu1/,
    );
  });

  test('the stacks of one cluster have assembly directories of their own (synthesized at once, none removes another’s)', () => {
    // GIVEN / WHEN
    const keys = [SHARED, SPOT, ARM].map((s) => assemblyKey('pools-eu1', s));
    // THEN the shared stack's is the cluster's (as before pools), the others' are their stack names
    expect(keys).toEqual(['pools-eu1', SPOT, ARM]);
    const workDir = tempDir('synth-keys');
    synthesizeStack(poolsVariant(), opts(workDir, SPOT));
    synthesizeStack(poolsVariant(), opts(workDir, SHARED));
    expect(fs.existsSync(assemblyDir(workDir, assemblyKey('pools-eu1', SPOT)))).toBe(true);
    expect(fs.existsSync(assemblyDir(workDir, 'pools-eu1'))).toBe(true);
  }, 60_000);
});

describe('a finding in a pool stack names its pool', () => {
  test.each([
    [`${SPOT}/Pool/Group/ASG`, 'spec.pools[1]'],
    [`${ARM}/Pool/LaunchTemplate/Resource`, 'spec.pools[2]'],
    [`${SHARED}/Pool/Group/ASG`, 'spec.pools[0]'],
    [`${ARM}/NodeConfig`, 'spec.cloudConfig'],
    ['WorkerStack-other/Pool/Group/ASG', ''],
  ])('%s → %s', (path, field) => {
    // GIVEN / WHEN / THEN
    expect(originOf(poolsVariant(), path)).toBe(field);
  });

  test('a pool with its own cloud-config: a finding in its config object names that field', () => {
    // GIVEN the arm64 pool with values of its own
    const cluster = poolsVariant((raw) => (raw.spec.pools[2].cloudConfig = { values: { maxPods: 58 } }));
    // WHEN / THEN
    expect(originOf(cluster, `${ARM}/NodeConfig`)).toBe('spec.pools[2].cloudConfig');
    expect(originOf(example('prod-eu1'), 'WorkerStack-prod-eu1/Pool/Group/ASG')).toBe('spec.pool');
  });
});
