import { listenerPools, poolsOf } from '../../../../lib/model/cluster/pools/pools';
import { validateCluster } from '../../../../lib/model/cluster/validate';
import { example, EXAMPLE_NAMES, rawExample, TEMPLATES } from '../../../helpers/clusters';
import { Json } from '../../../helpers/json';
import { rawPoolsExample } from '../../../helpers/named-pools';

/**
 * The pools of a cluster, refused by `validate` (and so by `cdk synth`) before anything reaches AWS: each row breaks
 * one thing of a valid object with named pools (test/helpers/pools.ts) or of a single-pool example, and names exactly
 * the field paths and the rule. The CRD's CEL says the same (test/platform/kube/crd-bound-rules-apiserver.test.ts).
 */

type Row = {
  readonly what: string;
  /** The object to break: the named-pools object (default) or an example with spec.pool. */
  readonly base?: 'prod-eu1' | 'edge-ap1';
  readonly mutate: (o: Json) => void;
  /** Every problem, by path: exactly these are reported. */
  readonly problems: Readonly<Record<string, RegExp>>;
};

const taint = (key: string, effect: string) => ({ key, value: 'true', effect });
/** How many security-group rules the named-pools object has (a pushed rule is at this index). */
const SG_RULES = (rawPoolsExample().spec.securityGroupRules as unknown[]).length;

