import { ClusterSpec } from '../../model/cluster/schema/schema';
import { poolNamed, primaryPool } from '../../model/cluster/pools/pools';

/**
 * How a cluster's nodes roll, in one shape whether it is read from a template (review: what the stack will do) or
 * from the object (status), and in one sentence: "rolls 30 nodes in batches of 2, at least 3 in service, gated by
 * node signals (100% within PT10M), drained".
 */
export interface RolloutSummary {
  readonly strategy: 'rolling' | 'instanceRefresh';
  /** Nodes the group is kept at (desired capacity); null when the object leaves it to the group. */
  readonly nodes: number | null;
  readonly maxBatchSize: number | null;
  readonly minInstancesInService: number | null;
  readonly pauseTime: string | null;
  /** Each batch waits for its nodes' SUCCESS signals (rolling). */
  readonly waitOnResourceSignals: boolean;
  readonly minSuccessfulInstancesPercent: number | null;
  readonly instanceRefresh: InstanceRefreshSummary | null;
  /** A termination lifecycle hook holds terminating nodes for the drain. */
  readonly drained: boolean;
}

export interface InstanceRefreshSummary {
  readonly minHealthyPercentage: number | null;
  readonly maxHealthyPercentage: number | null;
  readonly checkpoints: readonly number[];
  readonly bakeTimeSeconds: number | null;
  readonly alarms: readonly string[];
}

/**
 * The summary of a (validated) object: of the pool named (each pool rolls with its own settings, in its own stack),
 * else of its primary pool (the shared stack's).
 */
export function specRollout(spec: ClusterSpec, poolName?: string): RolloutSummary {
  const pool = (poolName === undefined ? undefined : poolNamed(spec, poolName)) ?? primaryPool(spec);
  const ru = pool.rollingUpdate;
  const refresh = ru.strategy === 'instanceRefresh';
  const ir = ru.instanceRefresh;
  return {
    strategy: ru.strategy,
    nodes: pool.desiredCapacity ?? null,
    maxBatchSize: refresh ? null : ru.maxBatchSize,
    minInstancesInService: refresh ? null : ru.minInstancesInService,
    pauseTime: ru.pauseTime,
    waitOnResourceSignals: !refresh && ru.waitOnResourceSignals,
    minSuccessfulInstancesPercent: ru.minSuccessfulInstancesPercent,
    instanceRefresh: refresh
      ? {
          minHealthyPercentage: ir?.minHealthyPercentage ?? 100,
          maxHealthyPercentage: ir?.maxHealthyPercentage ?? 110,
          checkpoints: ir?.checkpoints ?? [],
          bakeTimeSeconds: ir?.bakeTimeSeconds ?? 0,
          alarms: ir?.alarms ?? [],
        }
      : null,
    drained: pool.drain.enabled,
  };
}

/** `30 nodes in batches of 2, at least 3 in service, gated by node signals (100% within PT10M), drained`. */
export function describeRollout(r: RolloutSummary): string {
  const nodes = r.nodes === null ? '' : `${r.nodes} node${r.nodes === 1 ? '' : 's'} `;
  const drain = r.drained ? 'drained' : 'not drained (no termination lifecycle hook)';
  if (r.strategy === 'instanceRefresh') {
    const ir = r.instanceRefresh;
    const parts = [
      `${ir?.minHealthyPercentage ?? 100}-${ir?.maxHealthyPercentage ?? 110}% healthy`,
      ...(ir?.checkpoints.length ? [`checkpoints at ${ir.checkpoints.join('/')}%`] : []),
      ...(ir?.bakeTimeSeconds ? [`bake ${ir.bakeTimeSeconds} s`] : []),
      ir?.alarms.length
        ? `gated by ${ir.alarms.length} alarm${ir.alarms.length === 1 ? '' : 's'}`
        : 'gated by EC2 health checks',
    ];
    return `${nodes}by instance refresh (${parts.join(', ')}), ${drain}`;
  }
  const gate = r.waitOnResourceSignals
    ? `gated by node signals (${r.minSuccessfulInstancesPercent ?? 100}% within ${r.pauseTime ?? 'PT5M'})`
    : `pause ${r.pauseTime ?? 'PT0S'} between batches, not gated by node signals`;
  return `${nodes}in batches of ${r.maxBatchSize ?? 1}, at least ${r.minInstancesInService ?? 0} in service, ${gate}, ${drain}`;
}
