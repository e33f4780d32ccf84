import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { NodePool, poolsOf } from '../../model/cluster/pools';
import { WorkerCluster } from '../../model/cluster/schema';
import { poolView } from '../../model/cloudconfig/render';
import { AutoscalerTagsProps } from '../constructs/autoscaler-tags';

// What a pool's group takes from the object, the same in the shared stack (the pool default) and in a pool's own stack.

/** The subnets of a pool: its own subset of the cluster's (pool.subnetIds), else all of them. */
export function poolSubnets(subnets: ec2.ISubnet[], pool: NodePool): ec2.ISubnet[] {
  const own = pool.subnetIds;
  return own ? subnets.filter((s) => own.includes(s.subnetId)) : subnets;
}

/** What cluster-autoscaler reads from a pool's group: the labels and taints its nodes register with, its disk. */
export function autoscalerTagsOf(cluster: WorkerCluster, pool: NodePool): AutoscalerTagsProps {
  const values = poolView(cluster, pool.name).cluster.spec.cloudConfig.values;
  const i = poolsOf(cluster.spec).indexOf(pool);
  return {
    cluster: cluster.metadata.name,
    labels: values.nodeLabels,
    taints: values.nodeTaints,
    rootVolumeGiB: pool.rootVolume.sizeGiB,
    field: cluster.spec.pools ? `spec.pools[${i}]` : 'spec.pool',
  };
}
