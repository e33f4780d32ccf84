import { stackUnits } from '../../../lib/model/cluster/pools/pools';
import { poolStackName, WORKER_GROUP_LOGICAL_ID, workerStackName } from '../../../lib/core/naming';
import { AUTOSCALER_TAG_PREFIX } from '../../../lib/engines/constructs/autoscaler-tags';
import { example, rawExample, validated } from '../../helpers/clusters';
import { Json } from '../../helpers/json';
import { dropRulesOfMissingPools, groupOf, poolsVariant, rawPools, synthAll } from './pool-helpers';

const SHARED = workerStackName('pools-eu1');
const SPOT = poolStackName('pools-eu1', 'spot');
const ARM = poolStackName('pools-eu1', 'arm64');
const parsed = (templates: Map<string, string>, name: string): Json => JSON.parse(templates.get(name) ?? 'null');
const tagsOf = (group: Json): Record<string, string> =>
  Object.fromEntries((group.Properties.Tags as Json[]).map((t) => [t.Key, t.Value]));
const autoscalerTags = (group: Json) =>
  Object.fromEntries(Object.entries(tagsOf(group)).filter(([k]) => k.startsWith(AUTOSCALER_TAG_PREFIX)));

describe('one stack per pool beside the shared one', () => {
  test('the fixture synthesizes the shared stack and one stack per other pool, each group at Pool/Group', () => {
    // GIVEN the three-pool fixture
    const cluster = poolsVariant();
    // WHEN every stack is synthesized
    const templates = synthAll(cluster);
    // THEN the stacks are the cluster's units, and every group has the logical id the node's signal names
    expect([...templates.keys()].sort()).toEqual(
      stackUnits(cluster)
        .map((u) => u.stackName)
        .sort(),
    );
    for (const name of [SHARED, SPOT, ARM]) {
      expect(Object.keys(parsed(templates, name).Resources)).toContain(WORKER_GROUP_LOGICAL_ID);
    }
  });

  test('a pool stack boots its own config: its own object, checksum in its user data, signal allowed to itself only', () => {
    // GIVEN / WHEN
    const templates = synthAll(poolsVariant());
    // THEN each pool stack's checksum is its own, in its user data, and different from the others'
    const checksums = [SHARED, SPOT, ARM].map((n) => parsed(templates, n).Outputs.ConfigChecksum.Value as string);
    expect(new Set(checksums).size).toBe(3);
    for (const name of [SPOT, ARM]) {
      const t = parsed(templates, name);
      const lt = Object.values(t.Resources as Record<string, Json>).find((r) => r.Type === 'AWS::EC2::LaunchTemplate');
      expect(JSON.stringify(lt.Properties.LaunchTemplateData.UserData)).toContain(t.Outputs.ConfigChecksum.Value);
      const policy = Object.values(t.Resources as Record<string, Json>).find((r) => r.Type === 'AWS::IAM::Policy');
      expect(policy.Properties.PolicyDocument.Statement).toEqual([
        { Action: 'cloudformation:SignalResource', Effect: 'Allow', Resource: { Ref: 'AWS::StackId' } },
      ]);
      expect(policy.Properties.Roles).toEqual([{ 'Fn::ImportValue': 'WorkerStack-pools-eu1:InstanceRoleName' }]);
    }
    // the policies are inline policies of the same role: each pool's has its own name, or one would replace the other
    const names = [SPOT, ARM].map(
      (n) =>
        Object.values(parsed(templates, n).Resources as Record<string, Json>).find((r) => r.Type === 'AWS::IAM::Policy')
          .Properties.PolicyName as string,
    );
    expect(names).toEqual(['signal-pool-spot', 'signal-pool-arm64']);
  });

  test('pool stacks import the shared values by explicit export names, which the shared stack exports', () => {
    // GIVEN / WHEN
    const templates = synthAll(poolsVariant());
    // THEN every import of a pool stack is an export of the shared stack
    const exported = new Set(
      Object.values(parsed(templates, SHARED).Outputs as Record<string, Json>)
        .map((o) => o.Export?.Name as string | undefined)
        .filter(Boolean),
    );
    for (const name of [SPOT, ARM]) {
      const imports = [...(templates.get(name) ?? '').matchAll(/"Fn::ImportValue": "([^"]+)"/g)].map((m) => m[1]);
      expect(imports.length).toBeGreaterThan(0);
      for (const i of imports) expect(exported).toContain(i);
    }
  });

  test.each([
    // subnets of the pool: its own, else the cluster's
    ['arm64', ARM, ['subnet-0a1b2c3d4e5f60001', 'subnet-0a1b2c3d4e5f60002']],
    ['spot', SPOT, ['subnet-0a1b2c3d4e5f60001', 'subnet-0a1b2c3d4e5f60002', 'subnet-0a1b2c3d4e5f60003']],
  ])('the %s pool launches into %s subnets %j', (_pool, stack, subnets) => {
    // GIVEN / WHEN
    const group = groupOf(parsed(synthAll(poolsVariant()), stack));
    // THEN
    expect(group.Properties.VPCZoneIdentifier).toEqual(subnets);
  });
});

