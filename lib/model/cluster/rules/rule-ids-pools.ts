import { CelTwin, ClusterRule } from './cluster-rule';

// The named rules of the worker pools (pool-rules.ts; the CRD: lib/platform/kube/cel-pool-rules.ts, cel-rules.ts).

/** `field` of spec.pool and of each of spec.pools: a pool's rules are the same on both. */
const eachPool = (field: string) => [`spec.pool.${field}`, `spec.pools[].${field}`];
const CRD: CelTwin = 'crd';

export const POOL_RULES = [
  {
    id: 'pool-or-pools',
    paths: ['spec.pool'],
    says: 'Exactly one of spec.pool (one pool) and spec.pools (named pools).',
    cel: CRD,
  },
  {
    id: 'pool-size-order',
    paths: [...eachPool('minSize'), ...eachPool('desiredCapacity')],
    says: 'minSize ≤ desiredCapacity ≤ maxSize.',
    cel: CRD,
  },
  {
    id: 'min-in-service-below-max',
    paths: eachPool('rollingUpdate.minInstancesInService'),
    says: 'minInstancesInService is below maxSize, or no instance could ever be replaced.',
    cel: CRD,
  },
  {
    id: 'image-source',
    paths: eachPool('machineImage'),
    says: 'A pool gives exactly one of machineImage (an AMI id) and imageChannel.',
    cel: CRD,
  },
  {
    id: 'instance-types-limit',
    paths: eachPool('instanceTypes'),
    says: "At most AWS's number of instance types per Auto Scaling group.",
    cel: CRD,
  },
  {
    id: 'instance-types-unique',
    paths: eachPool('instanceTypes[]'),
    says: 'A pool names each instance type once.',
    cel: CRD,
  },
  {
    id: 'launch-configuration-one-type',
    paths: eachPool('instanceTypes'),
    says: 'A pool on a legacy launch configuration has exactly one instance type (mixed instances need a launch template).',
    cel: CRD,
  },
  {
    id: 'launch-configuration-no-capacity',
    paths: eachPool('capacity'),
    says: 'A pool on a legacy launch configuration has no capacity (on-demand base, spot): it has no mixed instances policy.',
    cel: CRD,
  },
  {
    id: 'one-architecture',
    paths: eachPool('instanceTypes[]'),
    says: "A pool's instance types are of one architecture: one machine image boots one.",
    cel: CRD,
  },
  {
    id: 'pool-architecture',
    paths: eachPool('instanceTypes[]'),
    says: "Every instance type of a pool runs the pool's stated architecture (its machine image's).",
    cel: CRD,
  },
  {
    id: 'on-demand-base-within-max',
    paths: eachPool('capacity.onDemandBaseCapacity'),
    says: 'The on-demand base capacity is at most maxSize.',
    cel: CRD,
  },
  {
    id: 'pools-limit',
    paths: ['spec.pools'],
    says: "At most the limit of pools per cluster (each pool but default is a stack, against the account's stack quota).",
    cel: CRD,
  },
  {
    id: 'pool-names-unique',
    paths: ['spec.pools[].name'],
    says: 'Pool names are unique.',
    cel: CRD,
  },
  {
    id: 'pool-subnets-of-cluster',
    paths: ['spec.pools[].subnetIds[]'],
    says: "A pool's subnets are some of spec.network.subnetIds.",
    cel: CRD,
  },
  {
    id: 'pool-values-own-fields',
    paths: ['spec.pools[].cloudConfig.values.nodeLabels', 'spec.pools[].cloudConfig.values.nodeTaints'],
    says: "A pool's labels and taints are its own fields (spec.pools[].labels, taints), not cloud-config values.",
    cel: { none: "a pool's cloudConfig.values keeps unknown fields, which CEL does not see" },
  },
  {
    id: 'cluster-only-values',
    paths: ['spec.pools[].cloudConfig.values'],
    says: "A pool sets only its own values and its template's; how a node joins the cluster is the cluster's alone.",
    cel: { none: "a pool's cloudConfig.values keeps unknown fields, which CEL does not see" },
  },
  {
    id: 'pool-names-known',
    paths: ['spec.listeners[].pools[]', 'spec.securityGroupRules[].pools[]'],
    says: 'A pool a listener or a security-group rule names is a pool of the cluster (default with spec.pool).',
    cel: CRD,
  },
  {
    id: 'pool-names-once',
    paths: ['spec.listeners[].pools[]', 'spec.securityGroupRules[].pools[]'],
    says: 'A listener or a security-group rule names each pool once.',
    cel: CRD,
  },
  {
    id: 'listener-takes-a-pool',
    paths: ['spec.listeners[]'],
    says: 'A listener that names no pools takes some pool: one without a NoSchedule or NoExecute taint of its own.',
    cel: CRD,
  },
] as const satisfies readonly ClusterRule[];
