import { getCondition } from '../../../lib/model/cluster/schema/status';
import { complete, fail, stuck } from '../../fakes/fake-cloudformation';
import { ASG_FAILURE, EXAMPLE, Harness, LAUNCH_TEMPLATE_FAILURE } from '../../fakes/harness';
import { Json } from '../../helpers/json';

/** An update of a live stack over several passes: when the checksum is recorded, backoff, retry, a stuck stack. */

let h: Harness;
beforeEach(async () => {
  h = new Harness();
  expect((await h.reconcile()).result).toBe('applied');
  h.cfn.resetCalls();
});
afterEach(() => h.cleanup());

const maxPods = (n: number) => (raw: Json) => {
  raw.spec.cloudConfig.values.maxPods = n;
};

test('the new checksum is recorded only after UPDATE_COMPLETE, never while the stack is in progress', async () => {
  // GIVEN a config change whose update takes three polls
  const old = h.status().cloudConfigChecksum;
  h.edit(EXAMPLE, maxPods(110));
  h.cfn.script(h.stackName(), complete(3));

  // WHEN it is reconciled one step at a time, the clock moving by the requeue asked for, the status file looked at after each step
  const seen: Array<{ stack?: string; recorded?: string; progressing?: string; reason?: string }> = [];
  let outcome = await h.step();
  for (let i = 0; outcome.result === 'waiting' && i < 10; i++) {
    seen.push({
      stack: h.cfn.peek(h.stackName())?.status,
      recorded: h.status().cloudConfigChecksum,
      progressing: h.condition('Progressing')?.status,
      reason: h.condition('Progressing')?.reason,
    });
    expect(outcome.requeueAfterMs).toBe(5000);
    h.cfn.advance(outcome.requeueAfterMs!);
    outcome = await h.step();
  }

  // THEN while UPDATE_IN_PROGRESS (execute, then two looks) the file holds the old checksum and Progressing=True; after UPDATE_COMPLETE the new one
  expect(outcome.result).toBe('applied');
  expect(seen.map((s) => s.stack)).toEqual(['UPDATE_IN_PROGRESS', 'UPDATE_IN_PROGRESS', 'UPDATE_IN_PROGRESS']);
  expect(seen.every((s) => s.recorded === old && s.progressing === 'True' && s.reason === 'ChangeSetExecuting')).toBe(
    true,
  );
  expect(h.status().cloudConfigChecksum).not.toBe(old);
  expect(h.status().cloudConfigChecksum).toBe(h.cfn.peek(h.stackName())?.outputs.ConfigChecksum);
  expect(h.status().controller?.executing).toBeUndefined();
});

test('after a rollback: backoff before retryAfter without any write, then one new execution that converges', async () => {
  // GIVEN an update that rolled back
  const old = h.status();
  h.edit(EXAMPLE, maxPods(110));
  h.cfn.script(h.stackName(), fail(LAUNCH_TEMPLATE_FAILURE));
  expect((await h.reconcile()).result).toBe('failed');
  const failed = h.state();
  h.cfn.resetCalls();

  // WHEN a pass runs before retryAfter
  h.clock.advance(999);
  const early = await h.reconcile();

  // THEN it backs off: only its read of the stack, no change, no publish, no status write
  expect(early).toMatchObject({ result: 'backoff', requeueAfterMs: 1 });
  expect(Object.fromEntries(h.cfn.calls)).toEqual({ describeStack: 1 });
  expect(h.state()).toEqual(failed);

  // WHEN the next pass is due (the cause was fixed meanwhile: the next operation completes)
  h.clock.advance(1);
  const due = await h.reconcile();

  // THEN the same inputs are applied again, by one new execution, and recorded
  expect(due).toEqual({ result: 'applied', checksum: h.status().cloudConfigChecksum });
  expect(h.cfn.started.filter((o) => o.kind === 'update')).toHaveLength(2);
  expect(h.cfn.count('executeChangeSet')).toBe(1);
  expect(h.status()).toMatchObject({
    stackStatus: 'UPDATE_COMPLETE',
    observedGeneration: 2,
    controller: { failures: 0 },
  });
  expect(h.status().cloudConfigChecksum).not.toBe(old.cloudConfigChecksum);
  expect(h.status().controller?.retryAfter).toBeUndefined();
  expect(h.condition('Ready')).toMatchObject({ status: 'True', reason: 'StackUpdated' });
});

test('a second failure is reported with its own resource, not the first failure found in the stack history', async () => {
  // GIVEN an update that failed on the launch template, at once (no event seen while waiting)
  h.edit(EXAMPLE, maxPods(110));
  h.cfn.script(h.stackName(), fail(LAUNCH_TEMPLATE_FAILURE, 0));
  expect((await h.reconcile()).result).toBe('failed');
  expect(h.problem()?.message).toContain(LAUNCH_TEMPLATE_FAILURE.reason);

  const first = h.status().controller?.failedFingerprint;

  // WHEN another change fails, on the auto scaling group this time
  h.edit(EXAMPLE, maxPods(90));
  h.cfn.script(h.stackName(), fail(ASG_FAILURE, 0));
  expect((await h.reconcile()).result).toBe('failed');

  // THEN the message names the new cause only; the new inputs count their own first failure (Degraded, not Stalled)
  expect(h.problem()).toMatchObject({ type: 'Degraded', status: 'True', reason: 'UpdateRolledBack' });
  expect(h.problem()?.message).toContain(ASG_FAILURE.reason);
  expect(h.problem()?.message).not.toContain(LAUNCH_TEMPLATE_FAILURE.logicalId);
  expect(h.status().controller?.failures).toBe(1);
  expect(h.status().controller?.failedFingerprint).not.toBe(first);
});

test('a stack still in progress when --once gives up is looked at again, never updated a second time, then recorded', async () => {
  // GIVEN an update that does not finish within the wait timeout of `reconcile --once` (60 s)
  const old = h.status().cloudConfigChecksum;
  h.edit(EXAMPLE, maxPods(110));
  h.cfn.script(h.stackName(), stuck());
  expect(await h.reconcile()).toMatchObject({ result: 'waiting', requeueAfterMs: 5000 });
  expect(h.cfn.count('executeChangeSet')).toBe(1);
  h.cfn.resetCalls();

  // WHEN the requeued reconcile runs while it is still in progress
  h.cfn.advance(5000);
  const again = await h.step();

  // THEN it only looks: one describe, no change set, no execution, Progressing=True for our change set, old checksum
  expect(again).toMatchObject({ result: 'waiting', requeueAfterMs: 5000 });
  expect(Object.fromEntries(h.cfn.calls)).toEqual({ describeStack: 1 });
  expect(h.condition('Progressing')).toMatchObject({ status: 'True', reason: 'ChangeSetExecuting' });
  expect(h.status().cloudConfigChecksum).toBe(old);
  expect(h.status().controller?.executing).toBeDefined();

  // WHEN the operation finishes and the next reconciles run
  h.cfn.release(h.stackName());
  const results = [(await h.reconcile()).result, (await h.reconcile()).result];

  // THEN the executed change set is recorded with the live checksum, and the update was executed once in all
  expect(results).toEqual(['applied', 'unchanged']);
  expect(h.cfn.count('createChangeSet', 'executeChangeSet')).toBe(0);
  expect(h.cfn.started.filter((o) => o.kind === 'update')).toHaveLength(1);
  expect(h.status().cloudConfigChecksum).toBe(h.cfn.peek(h.stackName())?.outputs.ConfigChecksum);
  expect(h.status().cloudConfigChecksum).not.toBe(old);
  expect(getCondition(h.status(), 'Ready')?.status).toBe('True');
});
