/**
 * What rolls the nodes, and what never does. CloudFormation's AutoScalingRollingUpdate replaces a group's instances
 * when the group's launch template (a new version: its LaunchTemplateData changed), launch configuration,
 * MixedInstancesPolicy or VPCZoneIdentifier changes, and on nothing else. Each row changes one input of an example
 * and states whether the launch template data changes and whether the nodes roll; README's table says the same.
 */
import { example, variant } from '../../helpers/clusters';
import { synthCluster } from '../../helpers/synth';
import { Json } from '../../helpers/json';
import { RollCause, rollCauses, rollKeyOf } from '../../../lib/engines/stacks/roll-key';

/** The group properties whose change starts a rolling update (besides the launch template's or configuration's own). */
const ROLLING_GROUP_PROPERTIES = [
  'LaunchConfigurationName',
  'LaunchTemplate',
  'MixedInstancesPolicy',
  'VPCZoneIdentifier',
];

function ofType(json: Json, type: string) {
  return Object.entries<Json>(json.Resources)
    .filter(([, r]) => r.Type === type)
    .sort(([a], [b]) => (a < b ? -1 : 1));
}

/** Everything a rolling update reacts to, as text: launch template data, launch configurations, the group's rolling properties. */
function launchData(json: Json): string {
  return JSON.stringify([
    ofType(json, 'AWS::EC2::LaunchTemplate').map(([id, r]) => [id, r.Properties.LaunchTemplateData]),
    ofType(json, 'AWS::AutoScaling::LaunchConfiguration').map(([id, r]) => [id, r.Properties]),
  ]);
}
function rollingGroup(json: Json): string {
  return JSON.stringify(
    ofType(json, 'AWS::AutoScaling::AutoScalingGroup').map(([id, r]) => [
      id,
      ROLLING_GROUP_PROPERTIES.map((p) => r.Properties[p]),
    ]),
  );
}

type Mutation = (raw: Json) => void;
/** what, example, launch template data changes, nodes roll, the change, and what the example has before it. */
const ROWS: Array<[string, string, boolean, boolean, Mutation, Mutation?]> = [
  // what rolls
  ['node config bytes (a template value)', 'prod-eu1', true, true, (r) => (r.spec.cloudConfig.values.maxPods = 99)],
  ['node config bytes (a template value)', 'staging-us1', true, true, (r) => (r.spec.cloudConfig.values.maxPods = 99)],
  ['node config bytes (a template value)', 'edge-ap1', true, true, (r) => (r.spec.cloudConfig.values.maxPods = 99)],
  ['machine image', 'prod-eu1', true, true, (r) => (r.spec.pool.machineImage = 'ami-0123456789abcdef0')],
  ['machine image', 'edge-ap1', true, true, (r) => (r.spec.pool.machineImage = 'ami-0123456789abcdef0')],
  [
    'instance type (one type: launch template)',
    'staging-us1',
    true,
    true,
    (r) => (r.spec.pool.instanceTypes = ['t3.xlarge']),
  ],
  [
    'instance types (several: mixed instances policy)',
    'prod-eu1',
    false,
    true,
    (r) => r.spec.pool.instanceTypes.push('m7i.xlarge'),
  ],
  ['root volume size', 'prod-eu1', true, true, (r) => (r.spec.pool.rootVolume = { sizeGiB: 200 })],
  ['detailed monitoring', 'prod-eu1', true, true, (r) => (r.spec.pool.detailedMonitoring = true)],
  [
    'node ready timeout (node config: the signal script)',
    'prod-eu1',
    true,
    true,
    (r) => (r.spec.cloudConfig.values.nodeReadyTimeoutSeconds = 480),
  ],
  [
    'node subnets',
    'staging-us1',
    false,
    true,
    (r) => (r.spec.network.subnetIds = ['subnet-1a2b3c4d', 'subnet-99999999']),
  ],
  // what never rolls
  ['tags: a new one', 'prod-eu1', false, false, (r) => (r.spec.tags.owner = 'someone')],
  ['tags: a changed value', 'staging-us1', false, false, (r) => (r.spec.tags = { team: 'other' })],
  ['tags: a changed value', 'edge-ap1', false, false, (r) => (r.spec.tags.team = 'other')],
  [
    'listeners: one more',
    'prod-eu1',
    false,
    false,
    (r) => r.spec.listeners.push({ name: 'extra', port: 8443, nodePort: 30999 }),
  ],
  ['listeners: a renamed one', 'prod-eu1', false, false, (r) => (r.spec.listeners[0].name = 'renamed')],
  ['listeners: a changed port', 'edge-ap1', false, false, (r) => (r.spec.listeners[0].port = 7101)],
  [
    'security group rules',
    'prod-eu1',
    false,
    false,
    (r) =>
      r.spec.securityGroupRules.push({
        description: 'more',
        protocol: 'tcp',
        port: 9100,
        source: { cidr: '10.9.0.0/16' },
      }),
  ],
  [
    'a security group rule narrowed to the pool, the first one',
    'prod-eu1',
    true,
    true,
    (r) => (r.spec.securityGroupRules[0].pools = ['default']),
  ],
  [
    'a security group rule narrowed to a pool that has a narrowed rule already',
    'prod-eu1',
    false,
    false,
    (r) => (r.spec.securityGroupRules[1].pools = ['default']),
    // before: one rule narrowed to the pool already (its group is on the launch template)
    (r) => (r.spec.securityGroupRules[0].pools = ['default']),
  ],
  [
    'group sizes',
    'prod-eu1',
    false,
    false,
    (r) => Object.assign(r.spec.pool, { minSize: 4, maxSize: 40, desiredCapacity: 5 }),
  ],
  [
    'rolling-update settings',
    'prod-eu1',
    false,
    false,
    (r) => Object.assign(r.spec.pool.rollingUpdate, { maxBatchSize: 3, pauseTime: 'PT10M' }),
  ],
  [
    'rolling-update settings: signals off',
    'staging-us1',
    false,
    false,
    (r) => (r.spec.pool.rollingUpdate.waitOnResourceSignals = false),
  ],
  [
    'rolling-update strategy: instance refresh',
    'prod-eu1',
    false,
    false,
    (r) => (
      delete r.spec.pool.rollingUpdate.maxBatchSize,
      delete r.spec.pool.rollingUpdate.minInstancesInService,
      (r.spec.pool.rollingUpdate.strategy = 'instanceRefresh')
    ),
  ],
  ['drain: off', 'prod-eu1', false, false, (r) => (r.spec.pool.drain = { enabled: false })],
  ['drain: another heartbeat', 'edge-ap1', false, false, (r) => (r.spec.pool.drain = { heartbeatTimeoutSeconds: 900 })],
  [
    'load balancer scheme and clients',
    'prod-eu1',
    false,
    false,
    (r) =>
      Object.assign(r.spec.loadBalancer, {
        scheme: 'internet-facing',
        allowedCidrs: ['192.0.2.0/24', '2001:db8::/32'],
      }),
  ],
];

