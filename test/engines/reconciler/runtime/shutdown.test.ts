import { TASK } from '../../../../lib/engines/reconciler/workflow/context';
import { Controller } from '../../../../lib/engines/reconciler/runtime/controller';
import { runDaemon } from '../../../../lib/engines/reconciler/runtime/daemon';
import { before } from '../../../../lib/engines/reconciler/workflow/task';
import { stuck } from '../../../fakes/fake-cloudformation';
import { Harness } from '../../../fakes/harness';

/**
 * Shutdown while a stack operation is under way: a reconcile never waits on a stack, so a stop is prompt, what is in
 * hand is written, and the next start resumes from the live stack without a second update.
 */

let h: Harness;
/** What a test leaves running (a clock timer, a held step) is stopped here, pass or fail. */
const stops: Array<() => void> = [];
afterEach(() => {
  for (const stop of stops.splice(0)) stop();
  h.cleanup();
});

/** Requeues after 20 ms of real time, so the daemon's work queue looks at the stack again within the test. */
const POLL_MS = 20;

/** A daemon runs in real time: the fake clock (stacks, listings' age, backoff) follows it. Returns a stop function. */
function clockFollowsRealTime(): () => void {
  let last = Date.now();
  const timer = setInterval(() => {
    const now = Date.now();
    h.cfn.advance(now - last);
    last = now;
  }, 5);
  const stop = () => clearInterval(timer);
  stops.push(stop);
  return stop;
}

test('a reconcile returns as soon as the change set is executed, with Progressing recorded; a restarted process resumes without a second update', async () => {
  // GIVEN a new cluster whose stack creation takes (much) longer than anyone would wait
  h = new Harness({ waitTimeoutMs: 3_600_000 });
  h.cfn.setDefault(h.stackName(), stuck());

  // WHEN one reconcile runs
  const started = h.clock.ms;
  const outcome = await h.step();

  // THEN it returned without any time passing, asking to look again after one poll interval
  expect(outcome).toMatchObject({ result: 'waiting', requeueAfterMs: 5000 });
  expect(h.clock.ms).toBe(started);
  expect(h.cfn.peek(h.stackName())?.status).toBe('CREATE_IN_PROGRESS');
  // AND the status says our change set is executing; no checksum is recorded for a stack that is not live
  expect(h.condition('Progressing')).toMatchObject({ status: 'True', reason: 'ChangeSetExecuting' });
  expect(h.status().cloudConfigChecksum).toBeUndefined();
  expect(h.status().controller?.executing).toBeDefined();
  expect(h.cfn.count('executeChangeSet')).toBe(1);

  // WHEN the requeued reconcile looks again while the stack is still in progress
  h.cfn.resetCalls();
  h.cfn.advance(outcome.requeueAfterMs!);
  const again = await h.step();

  // THEN it only looked (one describe) and recorded what it saw
  expect(again).toMatchObject({ result: 'waiting', requeueAfterMs: 5000 });
  expect(Object.fromEntries(h.cfn.calls)).toEqual({ describeStack: 1 });
  expect(h.status().stackStatus).toBe('CREATE_IN_PROGRESS');
  expect(h.condition('Progressing')).toMatchObject({ status: 'True', reason: 'ChangeSetExecuting' });

  // WHEN the stack finishes and a restarted process (fresh deps and store) reconciles
  h.cfn.release(h.stackName());
  h.cfn.resetCalls();
  const resumed = await h.reconcile();

  // THEN it recorded what the stack reports, without creating or executing anything again
  expect(resumed.result).toBe('applied');
  expect(h.cfn.mutatingCalls()).toBe(0);
  expect(h.cfn.started).toEqual([{ stackName: h.stackName(), kind: 'create' }]);
  expect(h.status().stackStatus).toBe('CREATE_COMPLETE');
  expect(h.status().cloudConfigChecksum).toBe(h.cfn.peek(h.stackName())?.outputs.ConfigChecksum);
  expect(h.condition('Ready')).toMatchObject({ status: 'True', reason: 'StackCreated' });
});

