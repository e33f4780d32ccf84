import { formatProblem } from '../../core/errors';
import { parseDuration } from '../../model/cluster/schema/duration';
import { FleetMember, onDesired, pendingRoll, rolling, settledSince } from './fleet';
import { policyRef } from './policy-events';
import { LoadedPolicies, LoadedPolicy } from './policy-source';
import { WaveSettings, waveConcurrency } from '../../model/cluster/schema/policy-schema';
import { matches } from '../../model/cluster/schema/selector';
import { describeWindow, windowState } from '../../model/cluster/schema/windows';
import { censusKey, waveCensus, WaveCensuses } from './wave-census';

/**
 * The rollout gate, as a pure function of the fleet (objects and live stacks), the policies and the time: whether a
 * cluster may start a roll of its nodes now, and if not, why and when to look again. Nothing else is read, so a
 * restarted daemon computes the same decisions.
 */

/** Why a roll is held (condition reasons; see lib/engines/reconciler/workflow/conditions.ts). */
export type HoldReason =
  'Held' | 'RolloutPaused' | 'RolloutPolicyInvalid' | 'RolloutHalted' | 'WaitingForWave' | 'OutsideMaintenanceWindow';

export interface Placement {
  readonly policy: LoadedPolicy;
  /** 0-based; the remainder wave is `policy.spec.waves.length`. */
  readonly index: number;
  readonly wave: WaveSettings;
  /** Clusters in this wave. */
  readonly size: number;
}

export type Decision =
  | { readonly go: true; readonly placement?: Placement }
  | {
      readonly go: false;
      readonly reason: HoldReason;
      readonly message: string;
      readonly requeueAfterMs: number;
      readonly placement?: Placement;
    };

export interface Fleet {
  readonly members: ReadonlyMap<string, FleetMember>;
  readonly policies: LoadedPolicies;
}

/**
 * How long to wait before looking again at a cluster held on something that changes by itself (others rolling). A
 * roll takes minutes; a thousand held clusters looked at every 2 minutes cost about 8 reconciles a second.
 */
export const RECHECK_MS = 120_000;
/** …and on something only a person changes (a hold, a pause, a halt, a bad policy): the watch and resync wake it sooner. */
export const HUMAN_RECHECK_MS = 5 * 60_000;

/** Waves of every policy over the fleet: each cluster in the first wave that selects it, else the policy's remainder. */
export function placeAll(fleet: Fleet): { placements: Map<string, Placement>; conflicts: Map<string, string[]> } {
  const placements = new Map<string, Placement>();
  const conflicts = new Map<string, string[]>();
  const byPolicy = new Map<LoadedPolicy, Array<{ name: string; index: number }>>();
  for (const m of fleet.members.values()) {
    const governing = fleet.policies.policies.filter(
      (p) => sameNamespace(p, m) && matches(p.policy.spec.clusterSelector, m.labels),
    );
    if (governing.length > 1)
      conflicts.set(
        m.name,
        governing.map((p) => p.policy.metadata.name),
      );
    if (governing.length !== 1) continue;
    const p = governing[0];
    const i = p.policy.spec.waves.findIndex((w) => matches(w.selector, m.labels));
    const list = byPolicy.get(p) ?? [];
    list.push({ name: m.name, index: i < 0 ? p.policy.spec.waves.length : i });
    byPolicy.set(p, list);
  }
  for (const [p, list] of byPolicy) {
    const sizes = new Map<number, number>();
    for (const x of list) sizes.set(x.index, (sizes.get(x.index) ?? 0) + 1);
    for (const x of list)
      placements.set(x.name, { policy: p, index: x.index, wave: waveOf(p, x.index), size: sizes.get(x.index) ?? 0 }); // counted just above
  }
  return { placements, conflicts };
}

/** A policy governs the clusters of its own namespace (Kubernetes); a policy of no namespace (files), every cluster. */
export function sameNamespace(p: { readonly namespace?: string }, m: { readonly namespace?: string }): boolean {
  return p.namespace === undefined || p.namespace === m.namespace;
}

export function waveOf(p: LoadedPolicy, index: number): WaveSettings {
  return index < p.policy.spec.waves.length ? p.policy.spec.waves[index] : p.policy.spec.remainder;
}

/** Names for a message: `a, b, c and 7 more`. */
export function some(names: readonly string[], max = 3): string {
  return names.length <= max ? names.join(', ') : `${names.slice(0, max).join(', ')} and ${names.length - max} more`;
}

/**
 * May `name` start rolling its nodes now? `admitted` are clusters this process let through whose roll is not yet
 * visible in their status or stack (they count against concurrency). Call only for a cluster with a pending roll.
 */
