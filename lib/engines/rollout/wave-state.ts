import { parseDuration } from '../../model/cluster/schema/duration';
import { FleetMember, onDesired, pendingRoll, rolling, settledSince } from './fleet';
import { Fleet, placeAll } from './gate';
import { LoadedPolicy } from './policy-source';

/**
 * Where each wave of each policy is, in one pass over the fleet (O(clusters)): what the daemon compares between two
 * looks at the fleet to put events on the policy and to wake held clusters (wave-watch.ts). `rollout status`
 * (report.ts) asks the gate about every waiting cluster, which says why but costs a decision per cluster; this only
 * needs the facts, and reads them with the same predicates (fleet.ts) and the gate's halt rule.
 *
 * - `halted` (haltOnFailure): a roll of the wave failed, or one of an earlier wave with the same change did and a
 *   cluster of this wave waits to roll that change;
 * - `rolling`: a roll is under way (or done and not yet recorded), or some clusters soak while others wait their turn;
 * - `waiting`: clusters wait to roll and none of the wave is rolling or soaking;
 * - `soaking`: every roll is done and recorded Ready, and the soak of some has not ended;
 * - `settled`: nothing to roll, nothing soaking.
 */
export type WaveState = 'settled' | 'waiting' | 'rolling' | 'soaking' | 'halted';

export interface WaveView {
  readonly name: string;
  /** 0-based; the remainder is last. */
  readonly index: number;
  /** Waves of the policy, the remainder included. */
  readonly of: number;
  readonly soak: string;
  readonly state: WaveState;
  readonly size: number;
  readonly rolling: readonly string[];
  /** Clusters with a roll to start (held, or about to go). */
  readonly pending: readonly string[];
  readonly soaking: readonly string[];
  readonly failed: ReadonlyArray<{ readonly name: string; readonly why: string }>;
  /** The cluster whose failed roll halts this wave (its own, or an earlier wave's), when halted. */
  readonly haltedBy?: { readonly name: string; readonly why: string };
  /** When the last soak of the wave ends (ms), while some cluster soaks. */
  readonly soakUntil?: number;
}

export interface PolicyView {
  readonly policy: LoadedPolicy;
  readonly paused: boolean;
  readonly waves: readonly WaveView[];
}

export function waveViews(fleet: Fleet, now: Date, placed = placeAll(fleet).placements): PolicyView[] {
  const byPolicy = new Map<LoadedPolicy, FleetMember[][]>();
  for (const p of fleet.policies.policies)
    byPolicy.set(
      p,
      Array.from({ length: p.policy.spec.waves.length + 1 }, () => []),
    );
  const sorted = [...fleet.members.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const m of sorted) {
    const at = placed.get(m.name);
    if (at) byPolicy.get(at.policy)?.[at.index].push(m);
  }
  return [...byPolicy].map(([policy, waves]) => {
    const spec = policy.policy.spec;
    // The gate's halt rule: a failed roll halts its wave and, with haltOnFailure, every later wave's clusters that
    // wait to roll the same change (the same template).
    const firstFailed = new Map<string | undefined, { index: number; name: string; why: string }>();
    waves.forEach((members, index) => {
      for (const m of members)
        if (m.failedRoll && !firstFailed.has(m.template))
          firstFailed.set(m.template, { index, name: m.name, why: m.failedRoll });
    });
    const views = waves.map((members, index): WaveView => {
      const settings = index < spec.waves.length ? spec.waves[index] : spec.remainder;
      const soakMs = parseDuration(settings.soak) ?? 0;
      const v = {
        rolling: [] as string[],
        pending: [] as string[],
        soaking: [] as string[],
        failed: [] as Array<{ name: string; why: string }>,
      };
      let soakUntil: number | undefined;
      let haltedBy: { name: string; why: string } | undefined;
      for (const m of members) {
        const since = settledSince(m);
        if (m.failedRoll) v.failed.push({ name: m.name, why: m.failedRoll });
        else if (rolling(m) || (onDesired(m) && since === undefined)) v.rolling.push(m.name);
        else if (pendingRoll(m)) {
          v.pending.push(m.name);
          const f = firstFailed.get(m.template);
          if (spec.haltOnFailure && f && f.index <= index) haltedBy ??= { name: f.name, why: f.why };
        } else if (since !== undefined && since + soakMs > now.getTime()) {
          v.soaking.push(m.name);
          soakUntil = Math.max(soakUntil ?? 0, since + soakMs);
        }
      }
      // Without haltOnFailure a failed cluster stops only itself (Stalled, with its own events), not its wave.
      if (v.failed.length && spec.haltOnFailure) haltedBy = v.failed[0];
      const state: WaveState = haltedBy
        ? 'halted'
        : v.rolling.length
          ? 'rolling'
          : v.pending.length
            ? v.soaking.length
              ? 'rolling'
              : 'waiting'
            : v.soaking.length
              ? 'soaking'
              : 'settled';
      return {
        name: settings.name,
        index,
        of: waves.length,
        soak: settings.soak,
        state,
        size: members.length,
        ...v,
        ...(haltedBy ? { haltedBy } : {}),
        ...(soakUntil !== undefined ? { soakUntil } : {}),
      };
    });
    return { policy, paused: spec.paused, waves: views };
  });
}