const ROWS: Row[] = [
  // --- what applies to spec.pool applies to each pool, at its own path ---------------------------------------------
  {
    what: 'minSize above maxSize',
    mutate: (o) => (o.spec.pools[1].minSize = 40),
    problems: { 'spec.pools[1].minSize': /^40 is greater than maxSize 30 \(rule pool-size-order\)$/ },
  },
  {
    what: 'desiredCapacity outside min..max',
    mutate: (o) => (o.spec.pools[0].desiredCapacity = 5),
    problems: {
      'spec.pools[0].desiredCapacity': /^5 is outside minSize\.\.maxSize \(2\.\.4\) \(rule pool-size-order\)$/,
    },
  },
  {
    what: 'minInstancesInService not below maxSize',
    mutate: (o) => (o.spec.pools[1].rollingUpdate.minInstancesInService = 30),
    problems: {
      'spec.pools[1].rollingUpdate.minInstancesInService':
        /^30 must be less than maxSize 30, or no instance could ever be replaced \(rule min-in-service-below-max\)$/,
    },
  },
  {
    what: 'a launch configuration with two instance types',
    mutate: (o) => (o.spec.pools[2].legacyLaunchConfiguration = true),
    problems: { 'spec.pools[2].instanceTypes': /^a launch configuration takes exactly one instance type/ },
  },
  {
    what: 'an instance type twice',
    mutate: (o) => o.spec.pools[1].instanceTypes.push('m6a.xlarge'),
    problems: {
      'spec.pools[1].instanceTypes[3]':
        /^duplicates spec\.pools\[1\]\.instanceTypes\[1\] \(instance types must be unique\) \(rule instance-types-unique\)$/,
    },
  },
  {
    what: '41 instance types',
    mutate: (o) => (o.spec.pools[1].instanceTypes = Array.from({ length: 41 }, (_, i) => `x${i + 1}.large`)),
    problems: {
      'spec.pools[1].instanceTypes':
        /^41 instance types exceed the AWS limit of 40 per group \(rule instance-types-limit\)$/,
    },
  },
  {
    what: 'an arm64 type among x86_64 ones',
    mutate: (o) => o.spec.pools[1].instanceTypes.push('m7g.xlarge'),
    problems: {
      'spec.pools[1].instanceTypes[3]':
        /^m7g\.xlarge is arm64, m6i\.xlarge is x86_64: one machine image boots one architecture/,
    },
  },
  {
    what: 'instanceRefresh settings with the rolling strategy',
    mutate: (o) => (o.spec.pools[1].rollingUpdate.instanceRefresh = {}),
    problems: {
      'spec.pools[1].rollingUpdate.instanceRefresh':
        /^applies only with strategy: instanceRefresh \(set spec\.pools\[1\]\.rollingUpdate\.strategy: instanceRefresh, or remove the block\) \(rule rollout-strategy-fields\)$/,
    },
  },
  {
    what: 'an instance refresh of a launch configuration',
    mutate: (o) => {
      Object.assign(o.spec.pools[0], { legacyLaunchConfiguration: true });
      o.spec.pools[0].rollingUpdate = { strategy: 'instanceRefresh', waitOnResourceSignals: false };
    },
    problems: {
      'spec.pools[0].rollingUpdate.strategy':
        /remove spec\.pools\[0\]\.legacyLaunchConfiguration\) \(rule instance-refresh-launch-template\)$/,
    },
  },
  {
    what: "pauseTime shorter than the pool's own node ready timeout",
    mutate: (o) => (o.spec.pools[2].cloudConfig.values.nodeReadyTimeoutSeconds = 900),
    problems: {
      'spec.pools[2].rollingUpdate.pauseTime':
        /^PT10M is shorter than the node ready timeout \(spec\.pools\[2\]\.cloudConfig\.values\.nodeReadyTimeoutSeconds: 900 s\) .* at least PT16M/,
    },
  },
  {
    what: "pauseTime shorter than the cluster's node ready timeout, in every pool",
    mutate: (o) => (o.spec.cloudConfig.values.nodeReadyTimeoutSeconds = 900),
    problems: Object.fromEntries(
      [0, 1, 2].map((i) => [
        `spec.pools[${i}].rollingUpdate.pauseTime`,
        /\(spec\.cloudConfig\.values\.nodeReadyTimeoutSeconds: 900 s\)/,
      ]),
    ),
  },

  // --- what only named pools have ----------------------------------------------------------------------------------
  {
    what: 'a pool name twice',
    mutate: (o) => (o.spec.pools[2].name = 'spot'),
    problems: {
      'spec.pools[2].name':
        /^duplicates spec\.pools\[1\]\.name \(pool names must be unique\) \(rule pool-names-unique\)$/,
    },
  },
  {
    what: 'a pool name that is no DNS label',
    mutate: (o) => (o.spec.pools[2].name = 'Arm_64'),
    problems: { 'spec.pools[2].name': /^"Arm_64" is not a DNS label/ },
  },
  {
    what: '21 pools',
    mutate: (o) => (o.spec.pools = Array.from({ length: 21 }, (_, i) => ({ ...o.spec.pools[1], name: `spot-${i}` }))),
    problems: {
      'spec.pools': /^21 pools exceed the limit of 20 per cluster \(each pool but default is a CloudFormation stack/,
    },
  },
  {
    what: 'x86_64 types in an arm64 pool',
    mutate: (o) => (o.spec.pools[2].instanceTypes = ['m7i.xlarge']),
    problems: {
      'spec.pools[2].instanceTypes[0]':
        /^m7i\.xlarge is x86_64, not the pool's architecture arm64 \(its machine image's\): give instance types that run arm64 \(rule pool-architecture\)$/,
    },
  },
  {
    what: 'an arm64 type in an x86_64 pool',
    mutate: (o) => {
      o.spec.pools[0].architecture = 'x86_64';
      o.spec.pools[0].instanceTypes.push('c7g.large');
    },
    problems: {
      'spec.pools[0].instanceTypes[1]':
        /^c7g\.large is arm64, (m6i\.large is x86_64: one machine image|not the pool's architecture x86_64)/,
    },
  },
  {
    what: 'an architecture that is neither',
    mutate: (o) => (o.spec.pools[2].architecture = 'riscv64'),
    problems: { 'spec.pools[2].architecture': /^"riscv64" is not allowed \(expected one of "x86_64", "arm64"\)$/ },
  },
  {
    what: 'an on-demand base above maxSize',
    mutate: (o) => (o.spec.pools[1].capacity.onDemandBaseCapacity = 31),
    problems: {
      'spec.pools[1].capacity.onDemandBaseCapacity':
        /^31 is above maxSize 30: the on-demand base is part of the group, at most its maximum size \(rule on-demand-base-within-max\)$/,
    },
  },
  {
    what: 'capacity with a launch configuration',
    mutate: (o) => Object.assign(o.spec.pools[0], { legacyLaunchConfiguration: true, capacity: {} }),
    problems: {
      'spec.pools[0].capacity': /^a launch configuration has no mixed instances policy, so no on-demand base or spot/,
    },
  },
  {
    what: "a subnet outside the cluster's",
    mutate: (o) => (o.spec.pools[2].subnetIds[1] = 'subnet-0a1b2c3d4e5f69999'),
    problems: {
      'spec.pools[2].subnetIds[1]':
        /^subnet-0a1b2c3d4e5f69999 is not one of spec\.network\.subnetIds \(a pool's subnets are a subset of the cluster's\) \(rule pool-subnets-of-cluster\)$/,
    },
  },
  {
    what: 'a subnet twice',
    mutate: (o) => (o.spec.pools[2].subnetIds[1] = o.spec.pools[2].subnetIds[0]),
    problems: {
      'spec.pools[2].subnetIds[1]':
        /^duplicates spec\.pools\[2\]\.subnetIds\[0\] \(subnets must be unique\) \(rule subnets-unique\)$/,
    },
  },
  {
    what: 'a label key the kubelet refuses',
    mutate: (o) => (o.spec.pools[0].labels['kubernetes.io/role'] = 'system'),
    problems: {
      'spec.pools[0].labels["kubernetes.io/role"]':
        /^"kubernetes\.io\/role": the kubelet may not set labels in the kubernetes\.io/,
    },
  },
  {
    what: 'a per-node label as a pool-wide constant (the hostname)',
    mutate: (o) => (o.spec.pools[0].labels['kubernetes.io/hostname'] = 'node-1'),
    problems: {
      'spec.pools[0].labels["kubernetes.io/hostname"]':
        /^"kubernetes\.io\/hostname" differs from node to node \(the kubelet and the cloud provider set it on each node\)/,
    },
  },
  {
    what: 'a label value the kubelet refuses',
    mutate: (o) => (o.spec.pools[0].labels['example.com/pool'] = 'system pool'),
    problems: { 'spec.pools[0].labels["example.com/pool"]': /^"system pool" is not a label value$/ },
  },
  {
    what: 'a taint key the kubelet refuses',
    mutate: (o) => (o.spec.pools[0].taints[0].key = 'critical addons'),
    problems: { 'spec.pools[0].taints[0].key': /^"critical addons" is not a taint key$/ },
  },
  {
    what: 'a taint effect the kubelet does not know',
    mutate: (o) => (o.spec.pools[0].taints[0].effect = 'NoEntry'),
    problems: { 'spec.pools[0].taints[0].effect': /^"NoEntry" is not allowed/ },
  },
  {
    what: 'a taint twice in a pool',
    mutate: (o) => o.spec.pools[0].taints.push(taint('CriticalAddonsOnly', 'NoSchedule')),
    problems: {
      'spec.pools[0].taints[1]':
        /^duplicates spec\.pools\[0\]\.taints\[0\] \(taints \(same key and effect; the kubelet refuses them\) must be unique\) \(rule taints-unique\)$/,
    },
  },
  {
    what: "a pool's taint that the cluster already has",
    mutate: (o) => (o.spec.cloudConfig.values.nodeTaints = [taint('CriticalAddonsOnly', 'NoSchedule')]),
    problems: {
      'spec.pools[0].taints[0]':
        /^duplicates spec\.cloudConfig\.values\.nodeTaints\[0\] \(taints .* must be unique\) \(rule taints-unique\)$/,
    },
  },

  // --- a pool's node config ------------------------------------------------------------------------------------------
  {
    what: 'a template that does not exist',
    mutate: (o) => (o.spec.pools[2].cloudConfig.template = 'bottlerocket'),
    problems: {
      'spec.pools[2].cloudConfig.template':
        /^unknown template "bottlerocket" \(known: al2023-worker, eks-al2023, eks-bottlerocket, flatcar-worker\) \(rule template-known\)$/,
    },
  },
  {
    what: 'a typed value out of its range',
    mutate: (o) => (o.spec.pools[2].cloudConfig.values.maxPods = 5),
    problems: { 'spec.pools[2].cloudConfig.values.maxPods': /^5 is not a valid pod count \(a whole number 8-1024\)$/ },
  },
  {
    what: "a value the cluster's template does not declare",
    mutate: (o) => (o.spec.pools[2].cloudConfig.values.fooBar = 1),
    problems: {
      'spec.pools[2].cloudConfig.values.fooBar': /^unknown value: template flatcar-worker does not declare it/,
    },
  },
  {
    what: "a value of the pool's own template that breaks its rule",
    mutate: (o) => (o.spec.pools[2].cloudConfig.values.kubeletSha256 = { arm64: 'not-a-hash' }),
    problems: { 'spec.pools[2].cloudConfig.values.kubeletSha256': /^"arm64": "not-a-hash" does not match/ },
  },
  {
    what: "another template, and a value of the cluster's template set in the pool",
    mutate: (o) => {
      o.spec.pools[2].cloudConfig.template = 'al2023-worker';
      o.spec.pools[2].cloudConfig.values.awsCliImage = o.spec.cloudConfig.values.awsCliImage;
    },
    problems: {
      'spec.pools[2].cloudConfig.values.awsCliImage': /^unknown value: template al2023-worker does not declare it/,
    },
  },
  {
    what: "node labels in the pool's values",
    mutate: (o) => (o.spec.pools[2].cloudConfig.values.nodeLabels = { 'example.com/a': 'b' }),
    problems: {
      'spec.pools[2].cloudConfig.values.nodeLabels':
        /^a pool's labels are spec\.pools\[2\]\.labels \(added to spec\.cloudConfig\.values\.nodeLabels\); move them there \(rule pool-values-own-fields\)$/,
    },
  },

  {
    what: "a value that is the cluster's alone",
    mutate: (o) => (o.spec.pools[2].cloudConfig.values.apiEndpoint = 'https://api.other.example.com'),
    problems: {
      'spec.pools[2].cloudConfig.values.apiEndpoint':
        /^is the cluster's alone \(every pool joins the same API server the same way\): set it in spec\.cloudConfig\.values; a pool may set kubernetesVersion, maxPods, nodeReadyTimeoutSeconds and its template's own values \(rule cluster-only-values\)$/,
    },
  },
  {
    what: "a kubelet version of the pool's that is no version",
    mutate: (o) => (o.spec.pools[2].cloudConfig.values.kubernetesVersion = '1.31'),
    problems: { 'spec.pools[2].cloudConfig.values.kubernetesVersion': /^"1\.31" is not a Kubernetes version/ },
  },

  // --- listeners and pools -----------------------------------------------------------------------------------------
  {
    what: 'a listener naming a pool that does not exist',
    mutate: (o) => (o.spec.listeners[1].pools = ['spot', 'gpu']),
    problems: {
      'spec.listeners[1].pools[1]':
        /^"gpu" is not a pool of this cluster \(a name of spec\.pools, or default with spec\.pool\) \(rule pool-names-known\)$/,
    },
  },
  {
    what: 'a listener naming a pool twice',
    mutate: (o) => (o.spec.listeners[0].pools = ['spot', 'spot']),
    problems: {
      'spec.listeners[0].pools[1]':
        /^duplicates spec\.listeners\[0\]\.pools\[0\] \(pools of a listener must be unique\) \(rule pool-names-once\)$/,
    },
  },
  {
    what: 'a listener naming a pool of spec.pools in a single-pool object',
    base: 'prod-eu1',
    mutate: (o) => (o.spec.listeners[0].pools = ['spot']),
    problems: { 'spec.listeners[0].pools[0]': /^"spot" is not a pool of this cluster/ },
  },
  {
    what: 'listeners that take no pool: every pool repels ordinary pods',
    mutate: (o) => {
      o.spec.pools[1].taints = [taint('example.com/spot', 'NoExecute')];
      o.spec.pools[2].taints = [taint('example.com/arm', 'NoSchedule')];
    },
    problems: {
      'spec.listeners[0]': /^takes no pool: every pool has a NoSchedule or NoExecute taint of its own/,
      'spec.listeners[1]': /^takes no pool/,
    },
  },

  // --- security-group rules narrowed to pools -----------------------------------------------------------------------
  {
    what: 'a security-group rule narrowed to a pool that does not exist',
    mutate: (o) => (o.spec.securityGroupRules[0].pools = ['arm', 'gpu']),
    problems: {
      'spec.securityGroupRules[0].pools[1]':
        /^"gpu" is not a pool of this cluster \(a name of spec\.pools, or default with spec\.pool\) \(rule pool-names-known\)$/,
    },
  },
  {
    what: 'a security-group rule naming a pool twice',
    mutate: (o) => (o.spec.securityGroupRules[0].pools = ['spot', 'spot']),
    problems: {
      'spec.securityGroupRules[0].pools[1]':
        /^duplicates spec\.securityGroupRules\[0\]\.pools\[0\] \(pools of a rule must be unique\) \(rule pool-names-once\)$/,
    },
  },
  {
    what: 'a security-group rule narrowed to a pool of spec.pools in a single-pool object',
    base: 'prod-eu1',
    mutate: (o) => (o.spec.securityGroupRules[0].pools = ['spot']),
    problems: { 'spec.securityGroupRules[0].pools[0]': /^"spot" is not a pool of this cluster/ },
  },
  {
    what: 'a security-group rule narrowed to no pool at all',
    mutate: (o) => (o.spec.securityGroupRules[0].pools = []),
    problems: { 'spec.securityGroupRules[0].pools': /./ },
  },
  {
    what: 'the same rule cluster-wide and narrowed (one rule, one entry: list its pools)',
    mutate: (o) => o.spec.securityGroupRules.push({ ...o.spec.securityGroupRules[0], pools: ['arm'] }),
    problems: { [`spec.securityGroupRules[${SG_RULES}]`]: /^duplicates spec\.securityGroupRules\[0\]/ },
  },

  // --- spec.pool or spec.pools -------------------------------------------------------------------------------------
  {
    what: 'spec.pool and spec.pools',
    mutate: (o) => (o.spec.pool = rawExample('prod-eu1').spec.pool),
    problems: { 'spec.pool': /^give spec\.pool or spec\.pools, not both/ },
  },
  {
    what: 'neither spec.pool nor spec.pools',
    mutate: (o) => delete o.spec.pools,
    problems: { 'spec.pool': /^give spec\.pool \(one pool\) or spec\.pools \(named pools\) \(rule pool-or-pools\)$/ },
  },
];