describe('a spec.pool object and the same pool as spec.pools default', () => {
  const moved = () => {
    const raw = rawExample('prod-eu1');
    raw.spec.pools = [{ name: 'default', ...raw.spec.pool }];
    delete raw.spec.pool;
    return validated(raw, 'clusters/prod-eu1.yaml');
  };

  test('the same logical ids, and only the group tags (cluster-autoscaler) and the drain reach of the pool stacks differ', () => {
    // GIVEN prod-eu1 as spec.pool and as spec.pools [default]
    const before = parsed(synthAll(example('prod-eu1')), workerStackName('prod-eu1'));
    const afterAll = synthAll(moved());
    const after = parsed(afterAll, workerStackName('prod-eu1'));
    // WHEN their resources are compared property by property
    const changed: string[] = [];
    for (const id of Object.keys(before.Resources)) {
      const a = before.Resources[id];
      const b = after.Resources[id];
      for (const key of new Set([...Object.keys(a.Properties ?? {}), ...Object.keys(b.Properties ?? {})])) {
        if (JSON.stringify(a.Properties?.[key]) !== JSON.stringify(b.Properties?.[key]))
          changed.push(`${a.Type}.${key}`);
      }
      if (JSON.stringify({ ...a, Properties: 0 }) !== JSON.stringify({ ...b, Properties: 0 }))
        changed.push(`${a.Type}`);
    }
    // THEN one stack, the same resources, and the differences are in-place updates only: the group's tags, the drain
    // rule's pattern and the handler policy's document (both reach the pool stacks' groups by name prefix)
    expect([...afterAll.keys()]).toEqual([workerStackName('prod-eu1')]);
    expect(Object.keys(after.Resources)).toEqual(Object.keys(before.Resources));
    expect(changed.sort()).toEqual([
      'AWS::AutoScaling::AutoScalingGroup.Tags',
      'AWS::Events::Rule.EventPattern',
      'AWS::IAM::ManagedPolicy.PolicyDocument',
    ]);
    const added = Object.keys(tagsOf(groupOf(after))).filter((k) => !(k in tagsOf(groupOf(before))));
    expect(added.every((k) => k.startsWith(AUTOSCALER_TAG_PREFIX))).toBe(true);
    expect(Object.keys(tagsOf(groupOf(before))).every((k) => k in tagsOf(groupOf(after)))).toBe(true);
  });

  test('a spec.pool object carries no cluster-autoscaler tag and exports nothing', () => {
    // GIVEN / WHEN
    const t = parsed(synthAll(example('prod-eu1')), workerStackName('prod-eu1'));
    // THEN
    expect(autoscalerTags(groupOf(t))).toEqual({});
    expect(JSON.stringify(t.Outputs)).not.toContain('"Export"');
  });
});

describe('each pool changes on its own', () => {
  test('a change to one pool’s labels changes that pool stack’s template only', () => {
    // GIVEN the fixture, and the same with another label on the spot pool
    const before = synthAll(poolsVariant());
    const after = synthAll(poolsVariant((raw) => (raw.spec.pools[1].labels['example.com/tier'] = 'batch')));
    // THEN the spot stack changed (its config checksum too); the others are byte-identical
    expect(after.get(SPOT)).not.toEqual(before.get(SPOT));
    expect(parsed(after, SPOT).Outputs.ConfigChecksum.Value).not.toEqual(
      parsed(before, SPOT).Outputs.ConfigChecksum.Value,
    );
    expect(after.get(SHARED)).toEqual(before.get(SHARED));
    expect(after.get(ARM)).toEqual(before.get(ARM));
  });

  const alone = (raw: Json) => {
    raw.spec.pools = [raw.spec.pools[0]];
    raw.spec.listeners = raw.spec.listeners.filter((l: Json) => !l.pools);
    dropRulesOfMissingPools(raw);
  };
  test.each([
    ['to the three pools', () => undefined, (raw: Json) => raw.spec.pools.push({ ...raw.spec.pools[1], name: 'gpu' })],
    ['to default alone', alone, (raw: Json) => raw.spec.pools.push({ ...rawPools().spec.pools[1], name: 'gpu' })],
  ])(
    'adding a pool %s creates its stack and changes no resource of the others (outputs may be added)',
    (_, base, add) => {
      // GIVEN the pools before, and with a pool gpu added
      const before = synthAll(poolsVariant(base));
      const after = synthAll(
        poolsVariant((raw) => {
          base(raw);
          add(raw);
        }),
      );
      // THEN the new stack exists; every other stack keeps its resources byte for byte, and its outputs
      expect(after.has(poolStackName('pools-eu1', 'gpu'))).toBe(true);
      for (const [name, text] of before) {
        expect(JSON.stringify(parsed(after, name).Resources)).toEqual(JSON.stringify(JSON.parse(text).Resources));
        const outputsBefore = Object.keys(JSON.parse(text).Outputs);
        expect(Object.keys(parsed(after, name).Outputs)).toEqual(expect.arrayContaining(outputsBefore));
      }
    },
  );
});

