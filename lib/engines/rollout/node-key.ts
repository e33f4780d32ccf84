import { canonicalJson } from '../../model/cloudconfig/canonical-json';
import { DEFAULT_POOL, NodePool, poolsOf } from '../../model/cluster/pools';
import { sha256Hex } from '../../model/cloudconfig/checksum';
import { WorkerCluster } from '../../model/cluster/schema';

/**
 * The inputs besides the config bytes that replace every node of a pool when they change (docs/concepts.md, "What
 * rolls the nodes"): the machine image, the instance types, the root volume, the group's subnets, the launch
 * configuration switch, and (for a pool that has one) its capacity, which is the group's MixedInstancesPolicy.
 */
function poolInputs(cluster: WorkerCluster, p: NodePool): Record<string, unknown> {
  return {
    machineImage: p.machineImage,
    instanceTypes: p.instanceTypes,
    rootVolume: p.rootVolume,
    subnetIds: p.subnetIds ?? cluster.spec.network.subnetIds,
    legacy: p.legacyLaunchConfiguration,
    // Only when set: a pool without capacity keeps the digest it had before pools existed.
    ...(p.capacity ? { capacity: p.capacity } : {}),
  };
}

/** The digest of one pool's node-replacing inputs (the reconciler's unit of a pool's own stack). */
function poolNodeKey(cluster: WorkerCluster, pool: NodePool): string {
  return sha256Hex(canonicalJson(poolInputs(cluster, pool))).slice(0, 16);
}

/**
 * The digest of every pool's node-replacing inputs. Recorded with each successful apply
 * (status.rollout.appliedNodeKey), so that a new AMI in any pool waits for its wave like a new config does.
 *
 * A cluster whose only pool is `default` (every `spec.pool` object) has exactly the digest it had before pools
 * existed: a daemon upgrade must not make every cluster of the fleet look changed and wait for a wave again.
 */
export function nodeKey(cluster: WorkerCluster): string {
  let key = nodeKeys.get(cluster);
  if (key === undefined) nodeKeys.set(cluster, (key = computeNodeKey(cluster)));
  return key;
}

/**
 * By validated cluster: the reconciler keeps the same object while the object's bytes stay the same, and each look
 * at a held cluster asks for its node key again.
 */
const nodeKeys = new WeakMap<WorkerCluster, string>();

function computeNodeKey(cluster: WorkerCluster): string {
  const pools = poolsOf(cluster.spec);
  const only = pools.length === 1 ? pools[0] : undefined;
  if (only?.name === DEFAULT_POOL) return poolNodeKey(cluster, only);
  const byPool = Object.fromEntries(pools.map((p) => [p.name, poolNodeKey(cluster, p)]));
  return sha256Hex(canonicalJson({ pools: byPool })).slice(0, 16);
}
