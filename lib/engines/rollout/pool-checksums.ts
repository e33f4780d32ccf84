import { canonicalJson } from '../../model/cloudconfig/canonical-json';
import { sha256Hex } from '../../model/cloudconfig/checksum';
import { DEFAULT_POOL, poolsOf } from '../../model/cluster/pools/pools';
import { WorkerCluster } from '../../model/cluster/schema/schema';

/**
 * A fleet rollout compares one checksum per cluster (desired against live). A cluster of several pools rolls when any
 * pool's config changes, so the checksum the gate compares covers every pool: the digest of each pool's checksum by
 * name. A cluster whose only pool is `default` compares that pool's checksum itself, as before pools existed (the
 * same value as its stack's ConfigChecksum output and status.cloudConfigChecksum).
 */
export function combinedChecksum(byPool: ReadonlyMap<string, string>): string | undefined {
  if (byPool.size === 0) return undefined;
  if (byPool.size === 1 && byPool.has(DEFAULT_POOL)) return byPool.get(DEFAULT_POOL);
  const sorted = [...byPool].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `pools:${sha256Hex(canonicalJson(Object.fromEntries(sorted)))}`;
}

/**
 * The desired checksum of every pool of a cluster, by pool name, when the gate must combine them (more than one pool,
 * or one pool that is not `default`); undefined for a single-pool cluster, whose one checksum is compared as it is.
 */
export function poolChecksums(
  cluster: WorkerCluster,
  configs: ReadonlyMap<string, { readonly checksum: string }> | undefined,
): ReadonlyMap<string, string> | undefined {
  if (!configs || !combinesPools(cluster)) return undefined;
  const out = new Map<string, string>();
  for (const p of poolsOf(cluster.spec)) {
    const c = configs.get(p.name);
    if (c) out.set(p.name, c.checksum);
  }
  return out;
}

/** Whether the gate combines the cluster's pools: it has more than one, or one that is not `default`. */
export function combinesPools(cluster: WorkerCluster): boolean {
  const pools = poolsOf(cluster.spec);
  return !(pools.length === 1 && pools[0].name === DEFAULT_POOL);
}
