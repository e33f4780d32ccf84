import { ClusterRecord } from '../../../../lib/model/ports/cluster-store';
import { ReconcileContext, ReconcilerDeps, TASK } from '../../../../lib/engines/reconciler/workflow/context';
import { guardedContext } from '../../../../lib/engines/reconciler/workflow/deps-guard';
import { PendingStatus } from '../../../../lib/engines/reconciler/workflow/status-recorder';
import { Found, Observed, Start } from '../../../../lib/engines/reconciler/workflow/state';
import { Progress, runWorkflow, task, Workflow } from '../../../../lib/engines/reconciler/workflow/task';
import { recordFailure, RECORD_FAILURE_DEPS } from '../../../../lib/engines/reconciler/tasks/record-outcome';

/**
 * Issue 34: each task reads the dependencies it declares and no other. The compiler refuses an undeclared read in a
 * task's code (its context's `deps` holds the declared ones alone); in the tests the runner's guard refuses one at
 * runtime too, so the declared lists are complete for what the tests run.
 */

const log = { info: () => undefined, warn: () => undefined, error: () => undefined, child: () => log };
const deps = { pollMs: 7, dryRun: false, code: 'c', images: () => undefined } as unknown as ReconcilerDeps;
const context = () =>
  new ReconcileContext({ name: 'a', raw: {} } as ClusterRecord, {} as PendingStatus, deps, undefined, undefined, 'v');
/** A read whose value the task does not use (it is kept, as a read is all the test needs). */
const reads: unknown[] = [];
const read = (value: unknown): void => void reads.push(value);
const start = (): Start => Object.freeze({ log });
const progress = (): Progress => ({ task: 'start', found: start() });

test('the compiler refuses a task that reads a dependency it did not declare, itself or through a helper', () => {
  // GIVEN/WHEN/THEN: each line marked below must fail to compile (`npm test` runs tsc first); a line that compiles is an error there
  const tasks = [
    task<Found>()({
      name: TASK.wait,
      deps: ['pollMs'],
      // @ts-expect-error dryRun is not declared
      run: (ctx) => read(ctx.deps.dryRun),
    }),
    task<Found>()({
      name: TASK.wait,
      deps: ['dryRun'],
      // @ts-expect-error the context's pollMs reads deps.pollMs, which is not declared
      run: (ctx) => read(ctx.pollMs),
    }),
    task<Found>()({
      name: TASK.wait,
      deps: [],
      // @ts-expect-error derivedKey reads code and images
      when: (ctx) => ctx.derivedKey !== undefined,
      run: () => undefined,
    }),
    task<Observed>()({
      name: TASK.recover,
      deps: ['maxUpdateAttempts', 'now'],
      // @ts-expect-error recordFailure also reads the backoff
      run: (ctx, o) => recordFailure(ctx, o, 'ReconcileFailed', 'x'),
    }),
  ];
  // What is declared compiles, the context's own members and a helper's list included.
  const declared = task<Observed>()({
    name: TASK.recover,
    deps: [...RECORD_FAILURE_DEPS, 'pollMs', 'code', 'images'],
    when: (ctx) => ctx.pollMs > 0 && ctx.derivedKey !== '',
    run: (ctx, o) => recordFailure(ctx, o, 'ReconcileFailed', 'x'),
  });
  expect([...tasks.map((t) => t.deps), declared.deps]).toEqual([
    ['pollMs'],
    ['dryRun'],
    [],
    ['maxUpdateAttempts', 'now'],
    ['maxUpdateAttempts', 'backoff', 'now', 'pollMs', 'code', 'images'],
  ]);
});

test("a task's guarded context lets its declared dependencies through, and throws on any other", () => {
  // GIVEN a context, and the view of it a task that declares pollMs and images gets
  const ctx = context();
  const view = guardedContext(ctx, TASK.execute, ['pollMs', 'images']);

  // WHEN/THEN the declared ones read through, the context's own members too (pollMs reads deps.pollMs)
  expect(view.deps.pollMs).toBe(7);
  expect(view.pollMs).toBe(7);
  expect(view.record).toBe(ctx.record);
  // …and an undeclared one throws, naming the task, the dependency and what the task declares
  const undeclared = view as unknown as ReconcileContext;
  expect(() => undeclared.deps.dryRun).toThrow(
    'task execute read deps.dryRun, which it does not declare (its deps: pollMs, images)',
  );
  expect(() => 'code' in undeclared.deps).toThrow('deps.code');
  expect(() => undeclared.derivedKey).toThrow('deps.code');
});

test('the image pins a reconcile read first are the same through every task view (what pinsMoved compares with)', () => {
  // GIVEN a context whose pins change after a first task read them through its view
  let pins = { a: 1 };
  const ctx = new ReconcileContext(
    { name: 'a', raw: {} } as ClusterRecord,
    {} as PendingStatus,
    { ...deps, images: () => pins } as unknown as ReconcilerDeps,
    undefined,
    undefined,
  );
  const first = guardedContext(ctx, TASK.validate, ['images']).images;
  pins = { a: 2 };

  // WHEN a later task reads them through its own view, and the context itself
  const later = guardedContext(ctx, TASK.execute, ['images']);

  // THEN both see the pins of the first read
  expect(first).toEqual({ a: 1 });
  expect(later.images).toBe(first);
  expect(ctx.images).toBe(first);
});

test('the runner runs each task on its guarded view in the tests: a read it did not declare fails the task', async () => {
  // GIVEN a task that reads an undeclared dependency where the compiler cannot see it (a cast)
  expect(process.env.WORKER_STACKS_CHECK_DEPS).toBe('1');
  const sneaky = task<Found>()({
    name: TASK.observe,
    deps: ['pollMs'],
    run: (ctx) => read((ctx as unknown as ReconcileContext).deps.dryRun),
  });
  const honest = task<Found>()({ name: TASK.wait, deps: ['pollMs'], run: (ctx) => read(ctx.pollMs) });

  // WHEN each runs in a workflow
  const p = progress();
  const ok = await runWorkflow(Workflow.from<Found>().then(honest), context(), start(), [], progress());
  const failed = runWorkflow(Workflow.from<Found>().then(honest).then(sneaky), context(), start(), [], p);

  // THEN the declared read runs, the undeclared one throws at the failing task
  expect(ok).toEqual({ found: start() });
  await expect(failed).rejects.toThrow('task observe read deps.dryRun, which it does not declare (its deps: pollMs)');
  expect(p.task).toBe(TASK.observe);
});
