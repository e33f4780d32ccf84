import { renderConfig, renderPools } from '../../../lib/model/cloudconfig/render';
import { poolStackName, WORKER_GROUP_LOGICAL_ID, workerStackName } from '../../../lib/core/naming';
import { example } from '../../helpers/clusters';
import { poolsVariant } from '../../engines/stacks/pool-helpers';
import { defaultTemplates } from '../../../lib/platform/files/template-directory';

/** Every file and unit of a rendered node config, as one text. */
const text = (c: ReturnType<typeof renderConfig>) =>
  [...c.node.files.map((f) => f.contents), ...c.node.units.map((u) => u.contents)].join('\n');

describe('each pool renders its own node config', () => {
  test.each([
    ['default', workerStackName('pools-eu1'), 'node.kubernetes.io/pool=system'],
    ['spot', poolStackName('pools-eu1', 'spot'), 'node.kubernetes.io/pool=spot'],
    ['arm64', poolStackName('pools-eu1', 'arm64'), 'node.kubernetes.io/pool=arm64'],
  ])('%s: signals its own stack %s, registers with its own labels', (pool, stack, label) => {
    // GIVEN the three-pool fixture
    const configs = renderPools(poolsVariant(), defaultTemplates());
    // WHEN / THEN its node signals its own stack's group, with its labels (the cluster's under them)
    const node = text(configs.get(pool)!);
    expect(node).toContain(`stack='${stack}'`);
    expect(node).toContain(`resource='${WORKER_GROUP_LOGICAL_ID}'`);
    expect(node).toContain(label);
    expect(node).toContain('topology.example.com/env=prod');
  });

  test('a pool’s taint is on its nodes only; every pool has its own checksum', () => {
    // GIVEN / WHEN
    const configs = renderPools(poolsVariant(), defaultTemplates());
    // THEN
    expect(text(configs.get('arm64')!)).toContain('example.com/arch=arm64:NoSchedule');
    expect(text(configs.get('spot')!)).not.toContain('example.com/arch');
    expect(new Set([...configs.values()].map((c) => c.checksum)).size).toBe(3);
  });

  test('a change to one pool’s labels changes that pool’s checksum only', () => {
    // GIVEN the fixture and the same with a label more on spot
    const before = renderPools(poolsVariant(), defaultTemplates());
    const after = renderPools(
      poolsVariant((raw) => (raw.spec.pools[1].labels['example.com/tier'] = 'batch')),
      defaultTemplates(),
    );
    // THEN
    expect(after.get('spot')!.checksum).not.toBe(before.get('spot')!.checksum);
    expect(after.get('default')!.checksum).toBe(before.get('default')!.checksum);
    expect(after.get('arm64')!.checksum).toBe(before.get('arm64')!.checksum);
  });

  test('a spec.pool object renders the same bytes as its pool default (the config before pools)', () => {
    // GIVEN / WHEN
    const cluster = example('prod-eu1');
    // THEN
    expect(renderPools(cluster, defaultTemplates()).get('default')!.bytes).toEqual(
      renderConfig(cluster, defaultTemplates()).bytes,
    );
  });
});