test.each(ROWS.map((r) => [r.what, r] as const))('%s: refused with exactly its problems', (_what, row) => {
  // GIVEN a valid object with one thing broken
  const o = row.base ? rawExample(row.base) : rawPoolsExample();
  row.mutate(o);
  const file = `clusters/${o.metadata.name}.yaml`;
  // WHEN
  const r = validateCluster(o, { file, templates: TEMPLATES });
  // THEN every problem is the row's, at its path, with its rule
  expect(r.cluster).toBeUndefined();
  const got = r.problems.map((p) => ({ file: p.file, path: p.path, message: p.message }));
  expect([...new Set(got.map((p) => p.path))].sort()).toEqual(Object.keys(row.problems).sort());
  for (const [path, message] of Object.entries(row.problems))
    expect(got).toContainEqual({ file, path, message: expect.stringMatching(message) });
});

test('the named-pools object is valid: three pools, listeners on the untainted ones, the arm pool on two subnets', () => {
  // WHEN
  const r = validateCluster(rawPoolsExample(), { file: 'clusters/prod-eu1.yaml', templates: TEMPLATES });
  // THEN
  expect(r.problems).toEqual([]);
  const spec = r.cluster!.spec;
  expect(poolsOf(spec).map((p) => p.name)).toEqual(['system', 'spot', 'arm']);
  expect(spec.listeners.map((l) => listenerPools(spec, l))).toEqual([
    ['spot', 'arm'],
    ['spot', 'arm'],
  ]);
});

