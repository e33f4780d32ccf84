/** Names that several parts (stacks, reconciler, review) must agree on. */

export const WORKER_STACK_PREFIX = 'WorkerStack-';
export const BOOTSTRAP_STACK_NAME = 'WorkerStacks-Bootstrap';
export const CLUSTER_TAG = 'worker-stacks.io/cluster';

/**
 * The stack tag that says which cluster object a stack belongs to (lib/engines/reconciler/tasks/claim.ts): a stack
 * belongs to one object, and no reconciler writes to a stack another object owns. Set on every change set, so on
 * every stack the reconciler creates or updates.
 */
export const OWNER_TAG = 'worker-stacks.io/owner';

/**
 * The owner tag's value for one object: `kubernetes:<namespace>/<name>` for a custom resource (a namespace editor
 * can make objects only in their own namespace, so no tenant can make an object with another tenant's owner value;
 * the value survives a delete and re-create of the same object, as AWS Load Balancer Controller's
 * `ingress.k8s.aws/stack` tag does), `file:<name>` for an object of the file store and the CDK app.
 */
export function stackOwner(name: string, namespace?: string): string {
  return namespace === undefined ? `file:${name}` : `kubernetes:${namespace}/${name}`;
}

/** The tag Kubernetes' AWS integrations find a cluster's instances and node security group by (value `owned`). */
export function kubernetesClusterTag(cluster: string): string {
  return `kubernetes.io/cluster/${cluster}`;
}

/**
 * Logical id of the worker Auto Scaling group (construct path Pool/Group/ASG, the same in every worker stack). The
 * node config names it in its SignalResource call; test/engines/stacks/node-signals.test.ts checks it against the template.
 */
export const WORKER_GROUP_LOGICAL_ID = 'PoolGroupASG2416841C';

export function workerStackName(cluster: string): string {
  return `${WORKER_STACK_PREFIX}${cluster}`;
}

/**
 * The own stack of a pool other than `default` (which lives in WorkerStack-<cluster>), as eksctl names its
 * nodegroup stacks. `-Pool-` has a capital, which no cluster name (a DNS label: lowercase) has: no other cluster's stack
 * can have this name or start with WorkerStack-<cluster>-Pool-, so the prefix that IAM (the node boundary's signal),
 * EventBridge (the drain rule) and review match reaches this cluster's pool stacks and nothing else. Stack names,
 * group names, ARNs and event patterns are case-sensitive.
 */
export function poolStackName(cluster: string, pool: string): string {
  return `${WORKER_STACK_PREFIX}${cluster}${POOL_SEPARATOR}${pool}`;
}

/** Between the cluster and the pool in a pool stack's name (poolStackName). */
export const POOL_SEPARATOR = '-Pool-';

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

// --- Many accounts (issue 13): the roles and the boundary each bootstrap stack makes. IAM names are account-wide while
// a bootstrap stack is per account and region, so every name carries the region (as cdk bootstrap's roles do).

/** Default prefix of the deployer role the daemon assumes (`--role-name`). */
export const DEFAULT_DEPLOYER_ROLE_NAME = 'worker-stacks-deployer';
/** The IAM path of every role a worker stack creates: the execution role may create roles under it only. */
export const WORKER_ROLE_PATH = '/worker-stacks/';

/** The deployer role of one account and region: `<prefix>-<region>`. */
export function deployerRoleName(region: string, prefix = DEFAULT_DEPLOYER_ROLE_NAME): string {
  return `${prefix}-${region}`;
}

/** The role CloudFormation assumes to change a worker stack (`RoleARN` of every change set). */
export function executionRoleName(region: string): string {
  return `worker-stacks-cfn-exec-${region}`;
}

/** The managed policy every role of a worker stack carries as its permissions boundary. */
export function nodeBoundaryName(region: string): string {
  return `worker-stacks-node-boundary-${region}`;
}

/** aws, aws-cn or aws-us-gov, from the region (ARNs built without a lookup). */
export function partitionOf(region: string): string {
  return region.startsWith('cn-') ? 'aws-cn' : region.startsWith('us-gov-') ? 'aws-us-gov' : 'aws';
}

export function roleArn(account: string, region: string, name: string, path = '/'): string {
  return `arn:${partitionOf(region)}:iam::${account}:role${path}${name}`;
}

export function nodeBoundaryArn(account: string, region: string): string {
  return `arn:${partitionOf(region)}:iam::${account}:policy${WORKER_ROLE_PATH}${nodeBoundaryName(region)}`;
}

/**
 * Secrets Manager name prefix of one cluster's secrets: `worker-stacks/<cluster>/`. A node reads only secrets under
 * its own cluster's prefix (the node boundary resolves it from the role's cluster tag); a cluster object should
 * name only such secrets (docs/security-model.md).
 */
export const SECRET_NAME_PREFIX = 'worker-stacks/';

export function clusterSecretPrefix(cluster: string): string {
  return `${SECRET_NAME_PREFIX}${cluster}/`;
}

/** The IAM policy variable for the cluster tag of the calling role: what the shared node boundary scopes by. */
export const PRINCIPAL_CLUSTER = `\${aws:PrincipalTag/${CLUSTER_TAG}}`;
