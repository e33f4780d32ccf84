import * as iam from 'aws-cdk-lib/aws-iam';

/**
 * The inline policy aws-cdk-lib makes on the shared role imported into a pool's stack (construct `<role>/Policy`) for
 * what it grants on its own: the group's `SignalResource` on its stack when it waits for its first nodes. By default
 * that policy is named after its logical id, `NodeRolePolicyB5B05F41` in every pool stack, and inline policies of one
 * role with the same name are one policy: the last stack to deploy wins, and deleting any of those stacks deletes it
 * under the others (issue 33, finding 7). So it takes the pool's name.
 *
 * Only the name changes: the policy keeps its logical id, so the launch template that depends on it (aws-cdk-lib makes
 * it depend on the role's policies) stays byte for byte what it was and `review` sees no change of it.
 */
export function grantsPolicyName(pool: string): string {
  return `grants-pool-${pool}`;
}

/** Names the policy of what aws-cdk-lib granted `role` in a pool's stack after its pool; nothing when it granted nothing. */
export function nameSharedRoleGrants(role: iam.IRole, pool: string): void {
  const policy = role.node.tryFindChild('Policy');
  if (policy === undefined) return;
  const resource = policy.node.defaultChild;
  if (!(policy instanceof iam.Policy) || !iam.CfnPolicy.isCfnPolicy(resource))
    throw new Error(`aws-cdk-lib changed: ${role.node.path}/Policy is not an inline policy`);
  resource.policyName = grantsPolicyName(pool);
}
