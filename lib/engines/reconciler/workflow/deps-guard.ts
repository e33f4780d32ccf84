import type { ReconcileContext, TaskName } from './context';
import type { DepKey, TaskContext } from './task-context';

// The runtime side of a task's declared dependencies (task-context.ts is the compile-time side): in the tests
// (test/setup-env.ts sets WORKER_STACKS_CHECK_DEPS=1), each task runs on a view of its reconcile's context whose
// `deps` throws on a dependency the task did not declare. The compiler already refuses such a read in a task's own
// code; the guard also catches one it cannot see (a cast, a helper typed on the whole context), so the declared lists
// are complete as the tests run them. Elsewhere a task gets the context itself: nothing is copied or wrapped.

const CHECKED = process.env.WORKER_STACKS_CHECK_DEPS === '1';

/** The context a task runs on: the reconcile's own, or (WORKER_STACKS_CHECK_DEPS=1) a view that checks its reads. */
export function taskView<D extends DepKey>(ctx: ReconcileContext, task: TaskName, deps: readonly D[]): TaskContext<D> {
  return CHECKED ? guardedContext(ctx, task, deps) : ctx;
}

/**
 * A view of `ctx` (its prototype is `ctx`: every member reads through to it, getters run against the view) whose
 * `deps` lets through the declared dependencies alone: reading another throws, naming the task and the dependency.
 */
export function guardedContext<D extends DepKey>(
  ctx: ReconcileContext,
  task: TaskName,
  deps: readonly D[],
): TaskContext<D> {
  // A test's bare context (Object.create(ReconcileContext.prototype)) has no dependencies to guard.
  if (!(ctx.deps as ReconcileContext['deps'] | undefined)) return ctx;
  const allowed = new Set<string | symbol>(deps);
  const refuse = (key: string | symbol): never => {
    throw new Error(
      `task ${task} read deps.${String(key)}, which it does not declare (its deps: ${[...deps].join(', ') || 'none'})`,
    );
  };
  const guarded = new Proxy(ctx.deps, {
    get: (target, key, receiver) =>
      typeof key === 'symbol' || allowed.has(key) ? (Reflect.get(target, key, receiver) as unknown) : refuse(key),
    has: (target, key) => (typeof key === 'symbol' || allowed.has(key) ? Reflect.has(target, key) : refuse(key)),
  });
  return Object.create(ctx, { deps: { value: guarded, enumerable: true } }) as ReconcileContext;
}
