import { FleetMember, rolling, sameChange } from './fleet';
import { LoadedPolicy } from './policy-source';

/** What the census reads of a cluster's placement (gate.ts's Placement). */
interface Placed {
  readonly policy: LoadedPolicy;
  readonly index: number;
}

/** A cluster of the policy is rolling, or was let through and its roll is not visible yet. */
export const busyMember = (m: FleetMember, admitted: ReadonlySet<string>) => rolling(m) || admitted.has(m.name);

/** What makes two clusters roll the same change (fleet.ts sameChange): the template, the image channels. */
export type ChangeOf = Pick<FleetMember, 'template' | 'channels'>;

/** Census key of a decision: the policy, the wave, the change (template, channels) and whether a failure halts. */
export function censusKey(at: Placed, change: ChangeOf, haltOnFailure: boolean): string {
  return JSON.stringify([
    at.policy.namespace ?? null,
    at.policy.policy.metadata.name,
    at.index,
    change.template ?? null,
    change.channels ?? [],
    haltOnFailure,
  ]);
}

/**
 * What the gate counts of one policy's clusters for a decision in one wave (gate.ts), by cluster name: every cluster
 * of the policy, the deciding one included (the gate leaves it out). Taken with one look at the whole fleet, then kept
 * by the coordinator and told of each member that changes (WaveCensuses.update), so a thousand held clusters
 * rechecked one after the other do not each read the thousand.
 */
export class WaveCensus {
  /** The same change (template or channel), this wave or an earlier one, whose roll failed (only under haltOnFailure). */
  public readonly failed = new Map<string, FleetMember>();
  /** The same change, an earlier wave, and counted for the wave's end (a failed one only under haltOnFailure). */
  public readonly counted = new Map<string, FleetMember>();
  /** This wave's clusters rolling or let through (any template: concurrency is about clusters rolling). */
  public readonly inWave = new Map<string, FleetMember>();
  /** The policy's clusters rolling or let through, in every wave. */
  public readonly busy = new Set<string>();

  constructor(
    private readonly at: Placed,
    private readonly change: ChangeOf,
    private readonly haltOnFailure: boolean,
  ) {}

  /** Counts member `name` as `m` placed at `p` (undefined: gone), in place of what was counted of it before. */
  public set(name: string, m: FleetMember | undefined, p: Placed | undefined, admitted: ReadonlySet<string>): void {
    this.failed.delete(name);
    this.counted.delete(name);
    this.inWave.delete(name);
    this.busy.delete(name);
    if (!m || p?.policy !== this.at.policy) return;
    const isBusy = busyMember(m, admitted);
    if (isBusy) this.busy.add(name);
    if (isBusy && p.index === this.at.index) this.inWave.set(name, m);
    if (!sameChange(m, this.change)) return;
    if (this.haltOnFailure && p.index <= this.at.index && m.failedRoll) this.failed.set(name, m);
    // Without haltOnFailure a failed cluster of an earlier wave holds nobody (it is Stalled or retried on its own).
    if (p.index < this.at.index && (this.haltOnFailure || !m.failedRoll)) this.counted.set(name, m);
  }
}

/** The census of `at`'s policy for a cluster in wave `at.index` rolling `change`: one look at every member. */
export function waveCensus(
  members: ReadonlyMap<string, FleetMember>,
  placements: ReadonlyMap<string, Placed>,
  admitted: ReadonlySet<string>,
  at: Placed,
  change: ChangeOf,
  haltOnFailure: boolean,
): WaveCensus {
  const census = new WaveCensus(at, change, haltOnFailure);
  for (const m of members.values()) census.set(m.name, m, placements.get(m.name), admitted);
  return census;
}

/**
 * The censuses a decider keeps, by censusKey. Valid while the placements stay the same and every change of a member
 * (its object, or whether it is admitted) is told to update; cleared when the placements change.
 */
export class WaveCensuses {
  private readonly byKey = new Map<string, WaveCensus>();
  public get(key: string): WaveCensus | undefined {
    return this.byKey.get(key);
  }
  public set(key: string, census: WaveCensus): void {
    this.byKey.set(key, census);
  }
  /** Member `name` is now `m` (undefined: gone), placed at `p`: every census counts it anew. */
  public update(name: string, m: FleetMember | undefined, p: Placed | undefined, admitted: ReadonlySet<string>): void {
    for (const census of this.byKey.values()) census.set(name, m, p, admitted);
  }
  public clear(): void {
    this.byKey.clear();
  }
}
