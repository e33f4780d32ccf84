import { Annotations, Stack, Validations } from 'aws-cdk-lib';
import { Construct, IConstruct } from 'constructs';
import * as autoscaling from 'aws-cdk-lib/aws-autoscaling';
import { NodeDrain } from '../constructs/node-drain';
import { WorkerListeners } from '../constructs/worker-listeners';
import { WorkerPool } from '../constructs/worker-pool';
import type * as CdkNag from 'cdk-nag';
import { WORKER_GROUP_LOGICAL_ID } from '../../core/naming';
import { lazyModule } from '../../core/lazy-module';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded when nag runs (lib/core/lazy-module.ts)
const cdkNag = lazyModule(() => require('cdk-nag') as typeof CdkNag);

/** cdk-nag's AwsSolutions pack for `app`: the one place that loads cdk-nag, at the first synthesis that runs it. */
export function awsSolutionsChecks(app: Construct): CdkNag.AwsSolutionsChecks {
  return new (cdkNag().AwsSolutionsChecks)(app);
}

/** Runs the AwsSolutions pack when `app` synthesizes, as `cdk synth` does: a finding not acknowledged below fails it. */
export function addAwsSolutionsChecks(app: Construct): void {
  Validations.of(app).addPlugins(awsSolutionsChecks(app));
}

export interface WorkerStackFindingContext {
  /** The pool default, when the stack holds it. */
  readonly pool?: WorkerPool;
  /** The nodes' instance role. */
  readonly role: IConstruct;
  readonly listeners?: WorkerListeners;
  readonly drain?: NodeDrain;
  readonly bucketName: string;
  readonly keyPrefix: string;
  readonly internetFacing: boolean;
  /** The name prefix of the pool stacks' groups the drain covers (spec.pools objects). @default none */
  readonly poolGroupPrefix?: string;
}

/**
 * cdk-nag AwsSolutions findings that are deliberate in a worker stack, each
 * with its reason, on the narrowest construct. Anything not acknowledged here
 * fails `cdk synth` and the nag test.
 */
export function acknowledgeWorkerStackFindings(stack: Stack, ctx: WorkerStackFindingContext): void {
  const ack = (scope: IConstruct, id: string, reason: string) => Validations.of(scope).acknowledge({ id, reason });

  ack(
    ctx.role,
    `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::${ctx.bucketName}/${ctx.keyPrefix}*]`,
    "Config objects are content-addressed (their key is their checksum), so the role is scoped to the cluster's own prefix, not to one key; no other cluster's prefix is readable.",
  );
  if (ctx.pool) acknowledgeGroupFindings(ctx.pool);
  if (ctx.listeners) {
    ack(
      ctx.listeners.loadBalancer,
      'AwsSolutions-ELB2',
      "A Network Load Balancer writes access logs for its TLS listeners' connections only (none without a TLS listener); with one, the logs would need a delivery bucket with the log-delivery policy in each account and region, which the bootstrap stack does not make. Connections to every listener are observed with VPC flow logs, which the account baseline enables.",
    );
    if (ctx.internetFacing) {
      ack(
        ctx.listeners,
        'AwsSolutions-EC23',
        "The load balancer is internet-facing by the cluster's own spec.loadBalancer, and its allowedCidrs are the declared clients; the worker nodes themselves accept traffic only from the load balancer's security group.",
      );
    }
  }
  if (ctx.drain) {
    ack(
      ctx.drain.queue,
      'AwsSolutions-SQS3',
      'The queue carries termination and interruption notices that are stale after their 300 s retention; a message the handler cannot process is of no use later, and the lifecycle hook continues the termination after its heartbeat anyway.',
    );
    ack(
      ctx.drain.handlerPolicy,
      'AwsSolutions-IAM5[Resource::*]',
      'autoscaling:DescribeAutoScalingInstances, autoscaling:DescribeTags and ec2:DescribeInstances support no resource-level permissions: AWS accepts only "*" for them.',
    );
    ack(
      ctx.drain.handlerPolicy,
      `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:autoscaling:${stack.region}:${stack.account}:autoScalingGroup:*:autoScalingGroupName/<${WORKER_GROUP_LOGICAL_ID}>]`,
      "The wildcard is the group's id, which CloudFormation assigns; the ARN is fixed to this cluster's group by its name.",
    );
    if (ctx.poolGroupPrefix) {
      ack(
        ctx.drain.handlerPolicy,
        `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:autoscaling:${stack.region}:${stack.account}:autoScalingGroup:*:autoScalingGroupName/${ctx.poolGroupPrefix}*]`,
        "The groups of the cluster's own pool stacks: CloudFormation names each after its stack (WorkerStack-<cluster>-Pool-<pool>-...), so the prefix covers them, including pools added later, without a change to this policy.",
      );
    }
  }
  Annotations.of(stack).acknowledgeWarning(
    '@aws-cdk/aws-ec2:noSubnetRouteTableId',
    'Subnets are given explicitly by id so that synthesis needs no AWS lookup; nothing in a worker stack reads their route tables.',
  );
}

/** The findings of a pool's group, deliberate in the shared stack's pool and in every pool stack alike. */
export function acknowledgeGroupFindings(pool: {
  autoScalingGroup: autoscaling.AutoScalingGroup;
  launchTemplate?: unknown;
}): void {
  const ack = (scope: IConstruct, id: string, reason: string) => Validations.of(scope).acknowledge({ id, reason });
  ack(
    pool.autoScalingGroup,
    'AwsSolutions-AS3',
    'Scaling activity is followed through the stack events (reconciler) and the Kubernetes node objects; per-group SNS notifications would add a topic per cluster with no subscriber.',
  );
  if (pool.launchTemplate) {
    ack(
      pool.autoScalingGroup,
      'AwsSolutions-EC26',
      'The rule cannot resolve a mixed instances policy; the launch template root volume is encrypted, which test/engines/constructs/worker-pool.test.ts asserts.',
    );
  }
}
