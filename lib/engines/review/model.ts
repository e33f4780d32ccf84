import { ConfigDiff } from './config-diff';
import { RolloutSummary } from './rollout-words';
import { TemplateChanges } from './template-diff';

/**
 * The result of a review, as `--format json` prints it. The JSON Schema of
 * this shape is review.schema.json beside this file; a change to it is a
 * change of `schemaVersion`.
 */
export const REVIEW_SCHEMA_VERSION = 3;

/**
 * - `unchanged`: the stack's template and config are identical;
 * - `changes`: the stack changes, no instance is replaced;
 * - `rolls`: the launch template (or configuration) changes: the rolling update replaces every node;
 * - `added` / `removed`: the cluster is new / gone (a removed cluster's stack is NOT deleted);
 * - `renamed`: a removed and an added cluster have the same spec (detected heuristically);
 * - `invalid`: the object is refused at head (validation or synthesis): nothing of it can deploy;
 * - `fixed`: the object was refused at base and is valid at head (there is no base stack to diff with).
 */
export type ClusterStatus = 'unchanged' | 'changes' | 'rolls' | 'added' | 'removed' | 'renamed' | 'invalid' | 'fixed';

/** Every status, in the order the JSON summary lists them. */
export const CLUSTER_STATUSES: readonly ClusterStatus[] = [
  'unchanged',
  'changes',
  'rolls',
  'added',
  'removed',
  'renamed',
  'invalid',
  'fixed',
];

/**
 * How the head template replaces the nodes: strategy (AutoScalingRollingUpdate or AutoScalingInstanceRefresh), batch,
 * the gate (node signals, or the refresh's health and alarms) and whether terminating nodes are drained.
 */
export type RollingUpdate = RolloutSummary;

export interface Capacity {
  readonly min: number | null;
  readonly max: number | null;
  /** Only when the object sets it; otherwise a deploy keeps the group's current size. */
  readonly desired: number | null;
}

/**
 * What a change does to one pool:
 * - `rolls`: its launch template (or a group property that triggers the rolling update) changes: its nodes are replaced;
 * - `changes`: its stack changes in place, no node is replaced;
 * - `added` / `removed`: the pool is new (its stack is created) / gone from the object (the reconciler deletes its stack,
 *   and its nodes with it: a roll of that pool; only a removed cluster object's pools keep their stacks);
 * - `unchanged`: its launch template and node config are the same.
 */
export type PoolStatus = 'unchanged' | 'changes' | 'rolls' | 'added' | 'removed';

/** One pool of a cluster: which stack holds it, whether it rolls, and why (its own checksum, its own config diff). */
export interface PoolReview {
  readonly name: string;
  /** `WorkerStack-<cluster>` for the pool `default`, `WorkerStack-<cluster>-Pool-<name>` for every other pool. */
  readonly stackName: string;
  /** It lives in the cluster's shared stack (the pool `default`): its template diff is the cluster's `template`. */
  readonly shared: boolean;
  readonly status: PoolStatus;
  /** Its nodes go: replaced (`rolls`), or terminated with its stack (`removed` from an object that stays). */
  readonly rolls: boolean;
  /** One line: why it rolls, or why not. */
  readonly why: string;
  readonly rollReasons: readonly string[];
  readonly checksum: { readonly base: string | null; readonly head: string | null };
  readonly capacity: Capacity | null;
  /** Its own stack's template diff (null for the shared stack's pool, and for a removed pool). */
  readonly template: Omit<TemplateChanges, 'empty'> | null;
  /**
   * Its node config, file by file; null when its checksum did not change, and for the shared stack's pool (whose
   * diff is the cluster's `config`).
   */
  readonly config: ConfigDiff | null;
}

export interface ClusterReview {
  readonly name: string;
  readonly stackName: string;
  readonly status: ClusterStatus;
  /** One line: what the change does to the cluster's nodes. */
  readonly verdict: string;
  /**
   * False when the cluster's object, the templates it uses and the code are
   * byte-identical at base and head: it is unchanged by construction and was
   * not synthesized (its checksums, capacity and template are then null).
   */
  readonly synthesized: boolean;
  readonly renamedFrom: string | null;
  /** Why the nodes roll, or go with a removed pool's stack (empty unless status is `rolls`). */
  readonly rollReasons: readonly string[];
  /** For `rolls` (but one that only removes pools), `added` and `renamed`; null otherwise. */
  readonly rollingUpdate: RollingUpdate | null;
  readonly capacity: Capacity | null;
  readonly checksum: { readonly base: string | null; readonly head: string | null };
  /** The template diff; its text is the `cdk diff` output without colours. Null when there is nothing to diff (removed). */
  readonly template: Omit<TemplateChanges, 'empty'> | null;
  /** The big config, file by file; null when the checksum did not change. */
  readonly config: ConfigDiff | null;
  /** What the app refused, side by side (`file: field path: rule` lines); empty where the object is valid. */
  readonly problems: { readonly base: readonly string[]; readonly head: readonly string[] };
  /** Anything else worth saying (what removal means, a bootstrap stack to deploy first). */
  readonly notes: readonly string[];
  /**
   * Every pool, each on its own (schemaVersion 3): a single-pool cluster has one, `default`, in its shared stack.
   * Empty when the cluster was not synthesized or is invalid at head.
   */
  readonly pools: readonly PoolReview[];
}

export interface ReviewResult {
  readonly schemaVersion: typeof REVIEW_SCHEMA_VERSION;
  readonly base: { readonly ref: string; readonly commit: string };
  readonly head: { readonly ref: 'working tree'; readonly commit: string | null };
  readonly summary: Readonly<Record<ClusterStatus, number>> & { readonly clusters: number };
  /** What was synthesized: the cost of a review grows with what changed, not with the fleet. */
  readonly synthesis: {
    /** Whether the code (bin/, lib/, package files, cdk.json) differs, so that every cluster was synthesized; null when not compared. */
    readonly codeChanged: boolean | null;
    /** Templates whose files differ (`*`: shared files, every template); null when not compared. */
    readonly templatesChanged: readonly string[] | null;
    /** Cluster objects synthesized (or refused) at base and at head. */
    readonly base: number;
    readonly head: number;
    /** Clusters not synthesized: their inputs are byte-identical at base and head. */
    readonly skipped: number;
  };
  /** Sorted by name. */
  readonly clusters: readonly ClusterReview[];
  /** The waves the clusters whose nodes roll go in, by the head's rollout policies (absent: no policy). */
  readonly rollout?: RolloutPlan;
}

export type { ConfigDiff };
import type { RolloutPlan } from './rollout-plan';