test.each([
  ['names a pool of its own', (o: Json) => (o.spec.listeners[0].pools = ['system'])],
  [
    'a pool on a kubelet version of its own (a pool-by-pool upgrade)',
    (o: Json) => (o.spec.pools[2].cloudConfig.values.kubernetesVersion = 'v1.32.0'),
  ],
  [
    'a pool on its own template and values',
    (o: Json) => Object.assign(o.spec.pools[2].cloudConfig, { template: 'flatcar-worker', values: { maxPods: 30 } }),
  ],
  [
    'spec.pools with one pool named default',
    (o: Json) => (o.spec.pools = [{ ...rawExample('prod-eu1').spec.pool, name: 'default' }]),
  ],
  [
    'exactly 20 pools',
    (o: Json) => (o.spec.pools = Array.from({ length: 20 }, (_, i) => ({ ...o.spec.pools[1], name: `spot-${i}` }))),
  ],
  ['an arm64 pool without architecture', (o: Json) => delete o.spec.pools[2].architecture],
  ['a security-group rule narrowed to two pools', (o: Json) => (o.spec.securityGroupRules[0].pools = ['arm', 'spot'])],
])('accepted: %s', (_what, mutate) => {
  // GIVEN
  const o = rawPoolsExample();
  mutate(o);
  // WHEN
  const r = validateCluster(o, { file: 'clusters/prod-eu1.yaml', templates: TEMPLATES });
  // THEN
  expect(r.problems).toEqual([]);
});

test('accepted: a listener and a security-group rule of a single-pool object naming its pool, default', () => {
  // GIVEN
  const o = rawExample('prod-eu1');
  o.spec.listeners[0].pools = ['default'];
  o.spec.securityGroupRules[0].pools = ['default'];
  // WHEN
  const r = validateCluster(o, { file: 'clusters/prod-eu1.yaml', templates: TEMPLATES });
  // THEN
  expect(r.problems).toEqual([]);
});

test.each(EXAMPLE_NAMES.filter((n) => rawExample(n).spec.pool))(
  'the single-pool example %s is one pool named default and every listener takes it',
  (name) => {
    // WHEN
    const cluster = example(name);
    // THEN (edge-ap1's nodes all carry a NoSchedule taint of the cluster: it chooses no pool, its listeners stay)
    expect(poolsOf(cluster.spec).map((p) => p.name)).toEqual(['default']);
    for (const l of cluster.spec.listeners) expect(listenerPools(cluster.spec, l)).toEqual(['default']);
  },
);
