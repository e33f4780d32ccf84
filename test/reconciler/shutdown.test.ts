import { runDaemon } from '../../lib/reconciler/daemon';
import { Controller } from '../../lib/reconciler/controller';
import { stuck } from '../fakes/fake-cloudformation';
import { Harness } from '../fakes/harness';

/** SIGTERM while a stack operation is under way: stop waiting at once, write what is in hand, resume on the next start. */

let h: Harness;
afterEach(() => h.cleanup());

/** One cluster whose stack never finishes, waits that never time out, and a shutdown (abort) soon after the 2nd poll. */
function stuckStackStoppedAfterTwoPolls() {
  h = new Harness({ waitTimeoutMs: Number.POSITIVE_INFINITY });
  h.cfn.setDefault(h.stackName(), stuck());
  const abort = new AbortController();
  let polls = 0;
  h.cfn.onPoll = () => {
    if (++polls === 2) setTimeout(() => abort.abort(), 10);
  };
  return { abort, polls: () => polls };
}

test('an abort during the wait ends the reconcile at once as "waiting", with Progressing recorded; the next start resumes without a second update', async () => {
  // GIVEN a new cluster whose stack creation takes (much) longer than one wait, and a shutdown after 3 polls
  h = new Harness({ waitTimeoutMs: 3_600_000 });
  h.cfn.setDefault(h.stackName(), stuck());
  const abort = new AbortController();
  let polls = 0;
  h.cfn.onPoll = () => {
    if (++polls === 3) abort.abort();
  };

  // WHEN one reconcile runs with that shutdown signal
  const started = h.clock.ms;
  const outcome = await h.reconcile(undefined, {}, h.deps({ signal: abort.signal }));

  // THEN it stopped waiting right after the abort (not at the one-hour wait timeout) and asked to be requeued
  expect(outcome.result).toBe('waiting');
  expect(outcome.requeueAfterMs).toBeGreaterThan(0);
  expect(polls).toBe(3);
  expect(h.clock.ms - started).toBeLessThan(60_000);
  // AND the status says the stack is being waited on; no checksum is recorded for a stack that is not live
  expect(h.condition('Progressing')).toMatchObject({ status: 'True', reason: 'WaitingForStack' });
  expect(h.status().stackStatus).toBe('CREATE_IN_PROGRESS');
  expect(h.status().cloudConfigChecksum).toBeUndefined();
  expect(h.cfn.count('executeChangeSet')).toBe(1);

  // WHEN the stack finishes and a restarted process (no signal) reconciles again
  h.cfn.onPoll = undefined;
  h.cfn.release(h.stackName());
  const resumed = await h.reconcile();

  // THEN it waited and recorded, without creating or executing anything again
  expect(['recorded', 'applied']).toContain(resumed.result);
  expect(h.cfn.count('executeChangeSet')).toBe(1);
  expect(h.cfn.count('createChangeSet')).toBe(1);
  expect(h.status().stackStatus).toBe('CREATE_COMPLETE');
});

test('the daemon returns within the grace period when aborted mid-wait, instead of waiting for the stack', async () => {
  // GIVEN a daemon over one cluster whose stack never finishes, waits that never time out, and an abort after 2 polls
  const { abort } = stuckStackStoppedAfterTwoPolls();
  const deps = h.deps({ signal: abort.signal });

  // WHEN it runs until that abort
  const t0 = Date.now();
  await runDaemon(new Controller(deps), deps, abort.signal, { graceMs: 5_000 });

  // THEN it returned promptly, having written the in-progress state
  expect(Date.now() - t0).toBeLessThan(5_000);
  expect(h.condition('Progressing')).toMatchObject({ status: 'True', reason: 'WaitingForStack' });
  expect(h.cfn.count('executeChangeSet')).toBe(1);
}, 20_000);

test('work that does not see the signal gets the grace period, then the daemon returns anyway', async () => {
  // GIVEN a daemon whose reconciles never see the shutdown signal (as in a step that cannot be interrupted)
  const { abort, polls } = stuckStackStoppedAfterTwoPolls();
  const deps = h.deps();

  // WHEN it is stopped with a 300 ms grace period
  const t0 = Date.now();
  await runDaemon(new Controller(deps), deps, abort.signal, { graceMs: 300 });
  const took = Date.now() - t0;
  h.cfn.release(h.stackName()); // lets the abandoned wait end, so the test leaves nothing running

  // THEN it returned after the grace period, not after the stack
  expect(took).toBeGreaterThanOrEqual(250);
  expect(took).toBeLessThan(5_000);
  expect(polls()).toBeGreaterThan(2);
}, 20_000);
