import { ArnFormat, Duration, Stack } from 'aws-cdk-lib';
import * as autoscaling from 'aws-cdk-lib/aws-autoscaling';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';

export interface NodeDrainProps {
  /** The shared stack's worker group (the pool default) whose instances are drained before they terminate. @default none */
  readonly autoScalingGroup?: autoscaling.AutoScalingGroup;
  /** How long a terminating instance of `autoScalingGroup` waits for the handler. @default 300 seconds */
  readonly heartbeatTimeout?: Duration;
  /**
   * The construct path of the pool default's group, named in the handler policy's description (which CloudFormation
   * cannot change in place: it stays the same whether the group is in the stack or not).
   */
  readonly groupPath: string;
  /**
   * The name prefix of the groups of the cluster's own pool stacks (`WorkerStack-<cluster>-Pool-`, CloudFormation names
   * a group after its stack): their lifecycle actions reach the queue and the handler may complete them. Given for every
   * spec.pools object, so that adding a pool changes nothing here. @default the group of `autoScalingGroup` only
   */
  readonly poolGroupPrefix?: string;
}

/** The shared stack's group's lifecycle hook: its terminations wait for the handler. */
function addSharedDrainHook(
  group: autoscaling.AutoScalingGroup,
  heartbeatTimeout?: Duration,
): autoscaling.LifecycleHook {
  return group.addLifecycleHook('DrainOnTerminate', {
    lifecycleTransition: autoscaling.LifecycleTransition.INSTANCE_TERMINATING,
    heartbeatTimeout: heartbeatTimeout ?? Duration.seconds(300),
    // CONTINUE: a missing or stuck handler delays a termination, it never blocks a roll or a scale-in.
    defaultResult: autoscaling.DefaultResult.CONTINUE,
  });
}

/** The name of a pool stack's drain hook (one per group: the group's own list names it). */
export const POOL_DRAIN_HOOK_NAME = 'worker-stacks-drain';

/**
 * A pool stack's lifecycle hook: its terminations wait for the handler, also while the stack is deleted.
 *
 * Inline in the group (LifecycleHookSpecificationList), not a resource of its own: a separate
 * AWS::AutoScaling::LifecycleHook references the group, so CloudFormation deletes it before the group, and a pool
 * removed from the object (its stack deleted) would lose its nodes undrained. Inline, the hook lives as long as the
 * group: the group's deletion scales it to zero with every termination held for the handler, whose queue and rules
 * are the shared stack's, which stays. Its name differs from the generated name of the resource it replaces in a pool
 * stack of an earlier release, so that update puts the new hook before deleting the old one, and the group is never
 * without one. (The shared stack keeps its hook resource: it goes only with the whole cluster, queue and rules with
 * it, and an upgrade leaves its template byte for byte.)
 */
export function addPoolDrainHook(group: autoscaling.AutoScalingGroup, heartbeatTimeout: Duration): void {
  const cfn = group.node.defaultChild as autoscaling.CfnAutoScalingGroup;
  cfn.lifecycleHookSpecificationList = [
    {
      lifecycleHookName: POOL_DRAIN_HOOK_NAME,
      lifecycleTransition: autoscaling.LifecycleTransition.INSTANCE_TERMINATING,
      heartbeatTimeout: heartbeatTimeout.toSeconds(),
      defaultResult: autoscaling.DefaultResult.CONTINUE,
    },
  ];
}

/** The tag aws-node-termination-handler (queue mode) checks on a group before it drains one of its nodes. */
export const NTH_MANAGED_TAG = 'aws-node-termination-handler/managed';

/**
 * Drain before terminate: a termination lifecycle hook holds each instance the group (a rolling update, an instance
 * refresh, a scale-in) is about to terminate, and EventBridge puts that and the EC2 notices that precede an
 * involuntary stop (spot interruption, rebalance recommendation, state change) on an encrypted, TLS-only queue.
 * aws-node-termination-handler in queue mode reads it, cordons and drains the node, then completes the lifecycle
 * action; without a handler the hook times out and the instance terminates after the heartbeat (CONTINUE).
 */
