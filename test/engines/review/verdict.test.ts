import { verdictLine } from '../../../lib/engines/review/verdict';

const capacity = { min: 3, max: 30, desired: null };
const rollingUpdate = {
  strategy: 'rolling' as const,
  nodes: null,
  maxBatchSize: 2,
  minInstancesInService: 3,
  pauseTime: 'PT10M',
  waitOnResourceSignals: true,
  minSuccessfulInstancesPercent: 100,
  instanceRefresh: null,
  drained: true,
};

test('a new cluster without a desired capacity starts at its minimum: its verdict speaks of no current size', () => {
  // WHEN
  const added = verdictLine({ status: 'added', stackName: 'WorkerStack-new', resources: [], rollingUpdate, capacity });
  const fixed = verdictLine({
    status: 'fixed',
    stackName: 'WorkerStack-new',
    resources: [],
    rollingUpdate,
    capacity: { min: 1, max: 4, desired: null },
  });
  // THEN
  expect(added).toBe(
    'new cluster: creates WorkerStack-new with its nodes, desired capacity not set (starts with min 3 nodes, max 30)',
  );
  expect(added).not.toMatch(/current size/);
  expect(fixed).toContain('starts with min 1 node, max 4');
});

test('an existing cluster without a desired capacity keeps its current size', () => {
  // WHEN
  const rolls = verdictLine({ status: 'rolls', stackName: 'WorkerStack-x', resources: [], rollingUpdate, capacity });
  // THEN
  expect(rolls).toBe(
    'rolls nodes: in batches of 2, at least 3 in service, gated by node signals (100% within PT10M), drained; desired capacity not set (min 3, max 30; the group keeps its current size)',
  );
});

test.each([
  {
    what: 'gated by signals, drained, 30 nodes',
    ru: { ...rollingUpdate, nodes: 30 },
    says: 'rolls nodes: 30 nodes in batches of 2, at least 3 in service, gated by node signals (100% within PT10M), drained',
  },
  {
    what: 'no signals, no drain',
    ru: { ...rollingUpdate, waitOnResourceSignals: false, pauseTime: 'PT2M', drained: false },
    says: 'rolls nodes: in batches of 2, at least 3 in service, pause PT2M between batches, not gated by node signals, not drained (no termination lifecycle hook)',
  },
  {
    what: 'instance refresh with checkpoints, bake time and alarms',
    ru: {
      ...rollingUpdate,
      strategy: 'instanceRefresh' as const,
      maxBatchSize: null,
      minInstancesInService: null,
      waitOnResourceSignals: false,
      instanceRefresh: {
        minHealthyPercentage: 90,
        maxHealthyPercentage: 150,
        checkpoints: [20, 100],
        bakeTimeSeconds: 900,
        alarms: ['a', 'b'],
      },
    },
    says: 'rolls nodes: by instance refresh (90-150% healthy, checkpoints at 20/100%, bake 900 s, gated by 2 alarms), drained',
  },
  {
    what: 'instance refresh without alarms',
    ru: {
      ...rollingUpdate,
      strategy: 'instanceRefresh' as const,
      instanceRefresh: {
        minHealthyPercentage: 100,
        maxHealthyPercentage: 110,
        checkpoints: [],
        bakeTimeSeconds: 0,
        alarms: [],
      },
    },
    says: 'rolls nodes: by instance refresh (100-110% healthy, gated by EC2 health checks), drained',
  },
])('the verdict says how it rolls: $what', ({ ru, says }) => {
  expect(
    verdictLine({ status: 'rolls', stackName: 'WorkerStack-x', resources: [], rollingUpdate: ru, capacity }).split(
      '; ',
    )[0],
  ).toBe(says);
});
