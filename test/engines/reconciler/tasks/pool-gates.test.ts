import { rollingIn } from '../../../../lib/engines/reconciler/tasks/pool-gates';
import { ClusterStatus } from '../../../../lib/model/cluster/schema/status';

/**
 * Which of a cluster's pools roll now, as its status says (spec.rollout.maxConcurrentPools counts them): an execution
 * of ours in progress that replaces nodes. Judged before the execute when the status says so, else by the roll keys,
 * else by the config checksums (an execution recorded before either).
 */

const executing = (extra: Record<string, unknown>) => ({
  executing: { fingerprint: 'f', changeSet: 'cs', checksum: 'new', startedAt: '2030-01-01T00:00:00Z', ...extra },
});

test.each([
  {
    what: 'judged rolling before the execute, the live key unreadable (a drift repair over a template without a group)',
    spot: { cloudConfigChecksum: 'new', controller: executing({ rollKey: 'rk:b', rolls: true }) },
    rolling: ['spot'],
  },
  {
    what: 'judged not rolling (tags, sizes), though the keys were never recorded',
    spot: { cloudConfigChecksum: 'old', controller: executing({ rolls: false }) },
    rolling: [],
  },
  {
    what: 'no judgement recorded: the keys differ',
    spot: { cloudConfigChecksum: 'new', rollKey: 'rk:a', controller: executing({ rollKey: 'rk:b' }) },
    rolling: ['spot'],
  },
  {
    what: 'no judgement recorded, no live key: the config checksums are equal',
    spot: { cloudConfigChecksum: 'new', controller: executing({ rollKey: 'rk:b' }) },
    rolling: [],
  },
  { what: 'nothing executing', spot: { cloudConfigChecksum: 'new', controller: {} }, rolling: [] },
])('$what: rolling $rolling', ({ spot, rolling }) => {
  // GIVEN the cluster's status with pool spot's entry
  const status = {
    conditions: [],
    pools: [{ name: 'spot', stackName: 'WorkerStack-c1-Pool-spot', conditions: [], ...spot }],
  } as ClusterStatus;
  // WHEN pool system asks
  const found = rollingIn(status, { current: ['system', 'spot'], sharedPool: 'system', self: 'system' });
  // THEN
  expect(found).toEqual(rolling);
});
