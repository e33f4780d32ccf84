import { isInProgress, isRolledBack, StackSummary } from '../../model/ports/cloudformation-port';
import { getCondition, ClusterStatus } from '../../model/cluster/schema/status';
import { ClusterRecord } from '../../model/ports/cluster-store';
import { Labels } from '../../model/cluster/schema/selector';
import { MaintenanceWindow } from '../../model/cluster/schema/windows';
import { DEFAULT_POOL } from '../../model/cluster/pools/pools';
import { combinedChecksum } from './pool-checksums';

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
  /**
   * The image channels its pools name (lib/model/channel): a channel's new release is the same change for every
   * cluster of the channel, whatever its template. @default none
   */
  readonly channels?: readonly string[];
  /**
   * The checksum the object asks for now (undefined: the object is invalid or did not render). For a cluster of
   * several pools, the combination of every pool's (pool-checksums.ts), so a change to any pool is the cluster's roll.
   */
  readonly desired?: string;
  /** The checksum the live stack carries (its ConfigChecksum output); combined over the pools like `desired`. */
  readonly live?: string;
  /** Pools outside the shared stack whose own stack is in progress (status.pools): the cluster is rolling. @default none */
  readonly poolsRolling?: readonly string[];
  /**
   * A replacement of its nodes is pending besides a config change: a stack's roll key (lib/engines/stacks/roll-key.ts)
   * as the object and this release ask for it differs from the live one (a new image, instance types, subnets, a
   * release's launch template), as its own reconcile read and recorded them (status.desiredRollKey, status.rollKey).
   */
  readonly rollPending?: boolean;
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

/**
 * Whether `a` and `b` roll the same change, so that one waits for the other's earlier wave: they render with the same
 * template, or their pools share an image channel (whose new release reaches both).
 */
export function sameChange(
  a: Pick<FleetMember, 'template' | 'channels'>,
  b: Pick<FleetMember, 'template' | 'channels'>,
): boolean {
  return a.template === b.template || (a.channels ?? []).some((c) => b.channels?.includes(c));
}

