// What a named rule of a WorkerCluster is (rule-registry.ts holds them).

/** How the CRD states a rule: in CEL (lib/platform/kube), in part, or not at all, and why not. */
export type CelTwin = 'crd' | { readonly partly: string } | { readonly none: string };

/** One named rule. */
export interface ClusterRule {
  /** kebab-case, unique: what `(rule <id>)` in a message names. */
  readonly id: string;
  /**
   * The fields it reports at, as schema paths (`spec.pools[]` is each item of spec.pools); a field of another kind of
   * object is prefixed with its kind (`WorkerImageChannel spec.holds[]`).
   */
  readonly paths: readonly string[];
  /** What it requires, in one sentence, for the reference. */
  readonly says: string;
  /** Whether the API server refuses what it refuses (the CRD's CEL), and why not where it cannot. */
  readonly cel: CelTwin;
}
