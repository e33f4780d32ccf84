/**
 * Events on a WorkerRolloutPolicy (`kubectl describe wrp fleet`): the moments of a fleet rollout an operator follows,
 * one per change of a wave's phase as the daemon sees it (lib/engines/rollout/wave-watch.ts), and a pause or a resume. The
 * Kubernetes store posts them on the policy object; every store also logs them as JSON lines (`event` is the reason).
 * The cluster's own events (a roll held, started, complete) stay on the cluster (lib/engines/reconciler/workflow/events.ts).
 */
export const POLICY_EVENT_REASONS = {
  WaveStarted: 'the first roll of a wave started (or a halted wave rolls again)',
  WaveSoaking:
    "every roll of a wave is done; it soaks (the message says until when) before the next wave's rolls start",
  WaveSettled: 'every cluster of a wave is settled on its new config and soaked; the next wave may start',
  WaveHalted:
    'a roll of the wave, or of an earlier one, failed: nothing more of it starts until that is fixed (a Warning)',
  RolloutPaused: 'spec.paused was set: no roll of the policy starts (rolls under way finish)',
  RolloutResumed: 'spec.paused was removed: held rolls start as the waves allow',
} as const;

export type PolicyEventReason = keyof typeof POLICY_EVENT_REASONS;

/** Reasons that are warnings: someone has to act. */
export const POLICY_WARNINGS: ReadonlySet<PolicyEventReason> = new Set<PolicyEventReason>(['WaveHalted']);

export interface PolicyEvent {
  readonly type: 'Normal' | 'Warning';
  readonly reason: PolicyEventReason;
  readonly message: string;
  /** The wave it is about (none for a pause or a resume). */
  readonly wave?: string;
}

/** Which policy: its name, and its namespace in the Kubernetes store (none in the file store). */
export interface PolicyRef {
  readonly name: string;
  readonly namespace?: string;
}

/** `fleet`, or kubectl's `team-a/fleet` for a namespaced policy (what `rollout pause|resume` takes). */
export function policyRef(p: PolicyRef): string {
  return p.namespace ? `${p.namespace}/${p.name}` : p.name;
}

export function policyEvent(reason: PolicyEventReason, message: string, wave?: string): PolicyEvent {
  return { type: POLICY_WARNINGS.has(reason) ? 'Warning' : 'Normal', reason, message, ...(wave ? { wave } : {}) };
}
