import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { Construct } from 'constructs';
import { DEFAULT_POOL, NodePool, poolRules, poolsOf } from '../../model/cluster/pools/pools';
import { WorkerCluster } from '../../model/cluster/schema/schema';
import { poolView } from '../../model/cloudconfig/render';
import { AutoscalerTagsProps } from '../constructs/autoscaler-tags';
import { OWN_SECURITY_GROUP, PoolSecurityGroup } from '../constructs/pool-security-group';
import { WorkerPool, WorkerPoolProps } from '../constructs/worker-pool';
import { RenderedConfig } from '../../model/cloudconfig/render';
import { configUserData } from '../../model/cloudconfig/user-data';
import { defaultTemplates } from '../../platform/files/template-directory';
import { CLUSTER_TAG, kubernetesClusterTag } from '../../core/naming';

// What a pool's group takes from the object, the same in the shared stack (the pool default) and in a pool's own stack.

/** What a pool's group is made of besides the nodes' identity: its own fields, mapped to its group in this one place. */
export type PoolGroupProps = Omit<
  WorkerPoolProps,
  'vpc' | 'identity' | 'configObjects' | 'secretArns' | 'secretNamePrefix' | 'signalPolicyName'
>;

/** The pool's AMI id: its own, or its channel's release pinned by validation (lib/model/channel/pin-pools.ts). */
function pinnedImage(pool: NodePool): string {
  if (pool.machineImage !== undefined) return pool.machineImage;
  // validateCluster pins every pool that names a channel or refuses the object: an unpinned one is a caller's bug.
  throw new Error(
    `pool ${pool.name}: imageChannel ${String(pool.imageChannel)} was not pinned to an image before synthesis`,
  );
}

/**
 * A pool's group props from the object, the same for the shared stack's pool default and a pool's own stack: a new
 * pool field that its group reads is mapped here and nowhere else (docs/extending.md, "Adding a pool field").
 */
export function poolGroupProps(
  cluster: WorkerCluster,
  pool: NodePool,
  subnets: ec2.ISubnet[],
  config: RenderedConfig,
  configObjectUrl: string,
): PoolGroupProps {
  const name = cluster.metadata.name;
  return {
    subnets: poolSubnets(subnets, pool),
    instanceTypes: pool.instanceTypes,
    machineImageId: pinnedImage(pool),
    minSize: pool.minSize,
    maxSize: pool.maxSize,
    desiredCapacity: pool.desiredCapacity,
    rootVolumeSizeGiB: pool.rootVolume.sizeGiB,
    rootVolumeType: pool.rootVolume.type,
    rootDeviceName: pool.rootVolume.deviceName,
    rollingUpdate: pool.rollingUpdate,
    legacyLaunchConfiguration: pool.legacyLaunchConfiguration,
    detailedMonitoring: pool.detailedMonitoring,
    capacity: pool.capacity,
    associatePublicIpAddress: cluster.spec.network.associatePublicIpAddress,
    // The formats' own scripts are the repository's, whatever directory the templates came from.
    userData: configUserData(config, configObjectUrl, defaultTemplates()),
    // Constant for the cluster, so they may live in the launch template data (instances and volumes) without ever rolling nodes.
    fixedInstanceTags: { [CLUSTER_TAG]: name, [kubernetesClusterTag(name)]: 'owned' },
  };
}

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

/**
 * The pool's own security group with the rules narrowed to it (spec.securityGroupRules[].pools), given to its nodes;
 * nothing at all when no rule names the pool, so such a pool's template is what it was before rules could be narrowed.
 * `loadBalancerSecurityGroup` is called only when a narrowed rule's source is the load balancer.
 */
export function addPoolRules(
  scope: Construct,
  pool: WorkerPool,
  cluster: WorkerCluster,
  poolName: string,
  vpc: ec2.IVpc,
  loadBalancerSecurityGroup: () => ec2.ISecurityGroup | undefined,
): void {
  const rules = poolRules(cluster.spec, poolName);
  if (rules.length === 0) return;
  const group = new PoolSecurityGroup(scope, OWN_SECURITY_GROUP, {
    vpc,
    clusterName: cluster.metadata.name,
    poolName,
    rules,
    loadBalancerSecurityGroup: rules.some((r) => r.source.loadBalancer) ? loadBalancerSecurityGroup() : undefined,
  });
  pool.addSecurityGroup(group.securityGroup);
}

/** Whether a pool in a stack of its own has a narrowed rule from the load balancer (its stack imports that group). */
export function poolsImportLoadBalancerGroup(cluster: WorkerCluster): boolean {
  return poolsOf(cluster.spec).some(
    (p) => p.name !== DEFAULT_POOL && poolRules(cluster.spec, p.name).some((r) => r.source.loadBalancer),
  );
}
