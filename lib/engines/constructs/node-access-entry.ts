import * as eks from 'aws-cdk-lib/aws-eks';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';

/**
 * The EKS access entry of the node role: type EC2_LINUX, which EKS maps to system:nodes itself, so it carries no
 * kubernetesGroups and no access policy (EKS refuses both for this type), and its principal is the role of this very
 * stack, in the cluster's own account. With `aws-auth` the stack makes none and the operator maps the role in the
 * aws-auth ConfigMap (docs/node-configs.md; the choice is `spec.cloudConfig.values.nodeAccess` of eks-al2023).
 * moto's CloudFormation skips this type: tests assert it on the template.
 */
export function nodeAccessEntry(scope: Construct, clusterName: string, role: iam.IRole): eks.CfnAccessEntry {
  return new eks.CfnAccessEntry(scope, 'NodeAccessEntry', {
    clusterName,
    principalArn: role.roleArn,
    type: 'EC2_LINUX',
  });
}
