import { verdictLine } from '../../lib/review/verdict';

const capacity = { min: 3, max: 30, desired: null };
const rollingUpdate = { maxBatchSize: 2, minInstancesInService: 3, pauseTime: 'PT3M', waitOnResourceSignals: false };

test('a new cluster without a desired capacity starts at its minimum: its verdict speaks of no current size', () => {
  // WHEN
  const added = verdictLine({ status: 'added', stackName: 'WorkerStack-new', resources: [], rollingUpdate, capacity });
  const fixed = verdictLine({ status: 'fixed', stackName: 'WorkerStack-new', resources: [], rollingUpdate, capacity: { min: 1, max: 4, desired: null } });
  // THEN
  expect(added).toBe('new cluster: creates WorkerStack-new with its nodes, desired capacity not set (starts with min 3 nodes, max 30)');
  expect(added).not.toMatch(/current size/);
  expect(fixed).toContain('starts with min 1 node, max 4');
});

test('an existing cluster without a desired capacity keeps its current size', () => {
  // WHEN
  const rolls = verdictLine({ status: 'rolls', stackName: 'WorkerStack-x', resources: [], rollingUpdate, capacity });
  // THEN
  expect(rolls).toBe('rolls nodes: 2 at a time, at least 3 in service, pause PT3M between batches; desired capacity not set (min 3, max 30; the group keeps its current size)');
});
