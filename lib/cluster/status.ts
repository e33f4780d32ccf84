/**
 * The status of a cluster object, written only by the reconciler. It follows
 * the Kubernetes API conventions: conditions with CamelCase reasons,
 * lastTransitionTime that moves only when a condition's status changes, and
 * observedGeneration.
 */
export type ConditionType = 'Ready' | 'Progressing' | 'Failed';
export type ConditionStatus = 'True' | 'False' | 'Unknown';

export interface Condition {
  readonly type: ConditionType;
  readonly status: ConditionStatus;
  /** CamelCase, machine-readable. */
  readonly reason: string;
  /** For people: what happened and what to do. */
  readonly message: string;
  /** ISO 8601; changes only when `status` changes. */
  readonly lastTransitionTime: string;
  readonly observedGeneration: number;
}

export interface ClusterStatus {
  /** SHA-256 of the node config that is live on the stack. Only ever set after a *_COMPLETE. */
  readonly cloudConfigChecksum?: string;
  /** Generation of the spec that the live stack reflects. */
  readonly observedGeneration?: number;
  readonly stackName?: string;
  readonly stackId?: string;
  /** Last stack status the reconciler saw. */
  readonly stackStatus?: string;
  /** Fingerprint of the inputs (code, spec, config) last applied successfully. */
  readonly inputsFingerprint?: string;
  readonly conditions: readonly Condition[];
  /** Consecutive failed attempts, for backoff. */
  readonly failures?: number;
  /** Do not retry the same inputs before this time (ISO 8601). */
  readonly retryAfter?: string;
  /** Fingerprint of the inputs the failures were for (new inputs are tried at once). */
  readonly failedFingerprint?: string;
  /** Short digest per file and unit of the live config, so a roll can say what changed. */
  readonly configDigests?: Readonly<Record<string, string>>;
  /** What changed in the config of the roll in progress or last applied. */
  readonly lastConfigChange?: string;
  /** Recovery attempts (ContinueUpdateRollback, delete-and-recreate) for the current failure. */
  readonly recoveryAttempts?: number;
  /**
   * Key of the object's bytes, the templates and the code that were last applied (see DerivedCache): while it
   * still matches and the stack is settled, a pass skips validation, rendering and everything after.
   */
  readonly appliedInputsKey?: string;
}

export const EMPTY_STATUS: ClusterStatus = { conditions: [] };

export interface ConditionInput {
  readonly type: ConditionType;
  readonly status: ConditionStatus;
  readonly reason: string;
  readonly message: string;
}

/** Sets one condition; keeps lastTransitionTime when the status did not change. Returns a new list, sorted by type. */
export function setCondition(conditions: readonly Condition[], c: ConditionInput, generation: number, now: Date): Condition[] {
  const old = conditions.find((x) => x.type === c.type);
  const lastTransitionTime = old && old.status === c.status ? old.lastTransitionTime : now.toISOString();
  const next: Condition = { ...c, lastTransitionTime, observedGeneration: generation };
  return [...conditions.filter((x) => x.type !== c.type), next].sort((a, b) => (a.type < b.type ? -1 : 1));
}

export function setConditions(conditions: readonly Condition[], cs: readonly ConditionInput[], generation: number, now: Date): Condition[] {
  return cs.reduce<Condition[]>((acc, c) => setCondition(acc, c, generation, now), [...conditions]);
}

export function getCondition(status: ClusterStatus | undefined, type: ConditionType): Condition | undefined {
  return status?.conditions.find((c) => c.type === type);
}
