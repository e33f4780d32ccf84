import { FleetMember, rolling } from './fleet';
import { LoadedPolicy } from './policy-source';

/** What the census reads of a cluster's placement (gate.ts's Placement). */
interface Placed {
  readonly policy: LoadedPolicy;
  readonly index: number;
}

/**
 * What the gate counts of one policy's clusters for a decision in one wave (gate.ts): every cluster of the policy,
 * the deciding one included (the gate leaves it out). One look at the whole fleet; the same census serves every
 * decision of that wave and template until a member, the placements or the admitted clusters change (the
 * coordinator's cache), so a thousand held clusters rechecked one after the other do not each read the thousand.
 */
export interface WaveCensus {
  /** Same template, this wave or an earlier one, whose roll failed (only under haltOnFailure, else empty). */
  readonly failed: readonly FleetMember[];
  /** Same template, an earlier wave, and counted for the wave's end (a failed one only under haltOnFailure). */
  readonly counted: readonly FleetMember[];
  /** This wave's clusters rolling or let through (any template: concurrency is about clusters rolling). */
  readonly inWave: readonly FleetMember[];
  /** The policy's clusters rolling or let through, in every wave. */
  readonly busy: number;
}

/** A cluster of the policy is rolling, or was let through and its roll is not visible yet. */
export const busyMember = (m: FleetMember, admitted: ReadonlySet<string>) => rolling(m) || admitted.has(m.name);

/** Census key of a decision: the policy, the wave, the template and whether a failure halts. */
export function censusKey(at: Placed, template: string | undefined, haltOnFailure: boolean): string {
  return JSON.stringify([
    at.policy.namespace ?? null,
    at.policy.policy.metadata.name,
    at.index,
    template ?? null,
    haltOnFailure,
  ]);
}

/** The census of `at`'s policy for a cluster in wave `at.index` rendering `template`, in the members' order. */
export function waveCensus(
  members: ReadonlyMap<string, FleetMember>,
  placements: ReadonlyMap<string, Placed>,
  admitted: ReadonlySet<string>,
  at: Placed,
  template: string | undefined,
  haltOnFailure: boolean,
): WaveCensus {
  const failed: FleetMember[] = [];
  const counted: FleetMember[] = [];
  const inWave: FleetMember[] = [];
  let busy = 0;
  for (const m of members.values()) {
    const p = placements.get(m.name);
    if (p?.policy !== at.policy) continue;
    const isBusy = busyMember(m, admitted);
    if (isBusy) busy++;
    if (isBusy && p.index === at.index) inWave.push(m);
    if (m.template !== template) continue;
    if (haltOnFailure && p.index <= at.index && m.failedRoll) failed.push(m);
    // Without haltOnFailure a failed cluster of an earlier wave holds nobody (it is Stalled or retried on its own).
    if (p.index < at.index && (haltOnFailure || !m.failedRoll)) counted.push(m);
  }
  return { failed, counted, inWave, busy };
}
