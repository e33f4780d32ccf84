import { canonicalJson } from '../../model/cloudconfig/canonical-json';
import { primaryPool } from '../../model/cluster/pools';
import { sha256Hex } from '../../model/cloudconfig/checksum';
import { WorkerCluster } from '../../model/cluster/schema';

/**
 * The inputs besides the config bytes that replace every node when they change (docs/concepts.md, "What rolls the nodes"):
 * the machine image, the instance types, the root volume, the group's subnets, and the launch configuration switch.
 * Their digest is recorded with each successful apply (status.rollout.appliedNodeKey), so that a new AMI waits for
 * its wave like a new config does.
 */
export function nodeKey(cluster: WorkerCluster): string {
  const p = primaryPool(cluster.spec);
  return sha256Hex(
    canonicalJson({
      machineImage: p.machineImage,
      instanceTypes: p.instanceTypes,
      rootVolume: p.rootVolume,
      subnetIds: cluster.spec.network.subnetIds,
      legacy: p.legacyLaunchConfiguration,
    }),
  ).slice(0, 16);
}
