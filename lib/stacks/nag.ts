import { Annotations, Stack, Validations } from 'aws-cdk-lib';
import { IConstruct } from 'constructs';
import { WorkerListeners } from '../constructs/worker-listeners';
import { WorkerPool } from '../constructs/worker-pool';

export interface WorkerStackFindingContext {
  readonly pool: WorkerPool;
  readonly listeners?: WorkerListeners;
  readonly bucketName: string;
  readonly keyPrefix: string;
  readonly internetFacing: boolean;
}

/**
 * cdk-nag AwsSolutions findings that are deliberate in a worker stack, each
 * with its reason, on the narrowest construct. Anything not acknowledged here
 * fails `cdk synth` and the nag test.
 */
export function acknowledgeWorkerStackFindings(stack: Stack, ctx: WorkerStackFindingContext): void {
  const ack = (scope: IConstruct, id: string, reason: string) => Validations.of(scope).acknowledge({ id, reason });

  ack(
    ctx.pool.role,
    `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::${ctx.bucketName}/${ctx.keyPrefix}*]`,
    "Config objects are content-addressed (their key is their checksum), so the role is scoped to the cluster's own prefix, not to one key; no other cluster's prefix is readable.",
  );
  ack(
    ctx.pool.autoScalingGroup,
    'AwsSolutions-AS3',
    'Scaling activity is followed through the stack events (reconciler) and the Kubernetes node objects; per-group SNS notifications would add a topic per cluster with no subscriber.',
  );
  if (ctx.pool.launchTemplate) {
    ack(
      ctx.pool.autoScalingGroup,
      'AwsSolutions-EC26',
      'The rule cannot resolve a mixed instances policy; the launch template root volume is encrypted, which test/constructs/worker-pool.test.ts asserts.',
    );
  }
  if (ctx.listeners) {
    ack(
      ctx.listeners.loadBalancer,
      'AwsSolutions-ELB2',
      'Network Load Balancer access logs exist only for TLS listeners; traffic to the nodes is observed with VPC flow logs, which the account baseline enables.',
    );
    if (ctx.internetFacing) {
      ack(
        ctx.listeners,
        'AwsSolutions-EC23',
        "The load balancer is internet-facing by the cluster's own spec.loadBalancer, and its allowedCidrs are the declared clients; the worker nodes themselves accept traffic only from the load balancer's security group.",
      );
    }
  }
  Annotations.of(stack).acknowledgeWarning(
    '@aws-cdk/aws-ec2:noSubnetRouteTableId',
    'Subnets are given explicitly by id so that synthesis needs no AWS lookup; nothing in a worker stack reads their route tables.',
  );
}