/** Stalled / Degraded reasons that mean "a roll of this cluster failed". */
export const FAILED_ROLL_REASONS: ReadonlySet<string> = new Set([
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
  /** The image channels its pools name. @default none */
  readonly channels?: readonly string[];
  readonly hold?: boolean;
  readonly paused?: boolean;
  readonly windows?: readonly MaintenanceWindow[];
  /** The cluster's own reconcile has just read its roll keys: a replacement is pending (or not). @default as recorded */
  readonly rollPending?: boolean;
  /**
   * Each pool's desired checksum by name, for a cluster of several pools (or one not named default); absent for a
   * single-pool cluster, whose one checksum is `desired` itself. @default absent
   */
  readonly poolChecksums?: ReadonlyMap<string, string>;
  /**
   * For a cluster whose pools name an image channel: the key of what it asks for now, its channels' pins included
   * (derived-cache.ts derivedKey). Until its status records those inputs applied (appliedInputsKey), a replacement
   * counts as pending: a new release changes no config checksum, only the image, and a canary whose reconcile has not
   * yet read it must not look settled on it (the simulator found a later wave let through so). @default none
   */
  readonly inputsKey?: string;
}

/** Derives a member from the object, the desired checksum it renders to, and its live stack. */
export function fleetMember(
  record: ClusterRecord,
  spec: MemberSpec,
  ownDesired: string | undefined,
  stack: StackSummary | undefined,
  code?: string,
): FleetMember {
  const status = record.status;
  const ready = getCondition(status, 'Ready');
  const stalled = getCondition(status, 'Stalled');
  const degraded = getCondition(status, 'Degraded');
  // Outputs carry the live checksum; a stack listed without outputs falls back to what was recorded from it.
  const outputs: Readonly<Partial<Record<string, string>>> | undefined = stack?.outputs; // a key may be missing
  const sharedLive = stack ? (outputs?.ConfigChecksum ?? status?.cloudConfigChecksum) : undefined;
  const compared = spec.poolChecksums
    ? combinePools(spec.poolChecksums, sharedLive, status)
    : {
        desired: ownDesired,
        live: sharedLive,
        recordedLive: status?.cloudConfigChecksum,
        poolsRolling: [],
        neverLive: false,
      };
  const { desired, live, recordedLive, poolsRolling, neverLive } = compared;
  const rollPending =
    spec.rollPending ??
    (recordedRollPending(status, spec.poolChecksums, code) ||
      (spec.inputsKey !== undefined && status?.controller?.appliedInputsKey !== spec.inputsKey));
  let failedRoll: string | undefined;
  if (
    stack &&
    desired &&
    live !== desired &&
    (isRolledBack(stack.status) || /ROLLBACK_(IN_PROGRESS|FAILED)$/.test(stack.status))
  )
    failedRoll = `stack ${stack.status}`;
  // A cluster that stopped (Stalled: a human must act) before its desired config was live failed its roll, whatever
  // stopped it (a create that rolled back and could not be deleted, attempts spent on an error, a role it cannot
  // assume, an object that does not validate: whether its new config would roll is not even known): the waves after
  // it halt (haltOnFailure) or go on without it, and never wait for it. Not so for an object being deleted, which
  // leaves the fleet. Short of it also: a pool of the object never live (its create failed), a replacement pending.
  const stoppedShort =
    !record.deletionRequested && (desired === undefined || live !== desired || neverLive || rollPending);
  if (stalled?.status === 'True' && (FAILED_ROLL_REASONS.has(stalled.reason) || stoppedShort))
    failedRoll = `Stalled ${stalled.reason}: ${stalled.message}`;
  else if (degraded?.status === 'True' && FAILED_ROLL_REASONS.has(degraded.reason))
    failedRoll ??= `Degraded ${degraded.reason}: ${degraded.message}`;
  return {
    name: record.name,
    ...(record.namespace ? { namespace: record.namespace } : {}),
    labels: spec.labels ?? {},
    template: spec.template,
    ...(spec.channels?.length ? { channels: spec.channels } : {}),
    desired,
    live,
    ...(poolsRolling.length ? { poolsRolling } : {}),
    rollPending,
    stack: stack && { status: stack.status, lastUpdated: stack.lastUpdated },
    executing: Boolean(status?.controller?.executing),
    readySince: ready?.status === 'True' ? Date.parse(ready.lastTransitionTime) : undefined,
    recordedLive,
    failedRoll,
    hold: spec.hold ?? false,
    paused: spec.paused ?? false,
    windows: spec.windows ?? [],
  };
}

/** A pool's recorded status (status.pools[], written by the reconciler for each pool outside the shared stack). */
interface RecordedPool {
  readonly checksum?: string;
  readonly busy: boolean;
}

/** status.pools as recorded, read defensively: a status written before pools existed has none. */
function recordedPools(status: ClusterStatus | undefined): ReadonlyMap<string, RecordedPool> {
  const raw = (status as { pools?: unknown } | undefined)?.pools;
  const out = new Map<string, RecordedPool>();
  if (!Array.isArray(raw)) return out;
  for (const entry of raw as unknown[]) {
    const e = (entry ?? {}) as {
      name?: unknown;
      cloudConfigChecksum?: unknown;
      stackStatus?: unknown;
      controller?: unknown;
    };
    if (typeof e.name !== 'string') continue;
    const stackStatus = typeof e.stackStatus === 'string' ? e.stackStatus : '';
    const executing = Boolean((e.controller as { executing?: unknown } | undefined)?.executing);
    out.set(e.name, {
      checksum: typeof e.cloudConfigChecksum === 'string' ? e.cloudConfigChecksum : undefined,
      busy: executing || (isInProgress(stackStatus) && stackStatus !== 'REVIEW_IN_PROGRESS'),
    });
  }
  return out;
}

/**
 * The checksums the gate compares for a cluster of several pools: every pool that has a live config (the default
 * pool's is the shared stack's, the others' are recorded in status.pools) on both sides. A pool without one has no
 * stack yet: its create replaces no node, so it is left out of both. When no pool has one, nothing of the pools is
 * live: desired covers them all and live is unknown.
 */
function combinePools(
  want: ReadonlyMap<string, string>,
  sharedLive: string | undefined,
  status: ClusterStatus | undefined,
): { desired?: string; live?: string; recordedLive?: string; poolsRolling: string[]; neverLive: boolean } {
  const recorded = recordedPools(status);
  const desired = new Map<string, string>();
  const live = new Map<string, string>();
  const onRecord = new Map<string, string>();
  for (const [pool, checksum] of want) {
    const l = pool === DEFAULT_POOL ? sharedLive : recorded.get(pool)?.checksum;
    if (l === undefined) continue;
    desired.set(pool, checksum);
    live.set(pool, l);
    // What the reconciler recorded Ready on (the soak's evidence): the default pool's is the top-level checksum.
    const r = pool === DEFAULT_POOL ? status?.cloudConfigChecksum : l;
    if (r !== undefined) onRecord.set(pool, r);
  }
  const poolsRolling = [...recorded]
    .filter(([name, r]) => r.busy && want.has(name))
    .map(([name]) => name)
    .sort();
  return desired.size
    ? {
        desired: combinedChecksum(desired),
        live: combinedChecksum(live),
        recordedLive: onRecord.size === live.size ? combinedChecksum(onRecord) : undefined,
        poolsRolling,
        neverLive: desired.size < want.size,
      }
    : { desired: combinedChecksum(want), live: undefined, recordedLive: undefined, poolsRolling, neverLive: true };
}

export const stackBusy = (m: FleetMember) =>
  Boolean(m.stack && isInProgress(m.stack.status) && m.stack.status !== 'REVIEW_IN_PROGRESS');

/**
 * A stack of the cluster (the shared one, or a pool's still in the object) whose recorded roll keys differ: desired
 * and live as its reconcile last read them from the templates. Unknown (false) before a reconcile has read them.
 *
 * Keys read by other code than the gate's (`code`) count as pending: a release may write every launch template
 * differently, and until the cluster's own reconcile under this code has read its keys anew, whether the release
 * replaces its nodes is not known. So a later wave never takes an earlier one's keys of the old code for "settled on
 * the release". A stack whose keys were never read counts so when its last change set was executed by other code.
 */
function recordedRollPending(
  status: ClusterStatus | undefined,
  pools: ReadonlyMap<string, string> | undefined,
  code: string | undefined,
): boolean {
  type Recorded = {
    desiredRollKey?: unknown;
    rollKey?: unknown;
    controller?: { rollKeys?: { code?: unknown }; appliedBy?: { code?: unknown } };
  };
  const differs = (s: Recorded | undefined) =>
    typeof s?.desiredRollKey === 'string' && typeof s.rollKey === 'string' && s.desiredRollKey !== s.rollKey;
  const readBy = (s: Recorded | undefined): unknown => {
    const c = s?.controller;
    if (c?.rollKeys) return c.rollKeys.code ?? 'an earlier release';
    return c?.appliedBy?.code;
  };
  const otherCode = (s: Recorded | undefined) => {
    const by = readBy(s);
    return code !== undefined && by !== undefined && by !== code;
  };
  const pending = (s: Recorded | undefined) => differs(s) || otherCode(s);
  if (pending(status)) return true;
  const entries = (status as { pools?: unknown } | undefined)?.pools;
  if (!Array.isArray(entries)) return false;
  return (entries as ((Recorded & { name?: unknown }) | undefined)[]).some(
    (p) => (!pools || (typeof p?.name === 'string' && pools.has(p.name))) && pending(p),
  );
}

/** The live stacks carry what the object asks for: its config, and the same roll key (image, instance types …). */
export const onDesired = (m: FleetMember) => Boolean(m.desired && m.live === m.desired && !m.rollPending);

/** A change that rolls its nodes is waiting: the stack exists and carries another config (or AMI …) than the object asks for. */
export const pendingRoll = (m: FleetMember) => Boolean(m.stack && m.desired && !onDesired(m) && !stackBusy(m));

/** A stack operation is under way, or ours has ended and is not recorded yet. */
export const rolling = (m: FleetMember) => stackBusy(m) || m.executing || Boolean(m.poolsRolling?.length);

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