/** The roll key's cause of each row that rolls (lib/engines/stacks/roll-key.ts): what status, logs and review say. */
const CAUSES: Readonly<Record<string, RollCause[]>> = {
  'node config bytes (a template value)': ['config'],
  'machine image': ['image'],
  'instance type (one type: launch template)': ['instance types'],
  'instance types (several: mixed instances policy)': ['instance types'],
  'root volume size': ['root volume'],
  'detailed monitoring': ['launch template'],
  'node ready timeout (node config: the signal script)': ['config'],
  'node subnets': ['subnets'],
  'a security group rule narrowed to the pool, the first one': ['launch template'],
};

test.each(ROWS)(
  '%s (%s): launch template data changes: %s, nodes roll: %s',
  // A default on base keeps the function's length at 5: jest takes a sixth declared parameter for a done callback and
  // waits for it on the rows of five.
  // eslint-disable-next-line @typescript-eslint/no-useless-default-assignment -- not useless: see above
  (what, name, launchDataChanges, rolls, mutate, base: Mutation | undefined = undefined) => {
    // GIVEN
    const before = synthCluster(base ? variant(name, base) : example(name));
    // WHEN
    const after = synthCluster(
      variant(name, (raw) => {
        raw.spec.tags ??= {};
        base?.(raw);
        mutate(raw);
      }),
    );
    // THEN
    expect(after.text).not.toBe(before.text);
    const launchDataChanged = launchData(after.json) !== launchData(before.json);
    expect({
      launchData: launchDataChanged,
      rolls: launchDataChanged || rollingGroup(after.json) !== rollingGroup(before.json),
    }).toEqual({ launchData: launchDataChanges, rolls });
    // and the roll key, which every gate reads, says the same, with the cause
    const causes = rollCauses(rollKeyOf(before.json), rollKeyOf(after.json));
    expect(causes).toEqual(rolls ? CAUSES[what] : []);
  },
);

test('spec.rollout changes no byte of the template: the alarms go on the change set, not into the stack', () => {
  // GIVEN / WHEN
  const before = synthCluster(example('prod-eu1'));
  const after = synthCluster(
    variant(
      'prod-eu1',
      (raw) =>
        (raw.spec.rollout = {
          rollbackAlarms: ['arn:aws:cloudwatch:eu-west-1:111111111111:alarm:nodes-not-ready'],
          monitoringTimeMinutes: 30,
        }),
    ),
  );
  // THEN
  expect(after.text).toBe(before.text);
});
