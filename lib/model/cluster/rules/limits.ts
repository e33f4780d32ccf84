/**
 * AWS quotas that a cluster object can run into. They are checked at
 * validation time so that nobody discovers them halfway through a deployment.
 * Values are the AWS defaults; an account with raised quotas can raise them here.
 */
export const LIMITS = {
  /** Inbound rules per security group (VPC quota "Inbound or outbound rules per security group"). */
  inboundRulesPerSecurityGroup: 60,
  /** Listeners per Network Load Balancer. */
  listenersPerLoadBalancer: 50,
  /** Target groups attached to one Auto Scaling group. */
  targetGroupsPerAutoScalingGroup: 50,
  /** Instance type overrides in a mixed instances policy. */
  instanceTypesPerGroup: 40,
  /**
   * Pools of one cluster (spec.pools): each is a CloudFormation stack of its own beside the shared one, and every stack
   * counts against the account's stack quota per region (lib/model/cluster/pools/stack-quota.ts).
   */
  poolsPerCluster: 20,
  /** User tags (spec.tags): 50 per resource, less the tags worker-stacks adds itself (cluster, kubernetes.io/cluster/<name>) and room for more. */
  userTagsPerStack: 45,
  /** EC2 user data, in bytes, before base64. The bootstrap must stay far below it. */
  userDataBytes: 16 * 1024,
  /** Our own budget for the small user data. */
  smallUserDataBytes: 2 * 1024,
} as const;