describe('listeners take the pools they name, else every pool without a repelling taint', () => {
  test.each([
    ['NoSchedule', false],
    ['NoExecute', false],
    ['PreferNoSchedule', true],
  ])('a pool tainted %s takes the default listeners: %s', (effect, attached) => {
    // GIVEN the spot pool with a taint of that effect
    const cluster = poolsVariant((raw) => (raw.spec.pools[1].taints = [{ key: 'example.com/t', effect }]));
    // WHEN
    const group = groupOf(parsed(synthAll(cluster), SPOT));
    // THEN its group is in the default listeners' target groups, or in none
    const arns = JSON.stringify(group.Properties.TargetGroupARNs ?? []);
    expect(arns.includes('TargetGroup-ingress-https')).toBe(attached);
    expect(arns.includes('TargetGroup-ingress-http"')).toBe(attached);
  });

  test('a listener that names a pool attaches that pool only (even a NoSchedule one)', () => {
    // GIVEN / WHEN
    const templates = synthAll(poolsVariant());
    // THEN arm-api goes to arm64 (NoSchedule), and not to the shared or spot groups; ingress goes to default and spot
    expect(groupOf(parsed(templates, ARM)).Properties.TargetGroupARNs).toEqual([
      { 'Fn::ImportValue': 'WorkerStack-pools-eu1:TargetGroup-arm-api' },
    ]);
    expect(JSON.stringify(groupOf(parsed(templates, SPOT)).Properties.TargetGroupARNs)).not.toContain('arm-api');
    expect(groupOf(parsed(templates, SHARED)).Properties.TargetGroupARNs).toHaveLength(2);
  });
});

describe('capacity and autoscaling', () => {
  test.each([
    [
      'spot above a base of one',
      { onDemandBaseCapacity: 1, onDemandPercentageAboveBaseCapacity: 0 },
      {
        OnDemandBaseCapacity: 1,
        OnDemandPercentageAboveBaseCapacity: 0,
        SpotAllocationStrategy: 'price-capacity-optimized',
      },
      true,
    ],
    [
      'half spot, capacity-optimized, no rebalance',
      {
        onDemandPercentageAboveBaseCapacity: 50,
        spotAllocationStrategy: 'capacity-optimized',
        capacityRebalance: false,
      },
      {
        OnDemandBaseCapacity: 0,
        OnDemandPercentageAboveBaseCapacity: 50,
        SpotAllocationStrategy: 'capacity-optimized',
      },
      false,
    ],
    ['no capacity: all on-demand', undefined, { OnDemandPercentageAboveBaseCapacity: 100 }, undefined],
  ])('%s → InstancesDistribution and CapacityRebalance', (_, capacity, distribution, rebalance) => {
    // GIVEN the spot pool with that capacity
    const cluster = poolsVariant((raw) => {
      if (capacity) raw.spec.pools[1].capacity = capacity;
      else delete raw.spec.pools[1].capacity;
    });
    // WHEN
    const group = groupOf(parsed(synthAll(cluster), SPOT));
    // THEN
    expect(group.Properties.MixedInstancesPolicy.InstancesDistribution).toEqual({
      OnDemandAllocationStrategy: 'prioritized',
      ...distribution,
    });
    expect(group.Properties.CapacityRebalance).toBe(rebalance);
  });

  test('every group of a spec.pools object carries the autoscaler discovery and node-template tags', () => {
    // GIVEN / WHEN
    const templates = synthAll(poolsVariant());
    // THEN default (shared stack), spot and arm64 each say what their nodes are
    const common = {
      'k8s.io/cluster-autoscaler/enabled': 'true',
      'k8s.io/cluster-autoscaler/pools-eu1': 'owned',
      'k8s.io/cluster-autoscaler/node-template/label/topology.example.com/env': 'prod',
    };
    expect(autoscalerTags(groupOf(parsed(templates, SHARED)))).toEqual({
      ...common,
      'k8s.io/cluster-autoscaler/node-template/label/node.kubernetes.io/pool': 'system',
      'k8s.io/cluster-autoscaler/node-template/resources/ephemeral-storage': '50Gi',
    });
    expect(autoscalerTags(groupOf(parsed(templates, ARM)))).toEqual({
      ...common,
      'k8s.io/cluster-autoscaler/node-template/label/node.kubernetes.io/pool': 'arm64',
      'k8s.io/cluster-autoscaler/node-template/taint/example.com/arch': 'arm64:NoSchedule',
      'k8s.io/cluster-autoscaler/node-template/resources/ephemeral-storage': '50Gi',
    });
    // on the group only: never propagated to instances (a tag change never rolls a node)
    for (const t of groupOf(parsed(templates, SPOT)).Properties.Tags as Json[])
      if ((t.Key as string).startsWith(AUTOSCALER_TAG_PREFIX)) expect(t.PropagateAtLaunch).toBe(false);
  });

  test.each([
    [undefined, undefined],
    [3, '3'],
  ])('desiredCapacity %s → DesiredCapacity %s in every stack', (desired, expected) => {
    // GIVEN every pool with (or without) a desired size
    const cluster = poolsVariant((raw) => {
      for (const p of raw.spec.pools) if (desired !== undefined) p.desiredCapacity = desired;
    });
    // WHEN
    const templates = synthAll(cluster);
    // THEN a deploy never sets a size an autoscaler chose unless the object says so
    for (const name of [SHARED, SPOT, ARM])
      expect(groupOf(parsed(templates, name)).Properties.DesiredCapacity).toBe(expected);
  });
});

