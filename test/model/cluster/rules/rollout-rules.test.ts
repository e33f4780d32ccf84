import { validateCluster } from '../../../../lib/model/cluster/validate';
import { isoDuration, isoSeconds, rolloutProblems } from '../../../../lib/model/cluster/rules/rollout-rules';
import { BadRow, expectRefused } from '../../../helpers/bad-input';
import { rawExample, TEMPLATES } from '../../../helpers/clusters';
import { Json } from '../../../helpers/json';

/**
 * How a roll is gated, refused before anything reaches AWS: each row breaks one rollout setting of a valid example
 * and names the field path and the rule (what AWS refuses, or what could never work).
 */

const toRefresh = (r: Json, ir?: Record<string, unknown>) => {
  const ru = r.spec.pool.rollingUpdate;
  delete ru.maxBatchSize;
  delete ru.minInstancesInService;
  ru.strategy = 'instanceRefresh';
  if (ir) ru.instanceRefresh = ir;
};
const ALARM = 'arn:aws:cloudwatch:eu-west-1:111111111111:alarm:nodes-not-ready';

const rows: BadRow[] = [
  // --- signals -------------------------------------------------------------------
  {
    what: 'pauseTime shorter than the node timeout + boot',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.pool.rollingUpdate.pauseTime = 'PT5M'),
    path: 'spec.pool.rollingUpdate.pauseTime',
    message:
      /^PT5M is shorter than the node ready timeout \(spec\.cloudConfig\.values\.nodeReadyTimeoutSeconds: 540 s\) plus 60 s of boot: .* set pauseTime to at least PT10M or lower the timeout$/,
    rule: 'pause-time-covers-boot',
  },
  {
    what: 'node timeout raised past the pause time',
    example: 'staging-us1',
    mutate: (r) => (r.spec.cloudConfig.values.nodeReadyTimeoutSeconds = 900),
    path: 'spec.pool.rollingUpdate.pauseTime',
    message: /^PT10M is shorter than the node ready timeout \(.*: 900 s\) .* at least PT16M/,
    rule: 'pause-time-covers-boot',
  },
  {
    what: 'node timeout below a minute',
    example: 'staging-us1',
    mutate: (r) => (r.spec.cloudConfig.values.nodeReadyTimeoutSeconds = 10),
    path: 'spec.cloudConfig.values.nodeReadyTimeoutSeconds',
    message: /^10 is not a valid timeout in seconds \(a whole number 60-3540\)$/,
  },
  {
    what: 'minSuccessfulInstancesPercent over 100',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.pool.rollingUpdate.minSuccessfulInstancesPercent = 120),
    path: 'spec.pool.rollingUpdate.minSuccessfulInstancesPercent',
    message: /^120 is not a valid percentage \(a whole number 0-100\)$/,
  },
  {
    what: 'unknown strategy',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.pool.rollingUpdate.strategy = 'blueGreen'),
    path: 'spec.pool.rollingUpdate.strategy',
    message: /^"blueGreen" is not allowed \(expected one of "rolling", "instanceRefresh"\)$/,
  },

  // --- instance refresh ------------------------------------------------------------
  {
    what: 'instanceRefresh block with strategy rolling',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.pool.rollingUpdate.instanceRefresh = {}),
    path: 'spec.pool.rollingUpdate.instanceRefresh',
    message: /^applies only with strategy: instanceRefresh/,
    rule: 'rollout-strategy-fields',
  },
  {
    what: 'maxBatchSize with instanceRefresh',
    example: 'prod-eu1',
    mutate: (r) => (toRefresh(r), (r.spec.pool.rollingUpdate.maxBatchSize = 2)),
    path: 'spec.pool.rollingUpdate.maxBatchSize',
    message: /^applies only with strategy: rolling/,
    rule: 'rollout-strategy-fields',
  },
  {
    what: 'waitOnResourceSignals with instanceRefresh',
    example: 'prod-eu1',
    mutate: (r) => (toRefresh(r), (r.spec.pool.rollingUpdate.waitOnResourceSignals = true)),
    path: 'spec.pool.rollingUpdate.waitOnResourceSignals',
    message: /^an instance refresh does not wait on resource signals/,
    rule: 'rollout-strategy-fields',
  },
  {
    what: 'instanceRefresh with a launch configuration',
    example: 'edge-ap1',
    mutate: (r) => toRefresh(r),
    path: 'spec.pool.rollingUpdate.strategy',
    message: /^instanceRefresh needs a launch template/,
    rule: 'instance-refresh-launch-template',
  },
  {
    what: 'healthy range over 100',
    example: 'prod-eu1',
    mutate: (r) => toRefresh(r, { minHealthyPercentage: 50, maxHealthyPercentage: 200 }),
    path: 'spec.pool.rollingUpdate.instanceRefresh.maxHealthyPercentage',
    message: /^200 is more than 100 above minHealthyPercentage 50/,
    rule: 'healthy-percentage',
  },
  {
    what: '100 / 100: nothing could be replaced',
    example: 'prod-eu1',
    mutate: (r) => toRefresh(r, { maxHealthyPercentage: 100 }),
    path: 'spec.pool.rollingUpdate.instanceRefresh.maxHealthyPercentage',
    message: /^with minHealthyPercentage 100, maxHealthyPercentage must be above 100/,
    rule: 'healthy-percentage',
  },
  {
    what: 'maxHealthyPercentage below 100',
    example: 'prod-eu1',
    mutate: (r) => toRefresh(r, { maxHealthyPercentage: 90 }),
    path: 'spec.pool.rollingUpdate.instanceRefresh.maxHealthyPercentage',
    message: /^90 is not a valid percentage \(a whole number 100-200\)$/,
  },
  {
    what: 'checkpoints not ascending',
    example: 'prod-eu1',
    mutate: (r) => toRefresh(r, { checkpoints: [50, 20, 100] }),
    path: 'spec.pool.rollingUpdate.instanceRefresh.checkpoints[1]',
    message: /^20 does not follow 50: checkpoints are unique and ascending$/,
    rule: 'refresh-checkpoints',
  },
  {
    what: 'last checkpoint not 100',
    example: 'prod-eu1',
    mutate: (r) => toRefresh(r, { checkpoints: [20, 50] }),
    path: 'spec.pool.rollingUpdate.instanceRefresh.checkpoints[1]',
    message: /^50: the last checkpoint must be 100/,
    rule: 'refresh-checkpoints',
  },
  {
    what: 'checkpoint delay without checkpoints',
    example: 'prod-eu1',
    mutate: (r) => toRefresh(r, { checkpointDelaySeconds: 600 }),
    path: 'spec.pool.rollingUpdate.instanceRefresh.checkpointDelaySeconds',
    message: /^applies only with checkpoints/,
    rule: 'refresh-checkpoints',
  },
  {
    what: 'bake time over two days',
    example: 'prod-eu1',
    mutate: (r) => toRefresh(r, { bakeTimeSeconds: 172801 }),
    path: 'spec.pool.rollingUpdate.instanceRefresh.bakeTimeSeconds',
    message: /^172801 is not a valid bake time in seconds \(a whole number 0-172800\)$/,
  },
  {
    what: 'eleven refresh alarms',
    example: 'prod-eu1',
    mutate: (r) => toRefresh(r, { alarms: Array.from({ length: 11 }, (_, i) => `a${i}`) }),
    path: 'spec.pool.rollingUpdate.instanceRefresh.alarms',
    message: /^11 alarms exceed the AWS limit of 10 per instance refresh$/,
    rule: 'refresh-alarms',
  },
  {
    what: 'duplicate refresh alarm',
    example: 'prod-eu1',
    mutate: (r) => toRefresh(r, { alarms: ['a', 'a'] }),
    path: 'spec.pool.rollingUpdate.instanceRefresh.alarms[1]',
    message: /^duplicates spec\.pool\.rollingUpdate\.instanceRefresh\.alarms\[0\]/,
    rule: 'refresh-alarms',
  },

  // --- drain ---------------------------------------------------------------------
  {
    what: 'heartbeat below 30 s',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.pool.drain = { heartbeatTimeoutSeconds: 10 }),
    path: 'spec.pool.drain.heartbeatTimeoutSeconds',
    message: /^10 is not a valid heartbeat timeout in seconds \(a whole number 30-7200\)$/,
  },
  {
    what: 'unknown drain field',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.pool.drain = { enable: false }),
    path: 'spec.pool.drain.enable',
    message: /^unknown field/,
  },

  // --- rollback alarms -------------------------------------------------------------
  {
    what: 'rollback alarm not an alarm ARN',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.rollout = { rollbackAlarms: ['nodes-not-ready'] }),
    path: 'spec.rollout.rollbackAlarms[0]',
    message: /^"nodes-not-ready" is not a CloudWatch alarm ARN/,
  },
  {
    what: 'rollback alarm in another region',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.rollout = { rollbackAlarms: [ALARM.replace('eu-west-1', 'us-east-1')] }),
    path: 'spec.rollout.rollbackAlarms[0]',
    message: /^alarm is in region us-east-1, not the cluster's eu-west-1/,
    rule: 'reference-in-cluster',
  },
  {
    what: 'rollback alarm in another account',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.rollout = { rollbackAlarms: [ALARM.replace('111111111111', '999999999999')] }),
    path: 'spec.rollout.rollbackAlarms[0]',
    message: /^alarm is in account 999999999999, not the cluster's 111111111111$/,
    rule: 'reference-in-cluster',
  },
  {
    what: 'six rollback alarms',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.rollout = { rollbackAlarms: Array.from({ length: 6 }, (_, i) => `${ALARM}-${i}`) }),
    path: 'spec.rollout.rollbackAlarms',
    message: /^6 alarms exceed CloudFormation's limit of 5 rollback triggers per stack$/,
    rule: 'rollback-alarms',
  },
  {
    what: 'duplicate rollback alarm',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.rollout = { rollbackAlarms: [ALARM, ALARM] }),
    path: 'spec.rollout.rollbackAlarms[1]',
    message: /^duplicates spec\.rollout\.rollbackAlarms\[0\]/,
    rule: 'rollback-alarms',
  },
  {
    what: 'monitoring time over 180 minutes',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.rollout = { rollbackAlarms: [ALARM], monitoringTimeMinutes: 181 }),
    path: 'spec.rollout.monitoringTimeMinutes',
    message: /^181 is not a valid monitoring time in minutes \(a whole number 0-180\)$/,
  },
];

