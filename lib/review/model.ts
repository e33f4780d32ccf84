import { ConfigDiff } from './config-diff';
import { ResourceChange, TemplateChanges } from './template-diff';

/**
 * The result of a review, as `--format json` prints it. The JSON Schema of
 * this shape is review.schema.json beside this file; a change to it is a
 * change of `schemaVersion`.
 */
export const REVIEW_SCHEMA_VERSION = 1;

/**
 * - `unchanged`: the stack's template and config are identical;
 * - `changes`: the stack changes, no instance is replaced;
 * - `rolls`: the launch template (or configuration) changes: the rolling update replaces every node;
 * - `added` / `removed`: the cluster is new / gone (a removed cluster's stack is NOT deleted);
 * - `renamed`: a removed and an added cluster have the same spec (detected heuristically).
 */
export type ClusterStatus = 'unchanged' | 'changes' | 'rolls' | 'added' | 'removed' | 'renamed';

/** The AutoScalingRollingUpdate policy of the head template: how the nodes would be replaced. */
export interface RollingUpdate {
  readonly maxBatchSize: number | null;
  readonly minInstancesInService: number | null;
  readonly pauseTime: string | null;
  readonly waitOnResourceSignals: boolean;
}

export interface Capacity {
  readonly min: number | null;
  readonly max: number | null;
  /** Only when the object sets it; otherwise a deploy keeps the group's current size. */
  readonly desired: number | null;
}

export interface ClusterReview {
  readonly name: string;
  readonly stackName: string;
  readonly status: ClusterStatus;
  /** One line: what the change does to the cluster's nodes. */
  readonly verdict: string;
  readonly renamedFrom: string | null;
  /** Why the nodes roll (empty unless status is `rolls`). */
  readonly rollReasons: readonly string[];
  /** For `rolls`, `added` and `renamed`; null otherwise. */
  readonly rollingUpdate: RollingUpdate | null;
  readonly capacity: Capacity | null;
  readonly checksum: { readonly base: string | null; readonly head: string | null };
  /** The template diff; its text is the `cdk diff` output without colours. Null when there is nothing to diff (removed). */
  readonly template: Omit<TemplateChanges, 'empty'> | null;
  /** The big config, file by file; null when the checksum did not change. */
  readonly config: ConfigDiff | null;
  /** Anything else worth saying (what removal means, a bootstrap stack to deploy first). */
  readonly notes: readonly string[];
}

export interface ReviewResult {
  readonly schemaVersion: typeof REVIEW_SCHEMA_VERSION;
  readonly base: { readonly ref: string; readonly commit: string };
  readonly head: { readonly ref: 'working tree'; readonly commit: string | null };
  readonly summary: Readonly<Record<ClusterStatus, number>> & { readonly clusters: number };
  /** Sorted by name. */
  readonly clusters: readonly ClusterReview[];
}

export type { ConfigDiff, ResourceChange };
