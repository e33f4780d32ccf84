import { Condition } from '../../../lib/model/cluster/schema/status';
import { Outcome } from '../../../lib/engines/reconciler/workflow/outcomes';
import { complete, Method } from '../../fakes/fake-cloudformation';
import { EXAMPLE, Harness } from '../../fakes/harness';

/**
 * Throttling: the SDK adapter retries in real life (adaptive mode); when a
 * ThrottlingException still gets through, it is transient, not a failure: the
 * workflow's one error path records Degraded=True (Throttled), counts nothing,
 * leaves Ready alone and requeues; the next reconcile goes on and converges.
 */

let h: Harness;
afterEach(() => h.cleanup());

/**
 * `afterSteps`: reconciles run before the throttling starts (1: after `execute`, so the throttled call is the look
 * at the stack in progress, where `waitForStack` was called before the redesign).
 */
const ROWS: Array<{ method: Method; scenario: 'create' | 'update'; task: string; afterSteps: number }> = [
  { method: 'describeStack', scenario: 'create', task: 'observe', afterSteps: 0 },
  { method: 'createChangeSet', scenario: 'create', task: 'change-set', afterSteps: 0 },
  { method: 'waitForChangeSet', scenario: 'create', task: 'change-set', afterSteps: 0 },
  { method: 'executeChangeSet', scenario: 'create', task: 'execute', afterSteps: 0 },
  { method: 'describeStack', scenario: 'create', task: 'observe', afterSteps: 1 },
  { method: 'describeStack', scenario: 'update', task: 'observe', afterSteps: 1 },
  { method: 'describeChangeSet', scenario: 'update', task: 'change-set', afterSteps: 0 },
  { method: 'createChangeSet', scenario: 'update', task: 'change-set', afterSteps: 0 },
  { method: 'executeChangeSet', scenario: 'update', task: 'execute', afterSteps: 0 },
];

/** Reconciles one step at a time (the clock moving by the requeue asked for) until one ends transient. */
async function stepUntilTransient(): Promise<{ outcome: Outcome; readyBefore?: Condition }> {
  for (let i = 0; i < 10; i++) {
    const readyBefore = h.condition('Ready');
    const outcome = await h.step();
    if (outcome.result === 'transient') return { outcome, readyBefore };
    h.cfn.advance(outcome.requeueAfterMs ?? 0);
  }
  throw new Error('no transient outcome');
}

test.each(ROWS)(
  '$scenario, $method throttled (after $afterSteps reconciles): transient, nothing counted, Ready untouched, then it converges',
  async ({ method, scenario, task, afterSteps }) => {
    // GIVEN the scenario's change (an operation of three polls), and CloudFormation throttling the first call of `method` after `afterSteps` reconciles
    h = new Harness();
    if (scenario === 'update') {
      expect((await h.reconcile()).result).toBe('applied');
      h.edit(EXAMPLE, (raw) => {
        raw.spec.cloudConfig.values.maxPods = 110;
      });
    }
    h.cfn.script(h.stackName(), complete(3));
    const before = h.state()?.status?.cloudConfigChecksum;
    h.cfn.resetCalls();
    for (let i = 0; i < afterSteps; i++) h.cfn.advance((await h.step()).requeueAfterMs ?? 0);
    const calledBefore = h.cfn.count(method);
    h.cfn.throttle(method, 1);

    // WHEN reconciles run until the throttled call
    const { outcome, readyBefore } = await stepUntilTransient();

    // THEN transient: requeued after the base backoff (1 s), Degraded=True Throttled naming the task, nothing counted, no retryAfter, Ready as it was, nothing recorded as live
    expect(outcome).toMatchObject({
      result: 'transient',
      reason: 'Throttled',
      requeueAfterMs: 1000,
      message: `${task}: Rate exceeded`,
    });
    expect(h.cfn.count(method)).toBe(calledBefore + 1);
    expect(h.condition('Degraded')).toMatchObject({
      status: 'True',
      reason: 'Throttled',
      message: `${task}: Rate exceeded (transient; retrying)`,
    });
    expect(h.condition('Progressing')).toMatchObject({ status: 'True', reason: 'Throttled' });
    expect(h.condition('Stalled')?.status).not.toBe('True');
    // (`execute` writes Progressing, Ready=False ChangeSetExecuting, before its call, by design: the error path then leaves it)
    expect(h.condition('Ready')).toEqual(
      task === 'execute' ? expect.objectContaining({ status: 'False', reason: 'ChangeSetExecuting' }) : readyBefore,
    );
    expect(h.status().controller?.failures ?? 0).toBe(0);
    expect(h.status().controller?.retryAfter).toBeUndefined();
    expect(h.status().cloudConfigChecksum).toBe(before);

    // WHEN the requeued reconciles run (as `reconcile --once` does), then one more
    h.cfn.advance(outcome.requeueAfterMs!);
    const later = [(await h.reconcile()).result, (await h.reconcile()).result];

    // THEN it converges with one operation in all, and the cluster is Ready with the live checksum, Degraded cleared
    expect(later).toEqual(['applied', 'unchanged']);
    expect(h.cfn.started.filter((o) => o.kind === scenario)).toHaveLength(1);
    expect(h.condition('Ready')?.status).toBe('True');
    expect(h.condition('Degraded')).toMatchObject({ status: 'False', reason: 'AsExpected' });
    expect(h.status()).toMatchObject({
      stackStatus: `${scenario.toUpperCase()}_COMPLETE`,
      observedGeneration: scenario === 'create' ? 1 : 2,
    });
    expect(h.status().controller?.failures ?? 0).toBe(0);
    expect(h.status().cloudConfigChecksum).toBe(h.cfn.peek(h.stackName())?.outputs.ConfigChecksum);
    expect(h.status().controller?.retryAfter).toBeUndefined();
  },
);

test('a throttled batched listing falls back to one describe per cluster for that pass, and the passes go on', async () => {
  // GIVEN two clusters, and the first listing of stacks throttled
  h = new Harness({ clusters: [EXAMPLE, 'staging-us2'] });
  h.cfn.throttle('listStacks', 1);

  // WHEN the controller passes until settled
  const pass = await h.pass({ concurrency: 2 });

  // THEN both clusters were created; the first pass described each stack (its listing was throttled), the later
  // polls (the stacks in progress) listed only the stacks in progress and described each stack once it had left
  expect([...pass.outcomes.values()].map((o) => o.result)).toEqual(['applied', 'applied']);
  expect(h.cfn.count('listStacks')).toBe(1);
  expect(h.cfn.count('listStacksInProgress')).toBeGreaterThanOrEqual(1);
  expect(h.cfn.count('describeStack')).toBe(2 + 2);
  expect(h.condition('Ready')?.status).toBe('True');
  expect(h.condition('Ready', 'staging-us2')?.status).toBe('True');
});