test.each(rows)('refused: $what', expectRefused);

test('every rollout problem of one object is reported at once', () => {
  // GIVEN three independent mistakes
  const raw = rawExample('prod-eu1');
  toRefresh(raw, { minHealthyPercentage: 0, maxHealthyPercentage: 100, checkpoints: [30] });
  raw.spec.pool.rollingUpdate.pauseTime = 'PT2M';
  raw.spec.rollout = { rollbackAlarms: [ALARM.replace('eu-west-1', 'eu-central-1')] };
  // WHEN
  const r = validateCluster(raw, { file: 'clusters/prod-eu1.yaml', templates: TEMPLATES });
  // THEN
  expect(r.problems.map((p) => p.path).sort()).toEqual([
    'spec.pool.rollingUpdate.instanceRefresh.checkpoints[0]',
    'spec.pool.rollingUpdate.pauseTime',
    'spec.rollout.rollbackAlarms[0]',
  ]);
});

test.each([
  {
    what: 'a valid instance refresh with surge, checkpoints, bake time and alarms',
    mutate: (r: Json) =>
      toRefresh(r, {
        minHealthyPercentage: 90,
        maxHealthyPercentage: 150,
        checkpoints: [20, 100],
        checkpointDelaySeconds: 600,
        bakeTimeSeconds: 900,
        alarms: ['a', 'b'],
      }),
  },
  {
    what: 'signals off: Json pause time',
    mutate: (r: Json) => Object.assign(r.spec.pool.rollingUpdate, { waitOnResourceSignals: false, pauseTime: 'PT1M' }),
  },
  {
    what: 'five rollback alarms and an hour of monitoring',
    mutate: (r: Json) =>
      (r.spec.rollout = {
        rollbackAlarms: Array.from({ length: 5 }, (_, i) => `${ALARM}-${i}`),
        monitoringTimeMinutes: 60,
      }),
  },
  { what: 'drain off', mutate: (r: Json) => (r.spec.pool.drain = { enabled: false }) },
])('accepted: $what', ({ mutate }) => {
  const raw = rawExample('prod-eu1');
  mutate(raw);
  expect(validateCluster(raw, { file: 'clusters/prod-eu1.yaml', templates: TEMPLATES }).problems).toEqual([]);
});

test('the rules read a half-typed object without throwing', () => {
  expect(() =>
    rolloutProblems({
      pool: { rollingUpdate: { strategy: 'instanceRefresh', instanceRefresh: { checkpoints: ['x', null] } } },
      rollout: { rollbackAlarms: 'nope' },
    }),
  ).not.toThrow();
});

test.each([
  ['PT10M', 600],
  ['PT1H', 3600],
  ['PT1M30S', 90],
  ['10 minutes', undefined],
])('isoSeconds(%s) = %s', (iso, seconds) => expect(isoSeconds(iso)).toBe(seconds));

test.each([
  [600, 'PT10M'],
  [960, 'PT16M'],
  [90, 'PT1M30S'],
  [3600, 'PT1H'],
  [0, 'PT0S'],
])('isoDuration(%s) = %s', (seconds, iso) => expect(isoDuration(seconds)).toBe(iso));
