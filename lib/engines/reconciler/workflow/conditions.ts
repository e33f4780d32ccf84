import { ConditionInput } from '../../../model/cluster/schema/status';

/**
 * Every condition reason the reconciler writes, in one union: docs/troubleshooting.md's list is
 * checked against it by a test, and nothing else in lib/ spells a reason.
 */
export const REASONS = {
  // Ready=True
  StackCreated: 'the stack was created and its config is live',
  StackUpdated: 'the stack was updated and its config is live',
  UpToDate: 'the live stack already matches the object',
  // Ready=False on the top level of a cluster with pools in stacks of their own
  PoolsNotReady: "the shared stack is Ready, one or more pools' stacks are not (status.pools says why)",
  // Progressing=True
  ChangeSetExecuting: 'a change set of ours is executing',
  WaitingForStack: 'the stack is in progress; the reconciler requeues and looks again',
  WaitingForSlot: '--concurrency stacks are already in progress; this one starts when a slot frees',
  WaitingForPools:
    "spec.rollout.maxConcurrentPools of the cluster's pools are rolling their nodes; this pool rolls when one ends",
  WaitingForSharedStack: "the cluster's shared stack is not created yet: a pool's stack imports its values",
  WaitingForImports:
    'CloudFormation refused the change because an export is still imported by another stack (or not exported yet): the other stacks are applied first, then it is tried again',
  WaitingToRemovePool:
    "a pool removed from the object: its stack (and with it its nodes) is deleted once the cluster's other stacks are settled and Ready, a pool added in the same change first, and fewer than spec.rollout.maxConcurrentPools pools roll",
  RecreatingStack: 'a stack that never finished creating is deleted to be created again',
  ContinuingRollback: 'ContinueUpdateRollback on an UPDATE_ROLLBACK_FAILED stack',
  Drifted: 'the live stack is not what the reconciler last applied (changed out of band)',
  StackDeleted: 'the recorded stack is gone; it is created again',
  DeletingStack:
    'the object was deleted with spec.deletionPolicy Delete: its stack is being deleted (the finalizer holds the object)',
  // Progressing=False
  Idle: 'nothing in progress',
  Paused: 'spec.paused: no AWS writes until resumed',
  // Progressing=False, held by the fleet rollout (lib/engines/rollout/gate.ts): the new config is desired, not yet rolling
  WaitingForWave: 'an earlier wave has not settled and soaked on the change, or the wave is at its maxConcurrent',
  RolloutHalted: 'a roll of this wave or an earlier one failed (haltOnFailure); fix it and the rollout continues',
  OutsideMaintenanceWindow:
    'no maintenance window of the cluster (or its wave) is open; the roll starts in the next one',
  Held: 'spec.rollout.hold: the config is staged (published, desired) and rolls when the hold is removed',
  RolloutPaused: 'the rollout policy is paused (worker-stacks rollout pause); rolls start again on resume',
  RolloutPolicyInvalid: 'a WorkerRolloutPolicy is invalid; no roll starts until it is fixed',
  // Degraded=True (retried by itself)
  UpdateRolledBack: 'the update rolled back; retried with backoff until --max-update-attempts',
  CreateRolledBack: 'the create rolled back; the stack is deleted and created again',
  UpdateRollbackFailed: 'the rollback failed; ContinueUpdateRollback is tried',
  ChangeSetFailed: 'CloudFormation refused the change set',
  Throttled: 'AWS throttled a call; requeued, not counted as a failure',
  AwsUnavailable: 'a network error or an AWS 5xx; requeued, not counted as a failure',
  AwsError: 'AWS refused a call',
  // Stalled=True (needs a human)
  InvalidSpec: 'the object is invalid; nothing was touched',
  RenderFailed: 'the node config did not render',
  SynthesisFailed: 'the stack did not synthesize (a cdk-nag finding or a code error)',
  AccountMismatch: "the credentials are not the cluster's account",
  StackOwnedElsewhere:
    'the stack of this name belongs to another cluster object (its worker-stacks.io/owner tag): nothing is written to it',
  StackNotAdopted:
    'a stack of this name exists with no owner tag and this object never recorded it: nothing is written to it until an operator tags it',
  AssumeRoleFailed:
    "the cluster's account's deployer role could not be assumed (missing, not trusting this daemon, another external id); Degraded while a session that expired is assumed again",
  AccessDenied:
    "the cluster's account refused a call: its bootstrap (deployer role, execution role) is missing or older than this version",
  NotBootstrapped: "the cluster's account and region have no config bucket: run worker-stacks bootstrap there",
  UpdateFailed: 'the same inputs failed --max-update-attempts times; fix the object or run worker-stacks retry',
  RecoveryExhausted: 'documented recovery was tried and did not work',
  DeleteFailed: 'the stack is DELETE_FAILED; an operator must act',
  RollbackFailed: 'the stack is ROLLBACK_FAILED; an operator must act',
  ReconcileFailed: 'an unexpected error (a bug): the message has it',
  // the False side of Degraded / Stalled
  AsExpected: 'nothing wrong',
} as const;