test('a daemon stopped while a stack is in progress returns promptly; the next start resumes without a second update', async () => {
  // GIVEN a daemon over one cluster whose stack never finishes by itself, stopped once a worker has looked at the
  // stack in progress (the first pass executed the change set; the requeue came back)
  h = new Harness({ waitTimeoutMs: Number.POSITIVE_INFINITY });
  h.cfn.setDefault(h.stackName(), stuck());
  const abort = new AbortController();
  const deps = h.deps({ pollMs: POLL_MS });
  const results: string[] = [];

  // WHEN it runs until that stop
  const t0 = Date.now();
  let stopClock = clockFollowsRealTime();
  await runDaemon(new Controller(deps), deps, abort.signal, {
    graceMs: 5_000,
    onOutcome: (_name, result) => {
      results.push(result);
      // the first pass's execute, then a worker's look at the stack in progress (the first pass goes through the queue too)
      if (results.filter((r) => r === 'waiting').length === 2) abort.abort();
    },
  }).finally(stopClock);

  // THEN it returned promptly (well within the grace period), having written the in-progress state
  expect(Date.now() - t0).toBeLessThan(5_000);
  expect(results).toEqual(['waiting', 'waiting']);
  expect(h.cfn.peek(h.stackName())?.status).toBe('CREATE_IN_PROGRESS');
  expect(h.status().stackStatus).toBe('CREATE_IN_PROGRESS');
  expect(h.condition('Progressing')).toMatchObject({ status: 'True', reason: 'ChangeSetExecuting' });
  expect(h.status().cloudConfigChecksum).toBeUndefined();
  expect(h.cfn.count('executeChangeSet')).toBe(1);

  // WHEN the stack finishes, and a new daemon (fresh deps, store and controller) starts and runs until the cluster is recorded
  h.cfn.release(h.stackName());
  const restart = new AbortController();
  const restartedDeps = h.deps({ pollMs: POLL_MS });
  const t1 = Date.now();
  stopClock = clockFollowsRealTime();
  await runDaemon(new Controller(restartedDeps), restartedDeps, restart.signal, {
    graceMs: 5_000,
    onPass: () => restart.abort(),
  }).finally(stopClock);

  // THEN it recorded the live stack, without a second change set or execution
  expect(Date.now() - t1).toBeLessThan(5_000);
  expect(h.cfn.count('createChangeSet')).toBe(1);
  expect(h.cfn.count('executeChangeSet')).toBe(1);
  expect(h.cfn.started).toHaveLength(1);
  expect(h.status().stackStatus).toBe('CREATE_COMPLETE');
  expect(h.status().cloudConfigChecksum).toBe(h.cfn.peek(h.stackName())?.outputs.ConfigChecksum);
  expect(h.condition('Ready')).toMatchObject({ status: 'True', reason: 'StackCreated' });
}, 20_000);

test('work in hand that does not end gets the grace period, then the daemon returns anyway', async () => {
  // GIVEN a daemon whose worker, looking again at a stack in progress, is stuck in a step that cannot be interrupted
  // (held by a hook), and a stop requested from inside that step
  h = new Harness({ waitTimeoutMs: Number.POSITIVE_INFINITY });
  h.cfn.setDefault(h.stackName(), stuck());
  const abort = new AbortController();
  const deps = h.deps({ pollMs: POLL_MS });
  let unblock!: () => void;
  const blocked = new Promise<void>((r) => (unblock = r));
  let waitsEntered = 0;
  const hooks = [
    before(TASK.wait, async () => {
      waitsEntered++;
      abort.abort();
      await blocked;
    }),
  ];
  stops.push(unblock);

  // WHEN it is stopped with a 300 ms grace period
  const t0 = Date.now();
  clockFollowsRealTime();
  const returned = await Promise.race([
    runDaemon(new Controller(deps, { hooks }), deps, abort.signal, { graceMs: 300 }).then(() => true),
    sleep(5_000).then(() => false),
  ]);
  const took = Date.now() - t0;

  // THEN it returned after the grace period, not after the held step (nor the stack)
  expect(waitsEntered).toBe(1);
  expect(returned).toBe(true);
  expect(took).toBeGreaterThanOrEqual(250);
  expect(took).toBeLessThan(5_000);
}, 20_000);

/** Resolves after `ms`; its timer is cleared after the test. */
function sleep(ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  stops.push(() => clearTimeout(timer));
  return new Promise((r) => (timer = setTimeout(r, ms)));
}
