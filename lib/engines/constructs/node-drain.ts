import { ArnFormat, Duration, Stack } from 'aws-cdk-lib';
import * as autoscaling from 'aws-cdk-lib/aws-autoscaling';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';

export interface NodeDrainProps {
  /** The worker group whose instances are drained before they terminate. */
  readonly autoScalingGroup: autoscaling.AutoScalingGroup;
  /** How long a terminating instance waits for the handler to complete its lifecycle action. @default 300 seconds */
  readonly heartbeatTimeout?: Duration;
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
  public readonly hook: autoscaling.LifecycleHook;
  /** What the handler's own role needs (attach it to the handler's IRSA / Pod Identity role). */
  public readonly handlerPolicy: iam.ManagedPolicy;

  constructor(scope: Construct, id: string, props: NodeDrainProps) {
    super(scope, id);
    const group = props.autoScalingGroup;
    this.hook = group.addLifecycleHook('DrainOnTerminate', {
      lifecycleTransition: autoscaling.LifecycleTransition.INSTANCE_TERMINATING,
      heartbeatTimeout: props.heartbeatTimeout ?? Duration.seconds(300),
      // CONTINUE: a missing or stuck handler delays a termination, it never blocks a roll or a scale-in.
      defaultResult: autoscaling.DefaultResult.CONTINUE,
    });

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
      detail: { AutoScalingGroupName: [group.autoScalingGroupName] },
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
      description: `What aws-node-termination-handler (queue mode) needs for ${group.node.path}: read and delete its queue's messages, complete the group's lifecycle actions`,
      statements: [
        new iam.PolicyStatement({
          actions: ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl'],
          resources: [this.queue.queueArn],
        }),
        new iam.PolicyStatement({
          actions: ['autoscaling:CompleteLifecycleAction'],
          resources: [
            stack.formatArn({
              service: 'autoscaling',
              resource: 'autoScalingGroup',
              resourceName: `*:autoScalingGroupName/${group.autoScalingGroupName}`,
              arnFormat: ArnFormat.COLON_RESOURCE_NAME,
            }),
          ],
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