test('a pool stack with a launch configuration boots the shared role and security group (a profile of its own)', () => {
  // GIVEN the spot pool as a launch configuration (one type, no capacity)
  const cluster = poolsVariant((raw) => {
    Object.assign(raw.spec.pools[1], { instanceTypes: ['m6i.xlarge'], legacyLaunchConfiguration: true });
    delete raw.spec.pools[1].capacity;
    // (a launch configuration rolls by AutoScalingRollingUpdate only: validation refuses instanceRefresh with it)
    raw.spec.pools[1].rollingUpdate = { ...raw.spec.pools[1].rollingUpdate, strategy: 'rolling' };
    delete raw.spec.pools[1].rollingUpdate.instanceRefresh;
  });
  // WHEN
  const t = parsed(synthAll(cluster), SPOT);
  // THEN
  const byType = (type: string) => Object.values(t.Resources as Record<string, Json>).filter((r) => r.Type === type);
  const [lc] = byType('AWS::AutoScaling::LaunchConfiguration');
  expect(lc.Properties.SecurityGroups).toEqual([{ 'Fn::ImportValue': 'WorkerStack-pools-eu1:SecurityGroupId' }]);
  expect(byType('AWS::IAM::InstanceProfile')[0].Properties.Roles).toEqual([
    { 'Fn::ImportValue': 'WorkerStack-pools-eu1:InstanceRoleName' },
  ]);
  expect(byType('AWS::IAM::Role')).toEqual([]);
});

describe('drain across stacks', () => {
  test.each([
    [true, 1, 'true'],
    [false, 0, undefined],
  ])('drain enabled %s on the spot pool: %s lifecycle hook in its stack, handler tag %s', (enabled, hooks, tag) => {
    // GIVEN the spot pool with drain on or off
    const cluster = poolsVariant((raw) => (raw.spec.pools[1].drain = { enabled, heartbeatTimeoutSeconds: 120 }));
    // WHEN
    const t = parsed(synthAll(cluster), SPOT);
    // THEN its own group holds its hook (terminations wait for the handler, also when the stack is deleted with the
    // pool) and is tagged for the handler
    const found = (groupOf(t).Properties.LifecycleHookSpecificationList ?? []) as Json[];
    expect(found).toHaveLength(hooks);
    if (hooks) expect(found[0]).toMatchObject({ HeartbeatTimeout: 120, DefaultResult: 'CONTINUE' });
    expect(tagsOf(groupOf(t))['aws-node-termination-handler/managed']).toBe(tag);
  });

  test('the shared queue takes the lifecycle actions of the pool stacks’ groups, and the handler may complete them', () => {
    // GIVEN / WHEN
    const t = parsed(synthAll(poolsVariant()), SHARED);
    const of = (type: string) => Object.values(t.Resources as Record<string, Json>).filter((r) => r.Type === type);
    // THEN the termination rule matches the default group and every group named after a pool stack of this cluster
    const termination = of('AWS::Events::Rule').find((r) =>
      JSON.stringify(r.Properties.EventPattern).includes('Lifecycle Action'),
    );
    expect(termination.Properties.EventPattern.detail.AutoScalingGroupName).toEqual([
      { Ref: WORKER_GROUP_LOGICAL_ID },
      { prefix: 'WorkerStack-pools-eu1-Pool-' },
    ]);
    const [policy] = of('AWS::IAM::ManagedPolicy');
    expect(JSON.stringify(policy.Properties.PolicyDocument)).toContain(
      ':autoScalingGroup:*:autoScalingGroupName/WorkerStack-pools-eu1-Pool-*',
    );
  });
});
