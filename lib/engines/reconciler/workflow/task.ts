import type { ReconcileContext, TaskName } from './context';
import type { Outcome } from './outcomes';
import type { Found } from './state';
import type { DepKey, TaskContext } from './task-context';
import { taskView } from './deps-guard';

/**
 * One named step of a workflow. It reads the immutable context and the value the steps before it returned (`In`),
 * and either ends the reconcile (an Outcome) or adds its own typed value (`Out`, never with a `result`: that is an
 * Outcome) for the steps after it. `when` false skips it; a task with `when` therefore adds only optional fields.
 * It reads the dependencies it declares (`deps`) and no other: its context holds those alone (task-context.ts).
 */
export interface Task<In, Out extends object = never, D extends DepKey = never> {
  readonly name: TaskName;
  /** The dependencies this task reads, its helpers' included: its context's `deps` has these alone. */
  readonly deps: readonly D[];
  readonly when?: (ctx: TaskContext<D>, s: In) => boolean;
  // `void`: a task that adds nothing and does not end the reconcile returns nothing. It may be synchronous.
  // eslint-disable-next-line @typescript-eslint/no-invalid-void-type -- a task that adds nothing returns nothing
  readonly run: (ctx: TaskContext<D>, s: In) => Promise<Outcome | Out | void> | Outcome | Out | void;
}

/**
 * A task, its dependencies taken from its `deps` list (so the list is the one place they are said):
 * `task<Observed, RollKeyed>()({ name, deps: ['code'], run })`. `In` and `Out` are given, `D` is inferred.
 */
export function task<In, Out extends object = never>() {
  return <const D extends DepKey = never>(t: Task<In, Out, D>): Task<In, Out, D> => t;
}

/** A task of any shape (hooks, documentation, the runner). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any task, whatever it reads and adds: Task<unknown, never> would not accept them
export type AnyTask = Task<any, any, any>;

type Add<S, Out> = [Out] extends [never] ? S : S & Out;

/**
 * An ordered list of tasks whose types line up: `Workflow.from<Observed>().then(a).then(b)` compiles only when what
 * `b` needs is what the workflow's input and the tasks before it provide. `S` is what the workflow has found at
 * its end, for the workflow that follows.
 */
export class Workflow<In, S> {
  public static from<In>(): Workflow<In, In> {
    return new Workflow<In, In>([]);
  }

  // Phantom fields: two workflows of different types are different types.
  declare private readonly input: (s: In) => void;
  declare private readonly found: S;

  private constructor(public readonly tasks: readonly AnyTask[]) {}

  public then<Out extends object = never, D extends DepKey = never>(t: Task<S, Out, D>): Workflow<In, Add<S, Out>> {
    return new Workflow<In, Add<S, Out>>([...this.tasks, t]);
  }

  /** This workflow, then all of `next` (which starts from what this one found). */
  public concat<T>(next: Workflow<S, T>): Workflow<In, T> {
    return new Workflow<In, T>([...this.tasks, ...next.tasks]);
  }
}

/** An Outcome (it ends the reconcile), as opposed to what a task adds. */
export function isOutcome(x: unknown): x is Outcome {
  return typeof x === 'object' && x !== null && 'result' in x;
}

type HookFn = (ctx: ReconcileContext, task: TaskName, found: Found) => void | Promise<void>;

/** Hooks bound to a named task: `before(TASK.publish, fn)`. `'*'` binds to every task (logging, tests that crash on purpose). */
export interface Hook {
  readonly task: TaskName | '*';
  readonly phase: 'before' | 'after';
  readonly fn: HookFn;
}

export const before = (task: TaskName | '*', fn: HookFn): Hook => ({ task, phase: 'before', fn });
export const after = (task: TaskName | '*', fn: HookFn): Hook => ({ task, phase: 'after', fn });

/** Hooks on every task at once, as one object (logging, tests): the same as `before('*', …)` and `after('*', …)`. */
export interface WorkflowHooks {
  before?(task: TaskName, ctx: ReconcileContext, found: Found): void | Promise<void>;
  after?(task: TaskName, ctx: ReconcileContext, found: Found): void | Promise<void>;
}

export function toHooks(h: readonly Hook[] | WorkflowHooks | undefined): readonly Hook[] {
  if (!h) return [];
  if (isHookList(h)) return h;
  return [
    ...(h.before ? [before('*', (ctx, t, f) => h.before?.(t, ctx, f))] : []),
    ...(h.after ? [after('*', (ctx, t, f) => h.after?.(t, ctx, f))] : []),
  ];
}

function isHookList(h: readonly Hook[] | WorkflowHooks): h is readonly Hook[] {
  return Array.isArray(h);
}

/**
 * A value a task's `when` (or the workflow's choice) has made sure of: a missing one is a workflow that runs its tasks
 * in the wrong order, said as such rather than a TypeError further on.
 */
export function need<T>(value: T | null | undefined, what: string): T {
  if (value === undefined || value === null)
    throw new Error(`${what} is missing: the workflow ran a task without what it needs`);
  return value;
}

/** Where a run got to: the last task started, and what was found (the error path reads both). */
export interface Progress {
  task: TaskName | 'start';
  found: Found;
}

/**
 * Runs a workflow's tasks in order from `input`, with the hooks bound to each. Returns the Outcome that ended it, or
 * what it found. `progress` is kept up to date for the error path (an exception leaves it at the failing task).
 */
export async function runWorkflow<In extends Found, S>(
  w: Workflow<In, S>,
  ctx: ReconcileContext,
  input: In,
  hooks: readonly Hook[],
  progress: Progress,
): Promise<{ readonly outcome: Outcome } | { readonly found: S }> {
  let found: Found = input;
  for (const t of w.tasks) {
    const view = taskView(ctx, t.name, t.deps);
    if (t.when && !t.when(view, found)) continue;
    progress.task = t.name;
    progress.found = found;
    for (const h of hooks)
      if (h.phase === 'before' && (h.task === '*' || h.task === t.name)) await h.fn(ctx, t.name, found);
    const r: unknown = await t.run(view, found);
    if (r && !isOutcome(r)) found = progress.found = Object.freeze({ ...found, ...r });
    for (const h of hooks)
      if (h.phase === 'after' && (h.task === '*' || h.task === t.name)) await h.fn(ctx, t.name, found);
    if (isOutcome(r)) return { outcome: r };
  }
  return { found: found as S };
}
