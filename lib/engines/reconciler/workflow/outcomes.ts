import type { Reason } from './conditions';

/** What one reconcile of one cluster came to. */
export type Result =
  | 'unchanged'
  | 'applied'
  | 'no-changes'
  | 'invalid'
  | 'failed'
  | 'stalled'
  | 'transient'
  | 'waiting'
  | 'backoff'
  | 'dry-run'
  | 'conflict'
  | 'recorded'
  | 'paused'
  | 'held'
  | 'drifted'
  | 'deleted'
  | 'outdated';

export interface Outcome {
  readonly result: Result;
  /** Why a `transient` outcome is one (the Degraded condition's reason: Throttled, AwsUnavailable...), for the metrics. */
  readonly reason?: Reason;
  /** Ask to be reconciled again after this long (controller-runtime's RequeueAfter). */
  readonly requeueAfterMs?: number;
  readonly message?: string;
  /** The desired config checksum, when the object rendered. */
  readonly checksum?: string;
  /** What the fleet rollout gate decided for a roll (metrics per wave). */
  readonly rollout?: {
    readonly policy: string;
    readonly wave: string;
    readonly event: 'started' | 'held';
    readonly reason?: string;
    readonly waitedMs?: number;
  };
  /**
   * The workflow stopped before it looked at the stack (an invalid object, a template that does not render) while
   * the stack is in progress: the runtime looks again after `requeueAfterMs`, whatever the result, so that the slot
   * the roll holds goes back when the roll ends.
   */
  readonly stackInProgress?: boolean;
  /** What each pool's own stack came to, in the cluster's reconcile (a cluster with pools in stacks of their own). */
  readonly pools?: readonly { readonly pool: string; readonly result: Result; readonly message?: string }[];
}

/** How the runtime treats one reconcile result. */
export interface ResultClass {
  /**
   * `reconcile --once` waits for it: the cluster is looked at again after the requeue the outcome asks for (the daemon
   * honours every requeue asked for, a backoff or a hold's recheck included; `--once` does not wait hours for those).
   */
  readonly requeue: boolean;
  /** The cluster is settled on its desired config: the settled workflow (old config objects cleaned up) runs. */
  readonly settled: boolean;
  /** Something is wrong with the cluster: a pass with this result is not a good pass (metrics). */
  readonly error: boolean;
  /** Nothing was written and no stack moved: the fleet rollout need not look at the cluster again. */
  readonly quiet: boolean;
}

const c = (requeue: boolean, settled: boolean, error: boolean, quiet: boolean): ResultClass => ({
  requeue,
  settled,
  error,
  quiet,
});

/**
 * Every result, classified once. Typed over the Result union: a new result left out of this table does not compile,
 * so no part of the runtime can forget it.
 */
export const OUTCOMES: Readonly<Record<Result, ResultClass>> = {
  //            requeue settled error  quiet
  unchanged: c(false, true, false, true),
  applied: c(false, true, false, false),
  'no-changes': c(false, true, false, false),
  invalid: c(false, false, true, false),
  failed: c(false, false, true, false),
  stalled: c(false, false, true, false),
  transient: c(true, false, false, false),
  waiting: c(true, false, false, false),
  backoff: c(false, false, false, false),
  'dry-run': c(false, false, false, true),
  conflict: c(true, false, false, false),
  recorded: c(true, false, false, false),
  paused: c(false, false, false, true),
  held: c(false, false, false, true),
  drifted: c(false, false, false, false),
  deleted: c(false, false, false, false),
  outdated: c(false, false, true, false),
};
