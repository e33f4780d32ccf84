/**
 * Drain before terminate, in the synthesized worker stack: a termination lifecycle hook, an encrypted TLS-only queue
 * that only EventBridge's rules for this stack may write to, the four rules aws-node-termination-handler's queue mode
 * reads, the handler's least-privilege policy and the outputs it is configured from; and a cluster can opt out.
 */
import { Match } from 'aws-cdk-lib/assertions';
import { OUTPUTS } from '../../../lib/engines/stacks/worker-stack';
import { example, variant } from '../../helpers/clusters';
import { idsOfType, synthCluster } from '../../helpers/synth';
import { Json } from '../../helpers/json';

const drained = synthCluster(example('prod-eu1'));

test('a termination lifecycle hook holds each terminating node for the heartbeat, then continues', () => {
  drained.template.hasResourceProperties('AWS::AutoScaling::LifecycleHook', {
    AutoScalingGroupName: { Ref: 'PoolGroupASG2416841C' },
    LifecycleTransition: 'autoscaling:EC2_INSTANCE_TERMINATING',
    HeartbeatTimeout: 300,
    DefaultResult: 'CONTINUE',
  });
});

test("the heartbeat is the cluster's own", () => {
  const s = synthCluster(variant('prod-eu1', (r) => (r.spec.pool.drain = { heartbeatTimeoutSeconds: 900 })));
  s.template.hasResourceProperties('AWS::AutoScaling::LifecycleHook', { HeartbeatTimeout: 900 });
});

test('the queue is encrypted and refuses any request without TLS', () => {
  drained.template.hasResourceProperties('AWS::SQS::Queue', {
    SqsManagedSseEnabled: true,
    MessageRetentionPeriod: 300,
  });
  drained.template.hasResourceProperties('AWS::SQS::QueuePolicy', {
    PolicyDocument: {
      Statement: Match.arrayWith([
        Match.objectLike({
          Effect: 'Deny',
          Action: 'sqs:*',
          Condition: { Bool: { 'aws:SecureTransport': 'false' } },
          Principal: { AWS: '*' },
        }),
        Match.objectLike({
          Effect: 'Allow',
          Action: Match.arrayWith(['sqs:SendMessage']),
          Principal: { Service: 'events.amazonaws.com' },
          Condition: { ArnEquals: { 'aws:SourceArn': Match.anyValue() } },
        }),
      ]),
    },
  });
});

test.each([
  ['aws.autoscaling', 'EC2 Instance-terminate Lifecycle Action'],
  ['aws.ec2', 'EC2 Spot Instance Interruption Warning'],
  ['aws.ec2', 'EC2 Instance Rebalance Recommendation'],
  ['aws.ec2', 'EC2 Instance State-change Notification'],
])('an EventBridge rule sends %s "%s" to the queue', (source, detailType) => {
  drained.template.hasResourceProperties('AWS::Events::Rule', {
    EventPattern: Match.objectLike({ source: [source], 'detail-type': [detailType] }),
    State: 'ENABLED',
    Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^DrainQueue'), 'Arn'] } })],
  });
});

test("the lifecycle rule listens to this cluster's group only", () => {
  drained.template.hasResourceProperties('AWS::Events::Rule', {
    EventPattern: {
      source: ['aws.autoscaling'],
      'detail-type': ['EC2 Instance-terminate Lifecycle Action'],
      detail: { AutoScalingGroupName: [{ Ref: 'PoolGroupASG2416841C' }] },
    },
  });
});

test('the group carries the tag the handler checks, outside the launch template (no roll)', () => {
  drained.template.hasResourceProperties('AWS::AutoScaling::AutoScalingGroup', {
    Tags: Match.arrayWith([{ Key: 'aws-node-termination-handler/managed', PropagateAtLaunch: true, Value: 'true' }]),
  });
  const lt = Object.values<Json>(drained.json.Resources).find((r) => r.Type === 'AWS::EC2::LaunchTemplate');
  expect(JSON.stringify(lt)).not.toContain('aws-node-termination-handler');
});

test('the handler\'s policy: its queue, this group\'s lifecycle actions, and the describe calls AWS scopes to "*" only', () => {
  drained.template.hasResourceProperties('AWS::IAM::ManagedPolicy', {
    PolicyDocument: {
      Statement: [
        {
          Action: ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl'],
          Effect: 'Allow',
          Resource: { 'Fn::GetAtt': [Match.stringLikeRegexp('^DrainQueue'), 'Arn'] },
        },
        {
          Action: 'autoscaling:CompleteLifecycleAction',
          Effect: 'Allow',
          Resource: {
            'Fn::Join': [
              '',
              [
                'arn:',
                { Ref: 'AWS::Partition' },
                ':autoscaling:eu-west-1:111111111111:autoScalingGroup:*:autoScalingGroupName/',
                { Ref: 'PoolGroupASG2416841C' },
              ],
            ],
          },
        },
        {
          Action: ['autoscaling:DescribeAutoScalingInstances', 'autoscaling:DescribeTags', 'ec2:DescribeInstances'],
          Effect: 'Allow',
          Resource: '*',
        },
      ],
    },
  });
});

test('the queue URL and the handler policy are outputs', () => {
  expect(Object.keys(drained.json.Outputs)).toEqual(
    expect.arrayContaining([OUTPUTS.terminationQueueUrl, OUTPUTS.terminationHandlerPolicyArn]),
  );
  drained.template.hasOutput(OUTPUTS.terminationQueueUrl, { Value: { Ref: Match.stringLikeRegexp('^DrainQueue') } });
});

test('drain.enabled: false opts the cluster out: no hook, queue, rules, policy, tag or outputs', () => {
  // WHEN
  const s = synthCluster(variant('prod-eu1', (r) => (r.spec.pool.drain = { enabled: false })));
  // THEN
  for (const type of [
    'AWS::AutoScaling::LifecycleHook',
    'AWS::SQS::Queue',
    'AWS::SQS::QueuePolicy',
    'AWS::Events::Rule',
    'AWS::IAM::ManagedPolicy',
  ])
    expect(idsOfType(s.json, type)).toEqual([]);
  expect(Object.keys(s.json.Outputs)).not.toContain(OUTPUTS.terminationQueueUrl);
  expect(s.text).not.toContain('aws-node-termination-handler');
});
