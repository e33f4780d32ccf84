import { synthesisProblems } from '../../../lib/engines/synthesis/synthesis-check';
import { poolStackName, workerStackName } from '../../../lib/core/naming';
import { rawExample, validated } from '../../helpers/clusters';
import { Json } from '../../helpers/json';
import { poolsVariant, synthAll } from './pool-helpers';
import { DEFAULT_TEMPLATES_DIR } from '../../../lib/platform/files/template-directory';

/**
 * Security-group rules are cluster-wide unless a pool narrows them (issue 23, item 4): a rule that names pools goes on
 * each named pool's own security group, which only that pool's nodes carry. The fixture (test/fixtures/pools) narrows
 * SSH to the system pool default (in the shared stack), and a self rule and a load-balancer rule to arm64 (its own stack).
 */

const SHARED = workerStackName('pools-eu1');
const SPOT = poolStackName('pools-eu1', 'spot');
const ARM = poolStackName('pools-eu1', 'arm64');
/** The shared node security group's logical id (construct path Pool/SecurityGroup), unchanged by pools. */
const NODE_GROUP = 'PoolSecurityGroupB0350326';

const resources = (t: Json): [string, Json][] => Object.entries(t.Resources as Record<string, Json>);
const parsedAll = (templates: Map<string, string>): Map<string, Json> =>
  new Map([...templates].map(([name, text]) => [name, JSON.parse(text)]));
const ownGroupId = (t: Json): string | undefined =>
  resources(t).find(([id, r]) => r.Type === 'AWS::EC2::SecurityGroup' && id.startsWith('OwnSecurityGroup'))?.[0];
/** The groups a stack's launch template gives its nodes. */
const nodeGroups = (t: Json): Json[] =>
  resources(t).find(([, r]) => r.Type === 'AWS::EC2::LaunchTemplate')?.[1].Properties.LaunchTemplateData
    .NetworkInterfaces[0].Groups;
/** Every ingress rule of every stack with the given description: [stack, properties]. */
const ingress = (all: Map<string, Json>, description: string): [string, Json][] =>
  [...all].flatMap(([name, t]) =>
    resources(t)
      .filter(([, r]) => r.Type === 'AWS::EC2::SecurityGroupIngress' && r.Properties.Description === description)
      .map(([, r]) => [name, r.Properties] as [string, Json]),
  );
const getAtt = (id: string) => ({ 'Fn::GetAtt': [id, 'GroupId'] });
/** The fixture's stacks with one more security-group rule. */
const withRule = (rule: Json): Map<string, Json> =>
  parsedAll(synthAll(poolsVariant((raw) => raw.spec.securityGroupRules.push(rule))));

describe('a rule that names pools goes on those pools’ own groups only', () => {
  const all = parsedAll(synthAll(poolsVariant()));
  const shared = all.get(SHARED);
  const arm = all.get(ARM);

  test.each([
    // description, the stack it is in, the group it is on, its source
    [
      'SSH from the bastion prefix list to the system pool',
      SHARED,
      () => getAtt(ownGroupId(shared)!),
      { SourcePrefixListId: 'pl-0123456789abcdef0' },
    ],
    [
      'arm64 cache peers among themselves',
      ARM,
      () => getAtt(ownGroupId(arm)!),
      { SourceSecurityGroupId: getAtt(ownGroupId(arm)!) },
    ],
    [
      'arm API metrics from the load balancer',
      ARM,
      () => getAtt(ownGroupId(arm)!),
      { SourceSecurityGroupId: { 'Fn::ImportValue': 'WorkerStack-pools-eu1:LoadBalancerSecurityGroupId' } },
    ],
    [
      'kubelet API from the control plane',
      SHARED,
      () => getAtt(NODE_GROUP),
      { SourceSecurityGroupId: 'sg-0c0ffee0c0ffee001' },
    ],
  ])('%s: in %s only, on its group, from its source', (description, stack, group, source) => {
    // GIVEN the fixture's stacks (synthesized once above)
    // WHEN the rule is looked for in every stack
    const found = ingress(all, description);
    // THEN exactly once, where the table says
    expect(found.map(([s]) => s)).toEqual([stack]);
    expect(found[0][1].GroupId).toEqual(group());
    expect(found[0][1]).toEqual(expect.objectContaining(source));
  });

  test.each([
    [SHARED, () => [getAtt(NODE_GROUP), getAtt(ownGroupId(shared)!)]],
    [ARM, () => [{ 'Fn::ImportValue': 'WorkerStack-pools-eu1:SecurityGroupId' }, getAtt(ownGroupId(arm)!)]],
    [SPOT, () => [{ 'Fn::ImportValue': 'WorkerStack-pools-eu1:SecurityGroupId' }]],
  ])('the nodes of %s carry the shared group, and their own one only when a rule names their pool', (stack, groups) => {
    // THEN
    expect(nodeGroups(all.get(stack))).toEqual(groups());
    if (stack === SPOT) expect(ownGroupId(all.get(SPOT))).toBeUndefined();
  });

  test('a pool’s own group has no kubernetes.io/cluster tag (cloud-provider-aws takes exactly one per node) and no egress', () => {
    // GIVEN / WHEN
    for (const t of [shared, arm]) {
      const group = t.Resources[ownGroupId(t)!];
      const tags = Object.fromEntries((group.Properties.Tags as Json[]).map((x) => [x.Key, x.Value]));
      // THEN
      expect(Object.keys(tags).filter((k) => k.startsWith('kubernetes.io/cluster/'))).toEqual([]);
      expect(tags['worker-stacks.io/cluster']).toBe('pools-eu1');
      expect(group.Properties.SecurityGroupEgress).toEqual([
        expect.objectContaining({ CidrIp: '255.255.255.255/32', Description: 'Disallow all traffic' }),
      ]);
    }
    expect(shared.Resources[NODE_GROUP].Properties.Tags).toContainEqual({
      Key: 'kubernetes.io/cluster/pools-eu1',
      Value: 'owned',
    });
  });

  test('the shared stack exports the load balancer’s group only while a pool stack’s rule names it', () => {
    // GIVEN the fixture, and the fixture without its load-balancer rule narrowed to arm64
    const exportsOf = (t: Json) =>
      Object.values(t.Outputs as Record<string, Json>)
        .map((o) => o.Export?.Name as string | undefined)
        .filter(Boolean);
    const without = parsedAll(
      synthAll(
        poolsVariant((raw) => {
          raw.spec.securityGroupRules = raw.spec.securityGroupRules.filter((r: Json) => !r.source.loadBalancer);
        }),
      ),
    );
    // THEN
    expect(exportsOf(shared)).toContain('WorkerStack-pools-eu1:LoadBalancerSecurityGroupId');
    expect(exportsOf(without.get(SHARED))).not.toContain('WorkerStack-pools-eu1:LoadBalancerSecurityGroupId');
  });
});

