import { getCondition } from '../../../lib/model/cluster/schema/status';
import { signalShortfall } from '../../../lib/engines/reconciler/tasks/roll-verdict';
import { WORKER_GROUP_LOGICAL_ID } from '../../../lib/core/naming';
import { EXAMPLE, Harness } from '../../fakes/harness';
import { Json } from '../../helpers/json';

/**
 * Rolls gated by the nodes' health, through the reconciler and the fake CloudFormation that models signals: nodes
 * that never come up make the update wait the pause time and roll back; the reconciler says how many nodes did not
 * signal (from the stack's own events), keeps the old config live, retries the same inputs a bounded number of times,
 * then stops (Stalled) and never re-rolls them blindly.
 */

const PAUSE_MS = 10 * 60_000; // staging-us1: pauseTime PT10M
let h: Harness;
beforeEach(async () => {
  h = new Harness({ waitTimeoutMs: 60 * 60_000 });
  expect((await h.reconcile()).result).toBe('applied');
  h.cfn.resetCalls();
});
afterEach(() => h.cleanup());

const rollNodes = (raw: Json) => (raw.spec.cloudConfig.values.maxPods = 97);

test.each([
  {
    health: 'silent' as const,
    batch: 1,
    message:
      /1 of 1 nodes did not signal SUCCESS \(PoolGroupASG2416841C: Received 0 SUCCESS signal\(s\) out of 1\. Unable to satisfy 100% MinSuccessfulInstancesPercent requirement\)/,
  },
  { health: 'silent' as const, batch: 2, message: /2 of 2 nodes did not signal SUCCESS/ },
  { health: 'failing' as const, batch: 2, message: /2 of 2 nodes signalled FAILURE/ },
])(
  'nodes $health, batches of $batch: UpdateRolledBack with the signal count, the old config stays live',
  async ({ health, batch, message }) => {
    // GIVEN a config change that rolls the nodes, whose new nodes do not come up
    const old = h.status().cloudConfigChecksum;
    h.edit(EXAMPLE, (raw) => (rollNodes(raw), (raw.spec.pool.rollingUpdate.maxBatchSize = batch)));
    h.cfn.nodes(h.stackName(), health);
    // WHEN it is reconciled until the stack settles
    const outcome = await h.reconcile();
    // THEN CloudFormation rolled back, and the reconciler says why in the nodes' terms
    expect(outcome.result).toBe('failed');
    expect(h.cfn.peek(h.stackName())?.status).toBe('UPDATE_ROLLBACK_COMPLETE');
    expect(h.problem()).toMatchObject({
      type: 'Degraded',
      status: 'True',
      reason: 'UpdateRolledBack',
      message: expect.stringMatching(message),
    });
    expect(h.problem()?.message).toMatch(/attempt 1 of 2/);
    expect(h.status().cloudConfigChecksum).toBe(old);
    expect(getCondition(h.status(), 'Ready')).toMatchObject({ status: 'False', reason: 'UpdateRolledBack' });
  },
);

test('silent nodes hold the update for the whole pause time before it rolls back', async () => {
  // GIVEN
  h.edit(EXAMPLE, rollNodes);
  h.cfn.nodes(h.stackName(), 'silent');
  // WHEN the change set is executed, and the clock runs to just before the pause time ends
  expect((await h.step()).result).toBe('waiting');
  const started = h.clock.ms;
  h.cfn.advance(PAUSE_MS - 5000);
  // THEN the stack still waits for the signals; a poll interval later it has rolled back
  expect(h.cfn.peek(h.stackName())?.status).toBe('UPDATE_IN_PROGRESS');
  h.cfn.advance(5000);
  expect(h.cfn.peek(h.stackName())?.status).toBe('UPDATE_ROLLBACK_COMPLETE');
  expect(h.clock.ms - started).toBe(PAUSE_MS);
});

test('healthy nodes: the same change completes and is recorded; the log said how it would roll', async () => {
  h.edit(EXAMPLE, rollNodes);
  h.cfn.nodes(h.stackName(), 'healthy');
  expect((await h.reconcile()).result).toBe('applied');
  expect(h.condition('Ready')).toMatchObject({ status: 'True', reason: 'StackUpdated' });
  expect(h.log.entries.map((e) => e.msg)).toContainEqual(
    expect.stringContaining(
      'rolls 2 nodes in batches of 1, at least 1 in service, gated by node signals (100% within PT10M), drained',
    ),
  );
});

