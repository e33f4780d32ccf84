import type { ReconcileContext, ReconcilerDeps } from './context';

// What a task sees of its reconcile (issue 34: every task saw all 25 dependencies). A task declares the dependencies
// it reads (Task's `deps`), and its context holds those alone: reading one it did not declare does not compile, and
// the list is what it reads (docs/design.md's table is made from these lists; in the tests a guard checks them at
// runtime, deps-guard.ts). The object is the reconcile's one context: the narrowing is in the types.

/** A dependency of a reconcile, by name. */
export type DepKey = keyof ReconcilerDeps;

/**
 * The context's own members that read dependencies, and what each reads: a task has the member only when it declares
 * all of them (a task asking ctx.pollMs reads deps.pollMs as surely as one that reads it itself).
 */
interface ContextReads {
  readonly pollMs: 'pollMs';
  readonly images: 'images';
  readonly pinsMoved: 'images';
  readonly derivedKey: 'code' | 'images';
  readonly start: 'log';
}

type Readers<D extends DepKey> = {
  readonly [K in keyof ContextReads as ContextReads[K] extends D ? K : never]: ReconcileContext[K];
};

/**
 * The context of a task that reads the dependencies `D`: the reconcile's inputs as they are (the object, the status
 * recorder, the stack unit, the clients, the listing), its dependencies narrowed to `D`, and of the context's members
 * that read dependencies, those whose dependencies are in `D`. A helper a task calls takes the TaskContext of what it
 * reads; a task's context is that of any subset of its dependencies.
 */
export type TaskContext<D extends DepKey> = Omit<ReconcileContext, 'deps' | keyof ContextReads> &
  Readers<D> & { readonly deps: Pick<ReconcilerDeps, D> };

/** The union of a list of dependency names (a helper's list, spread into the `deps` of the tasks that call it). */
export type DepsOf<L extends readonly DepKey[]> = L[number];
