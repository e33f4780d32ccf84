/**
 * strategy: instanceRefresh gives the group CloudFormation's AutoScalingInstanceRefresh update policy instead of
 * the rolling update, with the cluster's preferences; the group's creation still waits for its nodes' signals.
 */
import { variant } from '../../helpers/clusters';
import { synthCluster } from '../../helpers/synth';
import { Json } from '../../helpers/json';

const refresh = (ir?: Record<string, unknown>) =>
  variant('prod-eu1', (r) => {
    const ru = r.spec.pool.rollingUpdate;
    delete ru.maxBatchSize;
    delete ru.minInstancesInService;
    ru.strategy = 'instanceRefresh';
    if (ir) ru.instanceRefresh = ir;
  });

const group = (s: ReturnType<typeof synthCluster>) =>
  Object.values<Json>(s.json.Resources).find((r) => r.Type === 'AWS::AutoScaling::AutoScalingGroup');

test('every preference reaches the policy; no rolling update, no suspended processes', () => {
  // GIVEN prod-eu1 starts with minSize 3 nodes
  const cluster = refresh({
    minHealthyPercentage: 90,
    maxHealthyPercentage: 150,
    instanceWarmupSeconds: 120,
    checkpoints: [20, 50, 100],
    checkpointDelaySeconds: 600,
    bakeTimeSeconds: 900,
    alarms: ['prod-eu1-nodes-not-ready', 'prod-eu1-slo'],
    skipMatching: false,
  });
  // WHEN
  const g = group(synthCluster(cluster));
  // THEN
  expect(g.UpdatePolicy.AutoScalingInstanceRefresh).toEqual({
    Strategy: 'Rolling',
    Preferences: {
      MinHealthyPercentage: 90,
      MaxHealthyPercentage: 150,
      InstanceWarmup: 120,
      SkipMatching: false,
      CheckpointPercentages: [20, 50, 100],
      CheckpointDelay: 600,
      BakeTime: 900,
      AlarmSpecification: { Alarms: ['prod-eu1-nodes-not-ready', 'prod-eu1-slo'] },
    },
  });
  expect(g.UpdatePolicy.AutoScalingRollingUpdate).toBeUndefined();
  expect(g.CreationPolicy).toEqual({
    ResourceSignal: { Count: 3, Timeout: 'PT10M' },
    AutoScalingCreationPolicy: { MinSuccessfulInstancesPercent: 100 },
  });
});

test('without preferences: surge by default (100 % kept, up to 110 %), skip matching', () => {
  const g = group(synthCluster(refresh()));
  expect(g.UpdatePolicy.AutoScalingInstanceRefresh).toEqual({
    Strategy: 'Rolling',
    Preferences: { MinHealthyPercentage: 100, MaxHealthyPercentage: 110, SkipMatching: true },
  });
});