test('a change that rolls no node needs no signal: silent nodes do not stop it', async () => {
  h.edit(EXAMPLE, (raw) => (raw.spec.tags = { ...raw.spec.tags, 'cost-center': 'k8s-4711' }));
  h.cfn.nodes(h.stackName(), 'silent');
  expect((await h.reconcile()).result).toBe('applied');
  expect(h.cfn.peek(h.stackName())?.status).toBe('UPDATE_COMPLETE');
});

test('no blind re-run: one retry of the same inputs after backoff, then Stalled, then nothing until the object changes', async () => {
  // GIVEN a roll whose nodes never come up
  h.edit(EXAMPLE, rollNodes);
  h.cfn.nodes(h.stackName(), 'silent');
  expect((await h.reconcile()).result).toBe('failed');
  const retryAfter = Date.parse(h.status().controller!.retryAfter!);
  // WHEN the backoff passes and the same inputs are tried once more
  h.clock.advance(retryAfter - h.clock.ms);
  const second = await h.reconcile();
  // THEN the second rollback stops the cluster, naming the node count and what to do
  expect(second.result).toBe('stalled');
  expect(h.problem()).toMatchObject({
    type: 'Stalled',
    status: 'True',
    reason: 'UpdateFailed',
    message: expect.stringMatching(
      /1 of 1 nodes did not signal SUCCESS.*failed 2 times with these inputs, stopped \(fix the object, or run worker-stacks retry staging-us1\)/,
    ),
  });
  expect(h.cfn.started.filter((o) => o.kind === 'update')).toHaveLength(2);
  // WHEN more passes run, hours later
  h.cfn.resetCalls();
  for (let i = 0; i < 3; i++) {
    h.clock.advance(3600_000);
    await h.reconcile();
  }
  // THEN nothing is executed again: the nodes are not rolled over and over
  expect(h.cfn.count('createChangeSet', 'executeChangeSet')).toBe(0);
  expect(h.cfn.started.filter((o) => o.kind === 'update')).toHaveLength(2);
  // WHEN the object is fixed (the config changes again) and the nodes now come up
  h.edit(EXAMPLE, (raw) => (raw.spec.cloudConfig.values.maxPods = 110));
  h.cfn.nodes(h.stackName(), 'healthy');
  // THEN the new inputs are applied at once
  expect((await h.reconcile()).result).toBe('applied');
  expect(h.cfn.started.filter((o) => o.kind === 'update')).toHaveLength(3);
  expect(h.problem()?.status).not.toBe('True');
});

test('a new cluster whose first nodes never signal: the create rolls back as CreateRolledBack with the count', async () => {
  // GIVEN
  h.addCluster('fresh');
  h.cfn.nodes(h.stackName('fresh'), 'silent');
  // WHEN
  const outcome = await h.reconcile('fresh');
  // THEN
  expect(outcome.result).toBe('failed');
  expect(h.problem('fresh')).toMatchObject({
    reason: 'CreateRolledBack',
    message: expect.stringMatching(
      /2 nodes did not signal within the pause time \(PoolGroupASG2416841C: Failed to receive 2 resource signal\(s\) within the specified duration\)/,
    ),
  });
});

describe("signalShortfall reads CloudFormation's own wording", () => {
  const event = (reason: string) => ({
    id: '1',
    timestamp: new Date(0),
    logicalId: WORKER_GROUP_LOGICAL_ID,
    resourceType: 'AWS::AutoScaling::AutoScalingGroup',
    status: 'UPDATE_FAILED',
    reason,
  });
  test.each([
    [
      'Received 1 SUCCESS signal(s) out of 3. Unable to satisfy 100% MinSuccessfulInstancesPercent requirement',
      /^2 of 3 nodes did not signal SUCCESS/,
    ],
    [
      'Received 2 FAILURE signal(s) out of 2. Unable to satisfy 100% MinSuccessfulInstancesPercent requirement',
      /^2 of 2 nodes signalled FAILURE/,
    ],
    [
      'Failed to receive 1 resource signal(s) for the current batch.  Each resource signal timeout is counted as a FAILURE.',
      /^1 node did not signal within the pause time/,
    ],
    [
      'Failed to receive 4 resource signal(s) within the specified duration',
      /^4 nodes did not signal within the pause time/,
    ],
  ])('%s', (reason, expected) => expect(signalShortfall([event(reason)])).toMatch(expected));
  test('an event about something else is not a signal shortfall', () =>
    expect(signalShortfall([event('Resource creation cancelled')])).toBeUndefined());
});