describe('narrowing changes only the pools it names', () => {
  test('a new rule narrowed to arm64 changes no resource of another stack', () => {
    // GIVEN the fixture, and with one more rule narrowed to arm64
    const before = parsedAll(synthAll(poolsVariant()));
    const after = withRule({
      description: 'arm64 gossip',
      protocol: 'udp',
      port: 7946,
      source: { self: true },
      pools: ['arm64'],
    });
    // THEN only arm64's stack has a new resource (its rule); the others are byte for byte the same
    for (const name of [SHARED, SPOT]) expect(after.get(name).Resources).toEqual(before.get(name).Resources);
    const added = Object.keys(after.get(ARM).Resources).filter((id) => !(id in before.get(ARM).Resources));
    expect(added.map((id) => after.get(ARM).Resources[id].Type)).toEqual(['AWS::EC2::SecurityGroupIngress']);
  });

  test('a cluster that narrows no rule has no pool group: every node carries the shared group alone', () => {
    // GIVEN the fixture with every rule cluster-wide
    const all = parsedAll(
      synthAll(
        poolsVariant((raw) => {
          for (const r of raw.spec.securityGroupRules) delete r.pools;
        }),
      ),
    );
    // THEN no stack has a group of a pool, and every node carries the shared group alone
    expect(all.size).toBe(3);
    for (const t of all.values()) {
      expect(ownGroupId(t)).toBeUndefined();
      expect(nodeGroups(t)).toHaveLength(1);
    }
  });

  test('a rule of a listener’s node port from the load balancer, narrowed to the listener’s pool, replaces its cluster-wide rule', () => {
    // GIVEN arm-api's node port (30843, listener pools [arm64]) opened by the user to arm64 alone
    const all = withRule({
      description: 'arm API from the load balancer, arm64 nodes only',
      protocol: 'tcp',
      port: 30843,
      source: { loadBalancer: true },
      pools: ['arm64'],
    });
    // THEN the shared group no longer opens 30843 to every node; arm64's own group does
    const on30843 = [...all].flatMap(([name, t]) =>
      resources(t)
        .filter(([, r]) => r.Type === 'AWS::EC2::SecurityGroupIngress' && r.Properties.FromPort === 30843)
        .map(([, r]) => [name, r.Properties.Description]),
    );
    expect(on30843).toEqual([[ARM, 'arm API from the load balancer, arm64 nodes only']]);
  });
});

test('a single-pool object with a launch configuration: the narrowed rule’s group joins the launch configuration', () => {
  // GIVEN prod-eu1 on a launch configuration, one rule narrowed to its pool default
  const raw = rawExample('prod-eu1');
  raw.spec.pool.legacyLaunchConfiguration = true;
  raw.spec.pool.instanceTypes = raw.spec.pool.instanceTypes.slice(0, 1);
  raw.spec.securityGroupRules[0].pools = ['default'];
  // WHEN
  const t = JSON.parse(synthAll(validated(raw, 'clusters/prod-eu1.yaml')).get(workerStackName('prod-eu1'))!);
  // THEN
  const lc = resources(t).find(([, r]) => r.Type === 'AWS::AutoScaling::LaunchConfiguration')![1];
  expect(lc.Properties.SecurityGroups).toEqual([getAtt(NODE_GROUP), getAtt(ownGroupId(t)!)]);
});

test('cdk-nag’s finding on a narrowed rule names that rule of the object, with a fix in YAML terms', () => {
  // GIVEN the fixture with its arm64 self rule opened to the internet instead (valid to the schema: no node service)
  const cluster = poolsVariant((raw) => {
    const i = raw.spec.securityGroupRules.findIndex(
      (r: Json) => r.description === 'arm64 cache peers among themselves',
    );
    raw.spec.securityGroupRules[i].source = { cidr: '0.0.0.0/0' };
  });
  const i = cluster.spec.securityGroupRules.findIndex((r) => r.description === 'arm64 cache peers among themselves');
  // WHEN validate's synthesis check runs
  const problems = synthesisProblems(cluster, 'clusters/pools-eu1.yaml', { templatesDir: DEFAULT_TEMPLATES_DIR });
  // THEN the problem is on that rule (in arm64's stack), not on the pool
  expect(problems).toContainEqual(
    expect.objectContaining({
      path: `spec.securityGroupRules[${i}]`,
      message: expect.stringMatching(
        /^cdk-nag AwsSolutions-EC23: .*fix: narrow spec\.securityGroupRules\[\d+\]\.source/,
      ),
    }),
  );
});
