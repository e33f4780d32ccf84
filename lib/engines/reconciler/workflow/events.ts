import { ClusterStatus, getCondition, PoolStatus } from '../../../model/cluster/schema/status';
import type { EventSink as ObjectEventSink, ObjectEvent } from '../../../model/ports/event-sink';

/**
 * Events on the cluster object (`kubectl describe wc <name>`): the few moments an operator wants in the object's own
 * history. They are derived from one status change — the one place conditions change (StatusRecorder) — so a task
 * cannot forget one and a repeated pass that changes nothing emits nothing.
 */
export const EVENT_REASONS = {
  RollStarted: 'a change set of ours started; the message says what changed in the node config',
  StackComplete: 'the stack finished; its config is live',
  RolledBack: 'the stack rolled back; the message names the first failing resource',
  Stalled: 'the cluster stopped and needs a human',
  StackDeleted: 'spec.deletionPolicy Delete: the stack was deleted with the object',
  DeleteFailed: 'spec.deletionPolicy Delete: the stack could not be deleted; the finalizer stays',
  RollHeld:
    'a roll waits for the fleet rollout (its wave, a halt, a window, a hold, a paused or invalid policy); the message says what for',
} as const;

/** Progressing=False reasons of the fleet rollout gate (lib/engines/reconciler/tasks/wait-for-wave.ts); a halt or a bad policy is a warning. */
const HELD = new Set([
  'WaitingForWave',
  'OutsideMaintenanceWindow',
  'Held',
  'RolloutPaused',
  'RolloutHalted',
  'RolloutPolicyInvalid',
]);
const HELD_WARNING = new Set(['RolloutHalted', 'RolloutPolicyInvalid']);

export type EventReason = keyof typeof EVENT_REASONS;

export interface ClusterEvent extends ObjectEvent {
  readonly reason: EventReason;
}

/** Where events go (the interface lives with the stores, lib/model/ports/event-sink.ts): the Kubernetes store posts them on the object; the file store has none. */
export type EventSink = ObjectEventSink<ClusterEvent>;

const ROLLED_BACK = new Set([
  'UPDATE_ROLLBACK_COMPLETE',
  'ROLLBACK_COMPLETE',
  'UPDATE_ROLLBACK_FAILED',
  'ROLLBACK_FAILED',
]);

/** The events one status change means (none when nothing an operator follows changed). */
export function eventsFor(before: ClusterStatus, after: ClusterStatus): ClusterEvent[] {
  const out: ClusterEvent[] = [];
  const was = before.controller?.executing;
  const is = after.controller?.executing;
  if (is && is.changeSet !== was?.changeSet) {
    const progressing = getCondition(after, 'Progressing');
    out.push({
      type: 'Normal',
      reason: 'RollStarted',
      message: progressing?.message ?? `executing change set ${is.changeSet}`,
    });
  }
  const ready = getCondition(after, 'Ready');
  const readyBefore = getCondition(before, 'Ready');
  const completed = ready?.status === 'True' && (ready.reason === 'StackCreated' || ready.reason === 'StackUpdated');
  if (
    completed &&
    (was ||
      readyBefore?.status !== 'True' ||
      readyBefore.reason !== ready.reason ||
      readyBefore.lastTransitionTime !== ready.lastTransitionTime)
  ) {
    out.push({ type: 'Normal', reason: 'StackComplete', message: ready.message });
  } else if (ready?.status === 'True' && readyBefore?.status === 'False' && readyBefore.reason === 'PoolsNotReady') {
    // A cluster with pools in stacks of their own is complete when its last pool is: its top level goes from
    // PoolsNotReady to Ready (with the reason of the pass that saw it, often UpToDate), once.
    out.push({ type: 'Normal', reason: 'StackComplete', message: `every pool is Ready; ${ready.message}` });
  }
  if (after.stackStatus && ROLLED_BACK.has(after.stackStatus) && (after.stackStatus !== before.stackStatus || was)) {
    const why =
      getCondition(after, 'Stalled')?.status === 'True'
        ? getCondition(after, 'Stalled')
        : getCondition(after, 'Degraded');
    out.push({ type: 'Warning', reason: 'RolledBack', message: why?.message ?? `stack is ${after.stackStatus}` });
  }
  const held = getCondition(after, 'Progressing');
  const heldBefore = getCondition(before, 'Progressing');
  if (
    held?.status === 'False' &&
    HELD.has(held.reason) &&
    (heldBefore?.reason !== held.reason || heldBefore.status !== 'False')
  ) {
    out.push({
      type: HELD_WARNING.has(held.reason) ? 'Warning' : 'Normal',
      reason: 'RollHeld',
      message: `${held.reason}: ${held.message}`,
    });
  }
  const stalled = getCondition(after, 'Stalled');
  if (
    stalled?.status === 'True' &&
    (getCondition(before, 'Stalled')?.status !== 'True' || getCondition(before, 'Stalled')?.reason !== stalled.reason)
  ) {
    out.push({ type: 'Warning', reason: 'Stalled', message: `${stalled.reason}: ${stalled.message}` });
  }
  return out;
}

/**
 * The events of one status change of the object and of each pool's own stack in it (status.pools[]): a pool's say
 * which pool and stack they are about.
 */
export function clusterEventsFor(before: ClusterStatus, after: ClusterStatus): ClusterEvent[] {
  const asStatus = (p: PoolStatus | undefined): ClusterStatus => {
    if (!p) return { conditions: [] };
    const { name: _name, ...rest } = p;
    return rest;
  };
  return [
    ...eventsFor(before, after),
    ...(after.pools ?? []).flatMap((p) =>
      eventsFor(asStatus(before.pools?.find((b) => b.name === p.name)), asStatus(p)).map((e) => ({
        ...e,
        message: `pool ${p.name} (${p.stackName}): ${e.message}`,
      })),
    ),
  ];
}