export class NodeDrain extends Construct {
  public readonly queue: sqs.Queue;
  /** The hook of the shared stack's group; undefined without one. */
  public readonly hook?: autoscaling.LifecycleHook;
  /** What the handler's own role needs (attach it to the handler's IRSA / Pod Identity role). */
  public readonly handlerPolicy: iam.ManagedPolicy;

  constructor(scope: Construct, id: string, props: NodeDrainProps) {
    super(scope, id);
    const group = props.autoScalingGroup;
    this.hook = group && addSharedDrainHook(group, props.heartbeatTimeout);
    const prefix = props.poolGroupPrefix;
    // The group names this drain covers, as EventBridge matches them (a name, or a prefix) and as IAM's ARNs name them.
    const names: (string | { prefix: string })[] = [
      ...(group ? [group.autoScalingGroupName] : []),
      ...(prefix ? [{ prefix }] : []),
    ];
    const arnNames = [...(group ? [group.autoScalingGroupName] : []), ...(prefix ? [`${prefix}*`] : [])];

    this.queue = new sqs.Queue(this, 'Queue', {
      // SSE-SQS: EventBridge can write to it without a key policy per cluster; every request must use TLS.
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // A notice older than the heartbeat is stale: the instance is gone or was released (aws-node-termination-handler's own setup uses 300 s).
      retentionPeriod: Duration.seconds(300),
    });

    const rule = (ruleId: string, description: string, pattern: events.EventPattern) =>
      new events.Rule(this, ruleId, {
        description,
        eventPattern: pattern,
        targets: [new targets.SqsQueue(this.queue)],
      });
    rule('TerminationRule', 'Termination lifecycle action of the worker group: drain the node before it goes', {
      source: ['aws.autoscaling'],
      detailType: ['EC2 Instance-terminate Lifecycle Action'],
      detail: { AutoScalingGroupName: names },
    });
    // EC2 notices carry only the instance id: the handler ignores instances that are not nodes of its cluster.
    rule('SpotInterruptionRule', 'Spot interruption warning: drain the node within the two-minute notice', {
      source: ['aws.ec2'],
      detailType: ['EC2 Spot Instance Interruption Warning'],
    });
    rule('RebalanceRule', 'Rebalance recommendation: the spot node is at elevated risk of interruption', {
      source: ['aws.ec2'],
      detailType: ['EC2 Instance Rebalance Recommendation'],
    });
    rule('StateChangeRule', 'Instance state change: a node stopping or terminating outside the group', {
      source: ['aws.ec2'],
      detailType: ['EC2 Instance State-change Notification'],
    });

    const stack = Stack.of(this);
    this.handlerPolicy = new iam.ManagedPolicy(this, 'HandlerPolicy', {
      description: `What aws-node-termination-handler (queue mode) needs for ${props.groupPath}: read and delete its queue's messages, complete the group's lifecycle actions`,
      statements: [
        new iam.PolicyStatement({
          actions: ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl'],
          resources: [this.queue.queueArn],
        }),
        new iam.PolicyStatement({
          actions: ['autoscaling:CompleteLifecycleAction'],
          resources: arnNames.map((name) =>
            stack.formatArn({
              service: 'autoscaling',
              resource: 'autoScalingGroup',
              resourceName: `*:autoScalingGroupName/${name}`,
              arnFormat: ArnFormat.COLON_RESOURCE_NAME,
            }),
          ),
        }),
        // Describe calls have no resource-level permissions (AWS allows only "*" for them).
        new iam.PolicyStatement({
          actions: ['autoscaling:DescribeAutoScalingInstances', 'autoscaling:DescribeTags', 'ec2:DescribeInstances'],
          resources: ['*'],
        }),
      ],
    });
  }
}
