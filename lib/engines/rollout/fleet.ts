import { isInProgress, isRolledBack, StackSummary } from '../../model/ports/cloudformation-port';
import { getCondition } from '../../model/cluster/status';
import { ClusterRecord } from '../../model/ports/cluster-store';
import { Labels } from '../../model/cluster/selector';
import { MaintenanceWindow } from '../../model/cluster/windows';

/**
 * One cluster as the rollout gate sees it: read from its object (spec, labels, status) and its live stack only, so a
 * restarted daemon or a new leader derives the same members and makes the same decisions.
 */
export interface FleetMember {
  readonly name: string;
  /** Its namespace in the Kubernetes store: only policies of that namespace govern it. @default none (the file store) */
  readonly namespace?: string;
  readonly labels: Labels;
  /** The cloud-config template it renders with: a change of that template is the same change for every cluster that uses it. */
  readonly template?: string;
  /** The checksum the object asks for now (undefined: the object is invalid or did not render). */
  readonly desired?: string;
  /** The checksum the live stack carries (its ConfigChecksum output). */
  readonly live?: string;
  /** Digest of the other node-replacing inputs the object asks for (lib/engines/rollout/node-key.ts), and the one last applied. */
  readonly nodeKey?: string;
  readonly appliedNodeKey?: string;
  /** The live stack (undefined: none yet). */
  readonly stack?: Pick<StackSummary, 'status' | 'lastUpdated'>;
  /** A change set of ours is executing or its end is not recorded yet (status.controller.executing). */
  readonly executing: boolean;
  /** When it was recorded Ready on its live config (ms), if it is: the evidence a soak counts from. */
  readonly readySince?: number;
  /** The checksum recorded as live with that Ready (status.cloudConfigChecksum). */
  readonly recordedLive?: string;
  /** Why its last roll failed, when it did and nothing has fixed it yet. */
  readonly failedRoll?: string;
  readonly hold: boolean;
  readonly paused: boolean;
  readonly windows: readonly MaintenanceWindow[];
}

/** Stalled / Degraded reasons that mean "a roll of this cluster failed". */
const FAILED_ROLL_REASONS = new Set([
  'UpdateFailed',
  'UpdateRolledBack',
  'UpdateRollbackFailed',
  'RecoveryExhausted',
  'RollbackFailed',
  'ChangeSetFailed',
]);

/** What the gate needs of a cluster's spec (the validated object, or the raw one of a record that did not validate). */
export interface MemberSpec {
  readonly labels?: Labels;
  readonly template?: string;
  readonly hold?: boolean;
  readonly paused?: boolean;
  readonly windows?: readonly MaintenanceWindow[];
  readonly nodeKey?: string;
}

/** Derives a member from the object, the desired checksum it renders to, and its live stack. */
export function fleetMember(
  record: ClusterRecord,
  spec: MemberSpec,
  desired: string | undefined,
  stack: StackSummary | undefined,
): FleetMember {
  const status = record.status;
  const ready = getCondition(status, 'Ready');
  const stalled = getCondition(status, 'Stalled');
  const degraded = getCondition(status, 'Degraded');
  // Outputs carry the live checksum; a stack listed without outputs falls back to what was recorded from it.
  const outputs: Readonly<Partial<Record<string, string>>> | undefined = stack?.outputs; // a key may be missing
  const live = stack ? (outputs?.ConfigChecksum ?? status?.cloudConfigChecksum) : undefined;
  let failedRoll: string | undefined;
  if (
    stack &&
    desired &&
    live !== desired &&
    (isRolledBack(stack.status) || /ROLLBACK_(IN_PROGRESS|FAILED)$/.test(stack.status))
  )
    failedRoll = `stack ${stack.status}`;
  if (stalled?.status === 'True' && FAILED_ROLL_REASONS.has(stalled.reason))
    failedRoll = `Stalled ${stalled.reason}: ${stalled.message}`;
  else if (degraded?.status === 'True' && FAILED_ROLL_REASONS.has(degraded.reason))
    failedRoll ??= `Degraded ${degraded.reason}: ${degraded.message}`;
  return {
    name: record.name,
    ...(record.namespace ? { namespace: record.namespace } : {}),
    labels: spec.labels ?? {},
    template: spec.template,
    desired,
    live,
    nodeKey: spec.nodeKey,
    appliedNodeKey: status?.rollout?.appliedNodeKey,
    stack: stack && { status: stack.status, lastUpdated: stack.lastUpdated },
    executing: Boolean(status?.controller?.executing),
    readySince: ready?.status === 'True' ? Date.parse(ready.lastTransitionTime) : undefined,
    recordedLive: status?.cloudConfigChecksum,
    failedRoll,
    hold: spec.hold ?? false,
    paused: spec.paused ?? false,
    windows: spec.windows ?? [],
  };
}

export const stackBusy = (m: FleetMember) =>
  Boolean(m.stack && isInProgress(m.stack.status) && m.stack.status !== 'REVIEW_IN_PROGRESS');

/** The other node-replacing inputs differ from those last applied (unknown before the first apply that records them). */
export const nodeInputsChanged = (m: Pick<FleetMember, 'nodeKey' | 'appliedNodeKey'>) =>
  Boolean(m.nodeKey && m.appliedNodeKey && m.nodeKey !== m.appliedNodeKey);

/** The live stack carries what the object asks for: its config, and its AMI, instance types, volume and subnets. */
export const onDesired = (m: FleetMember) => Boolean(m.desired && m.live === m.desired && !nodeInputsChanged(m));

/** A change that rolls its nodes is waiting: the stack exists and carries another config (or AMI …) than the object asks for. */
export const pendingRoll = (m: FleetMember) => Boolean(m.stack && m.desired && !onDesired(m) && !stackBusy(m));

/** A stack operation is under way, or ours has ended and is not recorded yet. */
export const rolling = (m: FleetMember) => stackBusy(m) || m.executing;

/**
 * Settled on its desired config, and since when: the stack carries it, nothing is in progress, and the reconciler
 * has recorded it Ready on exactly that config (so the soak counts from the recorded end of the roll, never from a
 * guess). Undefined when not settled.
 */
export function settledSince(m: FleetMember): number | undefined {
  if (!m.stack || !onDesired(m) || rolling(m) || m.failedRoll) return undefined;
  if (m.readySince === undefined || m.recordedLive !== m.live) return undefined;
  const updated = m.stack.lastUpdated ? Date.parse(m.stack.lastUpdated) : 0;
  return Math.max(m.readySince, Number.isNaN(updated) ? 0 : updated);
}
