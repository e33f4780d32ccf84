/** Names that several parts (stacks, reconciler, review) must agree on. */

export const WORKER_STACK_PREFIX = 'WorkerStack-';
export const BOOTSTRAP_STACK_NAME = 'WorkerStacks-Bootstrap';
export const CLUSTER_TAG = 'worker-stacks.io/cluster';

/** The tag Kubernetes' AWS integrations find a cluster's instances and node security group by (value `owned`). */
export function kubernetesClusterTag(cluster: string): string {
  return `kubernetes.io/cluster/${cluster}`;
}

/**
 * Logical id of the worker Auto Scaling group (construct path Pool/Group/ASG, the same in every worker stack). The
 * node config names it in its SignalResource call; test/stacks/node-signals.test.ts checks it against the template.
 */
export const WORKER_GROUP_LOGICAL_ID = 'PoolGroupASG2416841C';

export function workerStackName(cluster: string): string {
  return `${WORKER_STACK_PREFIX}${cluster}`;
}

/** One config bucket per account and region, made by the bootstrap stack. Deterministic: no lookups. */
export function configBucketName(account: string, region: string): string {
  return `worker-stacks-config-${account}-${region}`;
}

/** Every object of a cluster lives under its own prefix, which is all its instance role may read. */
export function configKeyPrefix(cluster: string): string {
  return `clusters/${cluster}/`;
}

/** Construct id of a bootstrap stack; its CloudFormation name is always BOOTSTRAP_STACK_NAME. */
export function bootstrapStackId(account: string, region: string): string {
  return `${BOOTSTRAP_STACK_NAME}-${account}-${region}`;
}
