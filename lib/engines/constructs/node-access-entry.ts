import * as eks from 'aws-cdk-lib/aws-eks';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';

/** How an EKS cluster lets the node role in: `spec.cloudConfig.values.nodeAccess` of the eks-al2023 template. */
export type NodeAccess = 'accessEntry' | 'aws-auth';

/**
 * The EKS access entry of the node role: type EC2_LINUX, which EKS maps to system:nodes itself, so it carries no
 * kubernetesGroups and no access policy (EKS refuses both for this type), and its principal is the role of this very
 * stack, in the cluster's own account. With `aws-auth` the stack makes none and the operator maps the role in the
 * aws-auth ConfigMap (docs/node-configs.md). moto's CloudFormation skips this type: tests assert it on the template.
 */
export function nodeAccessEntry(scope: Construct, clusterName: string, role: iam.IRole): eks.CfnAccessEntry {
  return new eks.CfnAccessEntry(scope, 'NodeAccessEntry', {
    clusterName,
    principalArn: role.roleArn,
    type: 'EC2_LINUX',
  });
}