export function decide(
  name: string,
  fleet: Fleet,
  now: Date,
  admitted: ReadonlySet<string> = new Set(),
  placed = placeAll(fleet),
  /**
   * Censuses to reuse and keep (wave-census.ts): valid only while the placements stay as they were when each was
   * taken and every change of a member or of `admitted` since was told to them (the coordinator does both).
   * @default none: taken for this call
   */
  censuses?: WaveCensuses,
): Decision {
  const me = fleet.members.get(name);
  if (!me) return { go: true };
  const hold = (reason: HoldReason, message: string, requeueAfterMs: number, placement?: Placement): Decision => ({
    go: false,
    reason,
    message,
    requeueAfterMs: Math.max(1000, Math.round(requeueAfterMs)),
    placement,
  });
  if (me.hold)
    return hold(
      'Held',
      `spec.rollout.hold: config ${short(me.desired)} is staged (published, desired) and does not roll until the hold is removed`,
      HUMAN_RECHECK_MS,
      placed.placements.get(name),
    );
  // An invalid policy holds what it could govern: every cluster (files), the clusters of its namespace (Kubernetes).
  const problems = fleet.policies.problems.filter((p) => sameNamespace(p, me));
  if (problems.length) {
    const first = problems.slice(0, 3).map(formatProblem).join('; ');
    return hold(
      'RolloutPolicyInvalid',
      `no roll starts while a rollout policy is invalid: ${first}${problems.length > 3 ? ` (and ${problems.length - 3} more)` : ''}; fix it (worker-stacks rollout status lists every problem)`,
      HUMAN_RECHECK_MS,
    );
  }
  const conflict = placed.conflicts.get(name);
  if (conflict)
    return hold(
      'Held',
      `rollout policies ${conflict.join(' and ')} both select this cluster; make their spec.clusterSelector disjoint`,
      HUMAN_RECHECK_MS,
    );
  const at = placed.placements.get(name);
  if (!at) return { go: true }; // no policy governs it: only --concurrency bounds it
  const spec = at.policy.policy.spec;
  const wave = `wave ${at.wave.name} (${at.index + 1} of ${spec.waves.length + 1})`;
  const ref = policyRef({ name: at.policy.policy.metadata.name, namespace: at.policy.namespace });
  if (spec.paused)
    return hold(
      'RolloutPaused',
      `rollout policy ${ref} is paused; no roll starts until worker-stacks rollout resume ${ref}`,
      HUMAN_RECHECK_MS,
      at,
    );

  // The policy's clusters as this wave sees them (wave-census.ts: one look at the fleet, kept by the caller while
  // nothing it counts changes), without this cluster.
  const key = censusKey(at, me, spec.haltOnFailure);
  let census = censuses?.get(key);
  if (!census) {
    census = waveCensus(fleet.members, placed.placements, admitted, at, me, spec.haltOnFailure);
    censuses?.set(key, census);
  }
  const others = (ms: ReadonlyMap<string, FleetMember>) => [...ms.values()].filter((m) => m.name !== name);
  const failed = others(census.failed);
  const counted = others(census.counted);
  const inWave = others(census.inWave);
  const busyInPolicy = census.busy.size - (census.busy.has(name) ? 1 : 0);
  // Every member of the census has a placement of this policy, so a missing one is a bug here, not a state of the fleet.
  const placementOf = (m: FleetMember): Placement => {
    const p = placed.placements.get(m.name);
    if (!p) throw new Error(`rollout gate: peer ${m.name} has no placement`);
    return p;
  };
  if (failed.length) {
    failed.sort(byName);
    const first = failed[0];
    return hold(
      'RolloutHalted',
      `${wave} is halted: the roll of ${some(failed.map((m) => m.name))} failed (${first.name}: ${first.failedRoll}); fix the cause and the failed cluster rolls again (or worker-stacks retry ${first.name}), then this one continues`,
      HUMAN_RECHECK_MS,
      at,
    );
  }
  const notRolled = counted
    .filter((m) => pendingRoll(m) || rolling(m) || (onDesired(m) && settledSince(m) === undefined))
    .sort(byName);
  if (notRolled.length) {
    const first = placementOf(notRolled[0]);
    return hold(
      'WaitingForWave',
      `${wave} waits for wave ${first.wave.name}: ${some(notRolled.map((m) => m.name))} ${notRolled.length === 1 ? 'has' : 'have'} not settled on the new config yet`,
      RECHECK_MS,
      at,
    );
  }
  const soaking = counted
    .map((m) => ({ m, since: settledSince(m) }))
    .filter((x): x is { m: FleetMember; since: number } => x.since !== undefined)
    .map(({ m, since }) => ({ m, until: since + (parseDuration(placementOf(m).wave.soak) ?? 0) }))
    .filter((x) => x.until > now.getTime())
    .sort((a, b) => b.until - a.until || byName(a.m, b.m));
  if (soaking.length) {
    const last = soaking[0];
    const w = placementOf(last.m).wave;
    return hold(
      'WaitingForWave',
      `${wave} waits for wave ${w.name} to soak ${w.soak}: ${some(soaking.map((x) => x.m.name))} settled less than ${w.soak} ago; the soak ends at ${new Date(last.until).toISOString()}`,
      last.until - now.getTime(),
      at,
    );
  }
  const windows = me.windows.length ? me.windows : at.wave.maintenanceWindows;
  const win = windowState(windows, now);
  if (!win.open) {
    const whose = me.windows.length
      ? 'spec.rollout.maintenanceWindows'
      : `the maintenance windows of wave ${at.wave.name}`;
    const opens = win.opensAt ? win.opensAt.getTime() - now.getTime() : HUMAN_RECHECK_MS;
    return hold(
      'OutsideMaintenanceWindow',
      `outside ${whose} (${windows.map(describeWindow).join(', ')}); the next opens at ${win.opensAt?.toISOString() ?? 'an unknown time'}`,
      opens,
      at,
    );
  }
  const limit = waveConcurrency(at.wave.maxConcurrent, at.size);
  if (inWave.length >= limit) {
    return hold(
      'WaitingForWave',
      `${wave}: ${inWave.length} of at most ${limit} rolls in progress (maxConcurrent ${at.wave.maxConcurrent}): ${some(inWave.map((m) => m.name).sort())}`,
      RECHECK_MS,
      at,
    );
  }
  if (spec.maxConcurrentRolls !== undefined) {
    if (busyInPolicy >= spec.maxConcurrentRolls) {
      return hold(
        'WaitingForWave',
        `rollout policy ${at.policy.policy.metadata.name}: ${busyInPolicy} of at most ${spec.maxConcurrentRolls} rolls in progress (maxConcurrentRolls)`,
        RECHECK_MS,
        at,
      );
    }
  }
  return { go: true, placement: at };
}

const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
const short = (c: string | undefined) => (c ? c.slice(0, 12) : 'unknown');
