/**
 * What `worker-stacks bootstrap` asks IAM before it deploys the bootstrap stack: whether each role the live stack
 * made still exists. A role deleted behind CloudFormation's back is not made again by an update of the same template
 * (CloudFormation compares templates, not live resources), so bootstrap must see it itself
 * (lib/engines/deploy/change-sets.ts, deployBootstrapStack).
 */
export interface IamRolePort {
  /** True when IAM knows the role (GetRole), false when it answers NoSuchEntity; any other answer is thrown. */
  roleExists(roleName: string): Promise<boolean>;
}
