/**
 * Rolls gated by the nodes' own health, in the synthesized worker stack: the rolling update waits for each batch's
 * signals (PauseTime = the signal timeout), the group's creation waits for its first nodes, processes that would
 * fight the roll are suspended, and the node role may signal only its own stack.
 */
import { Match } from 'aws-cdk-lib/assertions';
import { WORKER_GROUP_LOGICAL_ID } from '../../../lib/core/naming';
import { example, variant } from '../../helpers/clusters';
import { idsOfType, synthCluster } from '../../helpers/synth';
import { Json } from '../../helpers/json';

const GROUP = 'AWS::AutoScaling::AutoScalingGroup';
const SUSPENDED = ['HealthCheck', 'ReplaceUnhealthy', 'AZRebalance', 'AlarmNotification', 'ScheduledActions'];

test.each([
  ['launch template', example('prod-eu1')],
  ['legacy launch configuration', example('edge-ap1')],
])(
  'the node config signals the group it belongs to (%s): its logical id is the one the config names',
  (_what, cluster) => {
    // WHEN
    const s = synthCluster(cluster);
    // THEN
    expect(idsOfType(s.json, GROUP)).toEqual([WORKER_GROUP_LOGICAL_ID]);
  },
);

test("by default each batch waits for its nodes' SUCCESS signals, up to PauseTime, with the fighting processes suspended", () => {
  // GIVEN prod-eu1: maxBatchSize 2, minInstancesInService 3, pauseTime PT10M, signals by default
  // WHEN
  const s = synthCluster(example('prod-eu1'));
  // THEN
  s.template.hasResource(GROUP, {
    UpdatePolicy: {
      AutoScalingRollingUpdate: {
        MaxBatchSize: 2,
        MinInstancesInService: 3,
        PauseTime: 'PT10M',
        WaitOnResourceSignals: true,
        MinSuccessfulInstancesPercent: 100,
        SuspendProcesses: SUSPENDED,
      },
      AutoScalingScheduledAction: { IgnoreUnmodifiedGroupSizeProperties: true },
    },
  });
});

test.each([
  { what: 'desired capacity set', mutate: (r: Json) => (r.spec.pool.desiredCapacity = 4), count: 4 },
  {
    what: 'desired capacity unset: the group starts at minSize',
    mutate: (r: Json) => delete r.spec.pool.desiredCapacity,
    count: 3,
  },
])('the creation waits for every first node ($what)', ({ mutate, count }) => {
  // GIVEN
  const cluster = variant('prod-eu1', (r) => {
    r.spec.pool.minSize = 3;
    mutate(r);
    r.spec.pool.rollingUpdate.minSuccessfulInstancesPercent = 75;
  });
  // WHEN
  const s = synthCluster(cluster);
  // THEN
  s.template.hasResource(GROUP, {
    CreationPolicy: {
      ResourceSignal: { Count: count, Timeout: 'PT10M' },
      AutoScalingCreationPolicy: { MinSuccessfulInstancesPercent: 75 },
    },
    UpdatePolicy: Match.objectLike({
      AutoScalingRollingUpdate: Match.objectLike({ MinSuccessfulInstancesPercent: 75 }),
    }),
  });
});

test('a group that starts empty has no creation policy (there is no node to wait for)', () => {
  // GIVEN
  const cluster = variant('prod-eu1', (r) => {
    r.spec.pool.minSize = 0;
    delete r.spec.pool.desiredCapacity;
    r.spec.pool.rollingUpdate.minInstancesInService = 0;
  });
  // WHEN
  const group = Object.values<Json>(synthCluster(cluster).json.Resources).find((r) => r.Type === GROUP);
  // THEN
  expect(group.CreationPolicy).toBeUndefined();
  expect(group.UpdatePolicy.AutoScalingRollingUpdate.WaitOnResourceSignals).toBe(true);
});

test('waitOnResourceSignals: false turns the gate off: a plain pause between batches, no creation policy', () => {
  // GIVEN
  const cluster = variant('prod-eu1', (r) => {
    r.spec.pool.rollingUpdate.waitOnResourceSignals = false;
    r.spec.pool.rollingUpdate.pauseTime = 'PT2M';
  });
  // WHEN
  const group = Object.values<Json>(synthCluster(cluster).json.Resources).find((r) => r.Type === GROUP);
  // THEN
  expect(group.CreationPolicy).toBeUndefined();
  expect(group.UpdatePolicy.AutoScalingRollingUpdate).toEqual({
    MaxBatchSize: 2,
    MinInstancesInService: 3,
    PauseTime: 'PT2M',
    SuspendProcesses: SUSPENDED,
  }); // WaitOnResourceSignals left out: CloudFormation's default, false
});

test('the node role may signal its own stack only', () => {
  // WHEN
  const s = synthCluster(example('prod-eu1'));
  // THEN
  s.template.hasResourceProperties('AWS::IAM::Policy', {
    PolicyDocument: {
      Statement: Match.arrayWith([
        { Action: 'cloudformation:SignalResource', Effect: 'Allow', Resource: { Ref: 'AWS::StackId' } },
      ]),
    },
    Roles: [{ Ref: Match.stringLikeRegexp('^PoolRole') }],
  });
  const statements = Object.values<Json>(s.json.Resources)
    .filter((r) => r.Type === 'AWS::IAM::Policy')
    .flatMap((r) => r.Properties.PolicyDocument.Statement)
    .filter((st: Json) => [st.Action].flat().some((a: string) => a.startsWith('cloudformation:')));
  expect(statements).toEqual([
    { Action: 'cloudformation:SignalResource', Effect: 'Allow', Resource: { Ref: 'AWS::StackId' } },
  ]);
});
