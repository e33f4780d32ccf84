import { Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { UsageError } from '../../core/errors';

export interface NodeIdentityProps {
  /** The VPC of the nodes. */
  readonly vpc: ec2.IVpc;
  /** S3 objects the nodes may read: the bucket and the cluster's own key prefix. */
  readonly configObjects: { readonly bucketName: string; readonly keyPrefix: string };
  /** Secrets Manager secrets the nodes fetch at boot. @default none */
  readonly secretArns?: string[];
  /**
   * The name prefix of the cluster's own secrets (`worker-stacks/<cluster>/`): the role denies reading any other
   * secret, whatever `secretArns` names (the account's node boundary says the same). @default no such deny
   */
  readonly secretNamePrefix?: string;
  /** Security group of the nodes. @default a new one that allows all outbound */
  readonly securityGroup?: ec2.ISecurityGroup;
}

/** What every pool of a cluster shares: the nodes' security group and instance role. */
export interface NodeIdentity {
  readonly securityGroup: ec2.ISecurityGroup;
  readonly role: iam.Role;
}

/**
 * The node security group (`<scope>/SecurityGroup`) and the least-privilege instance role (`<scope>/Role`) under
 * `scope`, the construct `Pool` of the shared stack: the same construct paths, so the same logical ids, whether the
 * stack holds the pool `default` or not.
 */
export function createNodeIdentity(scope: Construct, props: NodeIdentityProps): NodeIdentity {
  if (!props.configObjects.keyPrefix.endsWith('/'))
    throw new UsageError(`configObjects.keyPrefix must end with '/', got ${props.configObjects.keyPrefix}`);
  const securityGroup =
    props.securityGroup ??
    new ec2.SecurityGroup(scope, 'SecurityGroup', {
      vpc: props.vpc,
      allowAllOutbound: true,
      description: 'Worker nodes',
    });

  const role = new iam.Role(scope, 'Role', {
    assumedBy: new iam.ServicePrincipal('ec2.amazonaws.com'),
    description: 'Worker node instance role',
  });
  const partition = Stack.of(scope).partition;
  // Only this cluster's own config objects: a node of one cluster cannot read another cluster's config.
  role.addToPolicy(
    new iam.PolicyStatement({
      actions: ['s3:GetObject'],
      resources: [`arn:${partition}:s3:::${props.configObjects.bucketName}/${props.configObjects.keyPrefix}*`],
    }),
  );
  if (props.secretArns?.length) {
    role.addToPolicy(
      new iam.PolicyStatement({
        actions: ['secretsmanager:GetSecretValue'],
        resources: [...props.secretArns].sort(),
      }),
    );
  }
  if (props.secretNamePrefix) {
    const { region, account } = Stack.of(scope);
    role.addToPolicy(
      new iam.PolicyStatement({
        sid: 'OnlyOwnSecrets',
        effect: iam.Effect.DENY,
        actions: ['secretsmanager:GetSecretValue'],
        notResources: [`arn:${partition}:secretsmanager:${region}:${account}:secret:${props.secretNamePrefix}*`],
      }),
    );
  }
  return { securityGroup, role };
}

/**
 * Each node signals its own health to its own stack (cloudconfig/_shared/signal-ready.sh.hbs; eks-al2023's nodes:
 * eks-signal-ready.sh.hbs). IAM has no condition for the logical resource, so the stack is the narrowest scope: never
 * another cluster's stack.
 */
export function signalStatement(stack: Stack): iam.PolicyStatement {
  return new iam.PolicyStatement({ actions: ['cloudformation:SignalResource'], resources: [stack.stackId] });
}
