import { LabelSelector } from '../../lib/platform/kube/label-selector';
import {
  overlappingShard,
  scopesOverlap,
  ShardOf,
  shardLeaseName,
  shardOwnership,
} from '../../lib/platform/kube/shards';

/**
 * The shards of a simulated world, as lib/platform/kube/shards.ts decides them without the API server: each candidate starts
 * in order and is refused when it overlaps a running one (shardGuard's rule); the running shards' monitor reports
 * the objects none selects (unowned) and those two select (shardOwnership). The reconciling processes still see
 * every object (one shard's daemon): what is modelled is ownership under label edits, not one daemon per shard.
 */
export type ShardConfig = 'one' | 'split';

/** `-l` of each daemon started, in order. `split`'s third overlaps both others, so it must be refused. */
const CANDIDATES: Readonly<Record<ShardConfig, readonly string[]>> = {
  one: [''],
  split: ['tier=canary', 'tier=general', 'tier in (canary,general)'],
};

/** The values a `tier` label takes in the simulator; `none` removes it (then no shard of `split` selects the object). */
export const TIERS = ['canary', 'general', 'none'] as const;
export type Tier = (typeof TIERS)[number];

export class SimShards {
  public readonly running: ShardOf[] = [];
  /** The candidates refused at start, by selector. */
  public readonly refused: string[] = [];

  constructor(public readonly config: ShardConfig) {
    for (const s of CANDIDATES[config]) {
      const scope = { selector: LabelSelector.parse(s) };
      const self = { lease: shardLeaseName(scope), scope };
      if (overlappingShard(self, this.running)) this.refused.push(s);
      else this.running.push(self);
    }
  }

  /**
   * The invariant: every object is owned by exactly one running shard, or reported as unowned; no two running shards
   * overlap. Ownership is counted here from the selectors themselves and compared with what the monitor reports.
   * Returns the violations.
   */
  public check(objects: readonly { readonly name: string; readonly labels?: Record<string, string> }[]): string[] {
    const out: string[] = [];
    for (const [i, a] of this.running.entries()) {
      for (const b of this.running.slice(i + 1))
        if (scopesOverlap(a.scope, b.scope))
          out.push(`[shards] the running shards ${a.lease} and ${b.lease} overlap: one was not refused at start`);
    }
    const report = shardOwnership(this.running, objects);
    for (const o of objects) {
      const owners = this.running.filter((s) => s.scope.selector.matches(o.labels)).map((s) => s.lease);
      const unowned = report.unowned.includes(o);
      const multiple = report.multiple.some(([m]) => m === o);
      if (owners.length > 1)
        out.push(
          `[shards] ${o.name} (labels ${JSON.stringify(o.labels ?? {})}) is owned by ${owners.length} shards: ${owners.join(', ')}`,
        );
      else if (owners.length === 0 && !unowned)
        out.push(
          `[shards] ${o.name} (labels ${JSON.stringify(o.labels ?? {})}) has no shard and is not reported as unowned`,
        );
      else if (owners.length === 1 && (unowned || multiple))
        out.push(
          `[shards] ${o.name} is owned by ${owners[0]} but reported as ${unowned ? 'unowned' : 'multiply owned'}`,
        );
    }
    return out;
  }
}

/** An object's labels with its `tier` set (or removed, for `none`). */
export function withTier(labels: Record<string, string> | undefined, tier: Tier): Record<string, string> | undefined {
  const rest = Object.fromEntries(Object.entries(labels ?? {}).filter(([k]) => k !== 'tier'));
  const next = tier === 'none' ? rest : { ...rest, tier };
  return Object.keys(next).length ? next : undefined;
}