export type Reason = keyof typeof REASONS;

/** A condition the reconciler writes: its reason is one of REASONS, so a misspelt or undocumented one does not compile. */
export interface ReasonedCondition extends ConditionInput {
  readonly reason: Reason;
}
/** @internal Every reason, for the tests that check each one is documented and reachable. */
export const REASON_NAMES = Object.keys(REASONS) as Reason[];

/** Conditions for each state a cluster can be in; every write of conditions goes through these. */
export const CONDITIONS = {
  /** live == desired, the stack healthy. */
  ready: (reason: Reason, message: string): ReasonedCondition[] => [
    { type: 'Ready', status: 'True', reason, message },
    { type: 'Progressing', status: 'False', reason: 'Idle', message: 'nothing in progress' },
    { type: 'Degraded', status: 'False', reason: 'AsExpected', message: 'last attempt succeeded' },
    { type: 'Stalled', status: 'False', reason: 'AsExpected', message: 'nothing needs a human' },
  ],
  /** Work under way: live is not yet desired. */
  progressing: (reason: Reason, message: string): ReasonedCondition[] => [
    { type: 'Ready', status: 'False', reason, message },
    { type: 'Progressing', status: 'True', reason, message },
    { type: 'Degraded', status: 'False', reason: 'AsExpected', message: 'nothing wrong so far' },
    { type: 'Stalled', status: 'False', reason: 'AsExpected', message: 'nothing needs a human' },
  ],
  /** A failure the reconciler retries by itself. Ready is left as it is unless the live stack is known to differ. */
  degraded: (reason: Reason, message: string, opts: { readonly ready?: boolean } = {}): ReasonedCondition[] => [
    ...(opts.ready === false ? [{ type: 'Ready' as const, status: 'False' as const, reason, message }] : []),
    { type: 'Progressing', status: 'True', reason, message: `retrying: ${message}` },
    { type: 'Degraded', status: 'True', reason, message },
    { type: 'Stalled', status: 'False', reason: 'AsExpected', message: 'nothing needs a human yet' },
  ],
  /** Needs a human. Ready is set False only when the live stack is known not to match (an invalid edit leaves a running stack Ready). */
  stalled: (reason: Reason, message: string, opts: { readonly ready?: boolean } = {}): ReasonedCondition[] => [
    ...(opts.ready === false ? [{ type: 'Ready' as const, status: 'False' as const, reason, message }] : []),
    { type: 'Progressing', status: 'False', reason, message: 'stopped' },
    // Not retried by itself: Degraded is False, and says why, never "nothing wrong" while Stalled.
    { type: 'Degraded', status: 'False', reason, message: 'not retried by itself: stopped, see Stalled' },
    { type: 'Stalled', status: 'True', reason, message },
  ],
  /** Paused: no AWS writes. Ready is set False when a change is pending (Ready never says True for desired ≠ live). */
  paused: (message: string, opts: { readonly ready?: boolean } = {}): ReasonedCondition[] => [
    ...(opts.ready === false
      ? [{ type: 'Ready' as const, status: 'False' as const, reason: 'Paused' as const, message }]
      : []),
    { type: 'Progressing', status: 'False', reason: 'Paused', message },
  ],
  /** A roll held by the fleet rollout: the live config is not the desired one yet, nothing is wrong. */
  held: (reason: Reason, message: string): ReasonedCondition[] => [
    { type: 'Ready', status: 'False', reason, message },
    { type: 'Progressing', status: 'False', reason, message },
    { type: 'Degraded', status: 'False', reason: 'AsExpected', message: 'nothing wrong' },
    { type: 'Stalled', status: 'False', reason: 'AsExpected', message: 'nothing needs a human' },
  ],
};
