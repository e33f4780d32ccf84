import { getCondition } from '../../lib/cluster/status';
import { complete, fail, stuck } from '../fakes/fake-cloudformation';
import { ASG_FAILURE, EXAMPLE, Harness, LAUNCH_TEMPLATE_FAILURE } from '../fakes/harness';

/** An update of a live stack over several passes: when the checksum is recorded, backoff, retry, a stuck stack. */

let h: Harness;
beforeEach(async () => {
  h = new Harness();
  expect((await h.reconcile()).result).toBe('applied');
  h.cfn.resetCalls();
});
afterEach(() => h.cleanup());

const maxPods = (n: number) => (raw: any) => {
  raw.spec.cloudConfig.values.maxPods = n;
};

test('the new checksum is recorded only after UPDATE_COMPLETE, never while the stack is in progress', async () => {
  // GIVEN a config change whose update takes three polls, and a look at the status file at every poll
  const old = h.status().cloudConfigChecksum;
  h.edit(EXAMPLE, maxPods(110));
  h.cfn.script(h.stackName(), complete(3));
  const seen: Array<{ stack: string; recorded?: string; progressing?: string }> = [];
  h.cfn.onPoll = (stack) => seen.push({ stack: stack.status, recorded: h.status().cloudConfigChecksum, progressing: h.condition('Progressing')?.status });

  // WHEN it is reconciled
  const outcome = await h.reconcile();

  // THEN while UPDATE_IN_PROGRESS the file holds the old checksum (and Progressing=True); after UPDATE_COMPLETE the new one
  expect(outcome.result).toBe('applied');
  expect(seen.map((s) => s.stack)).toEqual(['UPDATE_IN_PROGRESS', 'UPDATE_IN_PROGRESS', 'UPDATE_COMPLETE']);
  expect(seen.every((s) => s.recorded === old && s.progressing === 'True')).toBe(true);
  expect(h.status().cloudConfigChecksum).not.toBe(old);
  expect(h.status().cloudConfigChecksum).toBe(h.cfn.peek(h.stackName())?.outputs.ConfigChecksum);
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
  expect(h.status()).toMatchObject({ stackStatus: 'UPDATE_COMPLETE', observedGeneration: 2, failures: 0 });
  expect(h.status().cloudConfigChecksum).not.toBe(old.cloudConfigChecksum);
  expect(h.status().retryAfter).toBeUndefined();
  expect(h.condition('Ready')).toMatchObject({ status: 'True', reason: 'StackUpdated' });
});

test('a second failure is reported with its own resource, not the first failure found in the stack history', async () => {
  // GIVEN an update that failed on the launch template, at once (no event seen while waiting)
  h.edit(EXAMPLE, maxPods(110));
  h.cfn.script(h.stackName(), fail(LAUNCH_TEMPLATE_FAILURE, 0));
  expect((await h.reconcile()).result).toBe('failed');
  expect(h.condition('Failed')?.message).toContain(LAUNCH_TEMPLATE_FAILURE.reason);

  // WHEN another change fails, on the auto scaling group this time
  h.edit(EXAMPLE, maxPods(90));
  h.cfn.script(h.stackName(), fail(ASG_FAILURE, 0));
  expect((await h.reconcile()).result).toBe('failed');

  // THEN the message names the new cause only
  expect(h.condition('Failed')?.message).toContain(ASG_FAILURE.reason);
  expect(h.condition('Failed')?.message).not.toContain(LAUNCH_TEMPLATE_FAILURE.logicalId);
  expect(h.status().failures).toBe(2);
});

test('a stack stuck past waitTimeoutMs is waited on again, never updated a second time, then recorded', async () => {
  // GIVEN an update that does not finish within one pass's wait
  const old = h.status().cloudConfigChecksum;
  h.edit(EXAMPLE, maxPods(110));
  h.cfn.script(h.stackName(), stuck());
  expect(await h.reconcile()).toMatchObject({ result: 'waiting', requeueAfterMs: 10_000 });
  h.cfn.resetCalls();

  // WHEN the requeued pass runs while it is still in progress
  h.clock.advance(10_000);
  const again = await h.reconcile();

  // THEN it only waits: no change set, no execution, Progressing=True, old checksum
  expect(again).toMatchObject({ result: 'waiting', requeueAfterMs: 10_000 });
  expect(h.cfn.mutatingCalls()).toBe(0);
  expect(h.condition('Progressing')).toMatchObject({ status: 'True', reason: 'WaitingForStack' });
  expect(h.status().cloudConfigChecksum).toBe(old);

  // WHEN the operation finishes and the next passes run
  h.cfn.release(h.stackName());
  const results = [(await h.reconcile()).result, (await h.reconcile()).result];

  // THEN the executed change set is found, the live checksum recorded, and the update was executed once in all
  expect(results).toEqual(['applied', 'unchanged']);
  expect(h.cfn.count('createChangeSet', 'executeChangeSet')).toBe(0);
  expect(h.cfn.started.filter((o) => o.kind === 'update')).toHaveLength(1);
  expect(h.status().cloudConfigChecksum).toBe(h.cfn.peek(h.stackName())?.outputs.ConfigChecksum);
  expect(h.status().cloudConfigChecksum).not.toBe(old);
  expect(getCondition(h.status(), 'Ready')?.status).toBe('True');
});
