import { validateCluster } from '../../../lib/model/cluster/validate';
import { CRD_NAME, workerClusterCrd } from '../../../lib/platform/kube/crd';
import { rawExample, TEMPLATES } from '../../helpers/clusters';
import { apiServerWithCrdForFile, create } from '../../helpers/kube-rest';
import { rawPoolsExample } from '../../helpers/named-pools';

/**
 * The CEL rules rewritten for admission cost (issue 24 item 5: keys derived once and compared as plain values, lists and
 * ports read once, the source CIDR parsed once) against the real kube-apiserver: each input the rules refused before is
 * still refused, at the same field, with the file store's message; the inputs next to it that they accepted are still
 * accepted. `validate` (the file store) is asked the same question of the same object and must agree.
 */
const NS = 'default';
const api = apiServerWithCrdForFile(workerClusterCrd, CRD_NAME);

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- objects are reshaped freely, into invalid forms too
type Raw = any;
const rule = (extra: Raw) => (o: Raw) => o.spec.securityGroupRules.push({ description: 'under test', ...extra });
const rules =
  (...extra: Raw[]) =>
  (o: Raw) =>
    extra.forEach((e) => rule(e)(o));
const ACCEPTED = 'accepted';
/** `at`: validate's path when it is not the field or the item the message names (a map key's rule). */
type Refused = { field: string; message: string; at?: string };
/** The base that has named pools: prod-eu1 as a system, a spot and an arm64 pool (test/helpers/pools.ts). */
const POOLS = 'pools';
const taint = (key: string, effect: string) => ({ key, value: 'true', effect });

/**
 * [what, base example, mutation, ACCEPTED or where the API server refuses it and what its message says]. A message that
 * starts with an item path comes from a rule over the whole list: the file store names that item as the field.
 */
const CASES: Array<[string, string, (o: Raw) => void, typeof ACCEPTED | Refused]> = [
  // apiEndpoint: the host in either case (EKS's DescribeCluster writes its endpoint's in upper case)
  [
    'an EKS endpoint as DescribeCluster gives it (upper-case host)',
    'prod-eu1',
    (o) =>
      (o.spec.cloudConfig.values.apiEndpoint =
        'https://0123456789ABCDEF0123456789ABCDEF.gr7.eu-west-1.eks.amazonaws.com'),
    ACCEPTED,
  ],
  [
    'an upper-case endpoint with a path (a host only is taken)',
    'prod-eu1',
    (o) => (o.spec.cloudConfig.values.apiEndpoint = 'https://API.EXAMPLE.COM/k8s'),
    {
      field: 'spec.cloudConfig.values.apiEndpoint',
      message: '"https://API.EXAMPLE.COM/k8s" is not an https:// URL of the Kubernetes API server',
    },
  ],
  // spec.securityGroupRules: unique by protocol, port range and source (the key of each rule, derived once)
  [
    'a rule again under another description',
    'prod-eu1',
    rule({ protocol: 'tcp', port: 10250, source: { securityGroupId: 'sg-0c0ffee0c0ffee001' } }),
    {
      field: 'spec.securityGroupRules',
      message:
        'spec.securityGroupRules[4] duplicates spec.securityGroupRules[0] (rules (same protocol, ports and source) must be unique)',
    },
  ],
  [
    'port 10250 again as the range 10250-10250',
    'prod-eu1',
    rule({ protocol: 'tcp', fromPort: 10250, toPort: 10250, source: { securityGroupId: 'sg-0c0ffee0c0ffee001' } }),
    { field: 'spec.securityGroupRules', message: 'spec.securityGroupRules[4] duplicates spec.securityGroupRules[0]' },
  ],
  [
    'node to node again (source self)',
    'prod-eu1',
    rule({ protocol: 'all', source: { self: true } }),
    { field: 'spec.securityGroupRules', message: 'spec.securityGroupRules[4] duplicates spec.securityGroupRules[1]' },
  ],
  [
    'the load balancer twice on one port',
    'prod-eu1',
    rules(
      { protocol: 'tcp', port: 30443, source: { loadBalancer: true } },
      { protocol: 'tcp', port: 30443, source: { loadBalancer: true } },
    ),
    { field: 'spec.securityGroupRules', message: 'spec.securityGroupRules[5] duplicates spec.securityGroupRules[4]' },
  ],
  [
    'one CIDR twice with icmp (no ports)',
    'prod-eu1',
    rules({ protocol: 'icmp', source: { cidr: '10.9.0.0/16' } }, { protocol: 'icmp', source: { cidr: '10.9.0.0/16' } }),
    { field: 'spec.securityGroupRules', message: 'spec.securityGroupRules[5] duplicates spec.securityGroupRules[4]' },
  ],
  [
    // Issue 32 item 11: the canonical form is what AWS compares (cidr(x).string() in CEL).
    'one IPv6 CIDR twice, the second in upper case with leading zeros',
    'prod-eu1',
    rules(
      { protocol: 'tcp', port: 443, source: { cidrIpv6: '2001:db8:1::/48' } },
      { protocol: 'tcp', port: 443, source: { cidrIpv6: '2001:0DB8:0001::/48' } },
    ),
    {
      field: 'spec.securityGroupRules[5].source.cidrIpv6',
      message:
        '"2001:0DB8:0001::/48" is not written in canonical form (RFC 5952: lower case, no leading zeros, :: for zero groups), which AWS stores, and two forms of one CIDR are one rule',
    },
  ],
  [
    'the same port and source over udp',
    'prod-eu1',
    rule({ protocol: 'udp', port: 10250, source: { securityGroupId: 'sg-0c0ffee0c0ffee001' } }),
    ACCEPTED,
  ],
  [
    'the same source on another port',
    'prod-eu1',
    rule({ protocol: 'tcp', port: 10255 + 1, source: { securityGroupId: 'sg-0c0ffee0c0ffee001' } }),
    ACCEPTED,
  ],
  [
    'the same port from another group',
    'prod-eu1',
    rule({ protocol: 'tcp', port: 10250, source: { securityGroupId: 'sg-0c0ffee0c0ffee002' } }),
    ACCEPTED,
  ],
  [
    'one port from an IPv4 and an IPv6 CIDR',
    'prod-eu1',
    rules(
      { protocol: 'tcp', port: 8443, source: { cidr: '10.9.0.0/16' } },
      { protocol: 'tcp', port: 8443, source: { cidrIpv6: 'fd00::/8' } },
    ),
    ACCEPTED,
  ],
  [
    'self and the load balancer on one port',
    'prod-eu1',
    rules(
      { protocol: 'tcp', port: 30443, source: { self: true } },
      { protocol: 'tcp', port: 30443, source: { loadBalancer: true } },
    ),
    ACCEPTED,
  ],
  [
    'the range 30000-32767 and the range 30000-32766 from one CIDR',
    'prod-eu1',
    rule({ protocol: 'tcp', fromPort: 30000, toPort: 32766, source: { cidr: '10.20.0.0/16' } }),
    ACCEPTED,
  ],

  // The security-group quota: user rules + the listeners' distinct node-port rules (keys derived once)
  [
    'edge-ap1 plus 2 rules: 60, at the limit',
    'edge-ap1',
    rules(...[8443, 8444].map((port) => ({ protocol: 'tcp', port, source: { cidr: '192.0.2.0/24' } }))),
    ACCEPTED,
  ],
  [
    'edge-ap1 plus 3 rules: 61',
    'edge-ap1',
    rules(...[8443, 8444, 8445].map((port) => ({ protocol: 'tcp', port, source: { cidr: '192.0.2.0/24' } }))),
    {
      field: 'spec.securityGroupRules',
      message:
        '36 rules + 25 listener node-port rules = 61, over the AWS limit of 60 inbound rules per security group (use port ranges or prefix lists)',
    },
  ],
  [
    "edge-ap1 plus 3 rules, one health check on another listener's node port (counted once)",
    'edge-ap1',
    (o) => {
      o.spec.listeners[2].healthCheck.port = 31001;
      rules(...[8443, 8444, 8445].map((port) => ({ protocol: 'tcp', port, source: { cidr: '192.0.2.0/24' } })))(o);
    },
    ACCEPTED,
  ],
  [
    'edge-ap1 plus 2 rules and a TCP_UDP listener (its node port counted twice)',
    'edge-ap1',
    (o) => {
      o.spec.listeners[0].protocol = 'TCP_UDP';
      rules(...[8443, 8444].map((port) => ({ protocol: 'tcp', port, source: { cidr: '192.0.2.0/24' } })))(o);
    },
    {
      field: 'spec.securityGroupRules',
      message: '35 rules + 26 listener node-port rules = 61, over the AWS limit of 60',
    },
  ],

  // Listener and health-check ports inside spec.nodePortRange (the range and each port read once)
  [
    'a health-check port outside the range',
    'prod-eu1',
    (o) => (o.spec.listeners[1].healthCheck.port = 8080),
    {
      field: 'spec.listeners',
      message: 'spec.listeners[1].healthCheck.port 8080 is outside spec.nodePortRange (30000-32767)',
    },
  ],
  [
    'a node port outside a range of its own',
    'prod-eu1',
    (o) => (o.spec.nodePortRange = { from: 31000, to: 32000 }),
    {
      field: 'spec.listeners',
      message: 'spec.listeners[0].nodePort 30443 is outside spec.nodePortRange (31000-32000)',
    },
  ],
  [
    'a node port outside the range with hostPort: true',
    'prod-eu1',
    (o) => Object.assign(o.spec.listeners[1], { nodePort: 8080, hostPort: true }),
    ACCEPTED,
  ],
  ["a node port at the range's last port", 'prod-eu1', (o) => (o.spec.listeners[1].nodePort = 32767), ACCEPTED],

  // Node services from public address space (the source parsed once; the non-public blocks largest first)
  [
    'node-exporter from a public /24',
    'edge-ap1',
    (o) => (o.spec.securityGroupRules[0].source.cidr = '8.8.8.0/24'),
    { field: 'spec.securityGroupRules[0].source.cidr', message: '8.8.8.0/24 holds public addresses' },
  ],
  [
    'node-exporter from 10.0.0.0/8',
    'edge-ap1',
    (o) => (o.spec.securityGroupRules[0].source.cidr = '10.0.0.0/8'),
    ACCEPTED,
  ],
  [
    'node-exporter from the last small non-public block, 192.0.0.8/32',
    'edge-ap1',
    (o) => (o.spec.securityGroupRules[0].source.cidr = '192.0.0.8/32'),
    ACCEPTED,
  ],
  [
    'node-exporter from fc00::/7',
    'edge-ap1',
    (o) => (o.spec.securityGroupRules[30].source.cidrIpv6 = 'fc00::/7'),
    ACCEPTED,
  ],
  [
    'node-exporter from 2600::/16',
    'edge-ap1',
    (o) => (o.spec.securityGroupRules[30].source.cidrIpv6 = '2600::/16'),
    { field: 'spec.securityGroupRules[30].source.cidrIpv6', message: '2600::/16 holds public addresses' },
  ],

  // Listener names and ports, taints: unique by a key derived once
  [
    'one listener name twice',
    'edge-ap1',
    (o) => (o.spec.listeners[18].name = 'game-01'),
    {
      field: 'spec.listeners',
      message: 'spec.listeners[18].name duplicates spec.listeners[0].name (listener names must be unique)',
    },
  ],
  [
    'one listener port twice',
    'edge-ap1',
    (o) => (o.spec.listeners[17].port = 7002),
    {
      field: 'spec.listeners',
      message: 'spec.listeners[17].port duplicates spec.listeners[1].port (listener ports must be unique)',
    },
  ],
  [
    'a taint of one key with two effects',
    'prod-eu1',
    (o) =>
      (o.spec.cloudConfig.values.nodeTaints = [
        { key: 'a', value: '1', effect: 'NoSchedule' },
        { key: 'a', value: '1', effect: 'NoExecute' },
      ]),
    ACCEPTED,
  ],
  [
    'a taint of one key and effect twice',
    'prod-eu1',
    (o) =>
      (o.spec.cloudConfig.values.nodeTaints = [
        { key: 'b', value: '1', effect: 'NoExecute' },
        { key: 'a', value: '1', effect: 'NoSchedule' },
        { key: 'a', value: '2', effect: 'NoSchedule' },
      ]),
    {
      field: 'spec.cloudConfig.values.nodeTaints',
      message: 'spec.cloudConfig.values.nodeTaints[2] duplicates spec.cloudConfig.values.nodeTaints[1]',
    },
  ],

  // Node pools (issue 23): each of spec.pools as spec.pool, at its own path; the rules of named pools and listener pools
  ['a pools object as it is', POOLS, () => undefined, ACCEPTED],
  [
    'a pool with minSize above maxSize',
    POOLS,
    (o) => (o.spec.pools[1].minSize = 40),
    { field: 'spec.pools[1].minSize', message: '40 is greater than maxSize 30' },
  ],
  [
    'a pool with desiredCapacity outside min..max',
    POOLS,
    (o) => (o.spec.pools[0].desiredCapacity = 5),
    { field: 'spec.pools[0].desiredCapacity', message: '5 is outside minSize..maxSize (2..4)' },
  ],
  [
    'a pool with minInstancesInService at maxSize',
    POOLS,
    (o) => (o.spec.pools[1].rollingUpdate.minInstancesInService = 30),
    {
      field: 'spec.pools[1].rollingUpdate.minInstancesInService',
      message: '30 must be less than maxSize 30, or no instance could ever be replaced',
    },
  ],
  [
    'a pool with neither an AMI id nor an image channel',
    POOLS,
    (o) => delete o.spec.pools[1].machineImage,
    { field: 'spec.pools[1].machineImage', message: 'set exactly one of machineImage (an AMI id) and imageChannel' },
  ],
  [
    'a pool with a launch configuration and two instance types',
    POOLS,
    (o) => (o.spec.pools[2].legacyLaunchConfiguration = true),
    { field: 'spec.pools[2].instanceTypes', message: 'a launch configuration takes exactly one instance type' },
  ],
  [
    'a pool with 41 instance types',
    POOLS,
    (o) => (o.spec.pools[1].instanceTypes = Array.from({ length: 41 }, (_, i) => `x${i + 1}.large`)),
    { field: 'spec.pools[1].instanceTypes', message: '41 instance types exceed the AWS limit of 40 per group' },
  ],
  [
    'a pool with an instance type twice',
    POOLS,
    (o) => o.spec.pools[1].instanceTypes.push('m6a.xlarge'),
    {
      field: 'spec.pools',
      message:
        'spec.pools[1].instanceTypes[3] duplicates spec.pools[1].instanceTypes[1] (instance types must be unique)',
    },
  ],
  [
    'a pool with an arm64 type among x86_64 ones',
    POOLS,
    (o) => o.spec.pools[1].instanceTypes.push('m7g.xlarge'),
    {
      field: 'spec.pools',
      message:
        'spec.pools[1].instanceTypes[3] m7g.xlarge is arm64, m6i.xlarge is x86_64: one machine image boots one architecture',
    },
  ],
  [
    'an arm64 pool with an x86_64 type',
    POOLS,
    (o) => (o.spec.pools[2].instanceTypes = ['m7g.xlarge', 'm7i.xlarge']),
    {
      field: 'spec.pools',
      message:
        "spec.pools[2].instanceTypes[1] m7i.xlarge is x86_64, not the pool's architecture arm64 (its machine image's): give instance types that run arm64",
    },
  ],
  ['an arm64 pool of arm64 types only', POOLS, (o) => o.spec.pools[2].instanceTypes.push('r8g.large'), ACCEPTED],
  [
    '21 pools',
    POOLS,
    (o) => (o.spec.pools = Array.from({ length: 21 }, (_, i) => ({ ...o.spec.pools[1], name: `spot-${i}` }))),
    { field: 'spec.pools', message: '21 pools exceed the limit of 20 per cluster' },
  ],
  [
    '20 pools',
    POOLS,
    (o) => (o.spec.pools = Array.from({ length: 20 }, (_, i) => ({ ...o.spec.pools[1], name: `spot-${i}` }))),
    ACCEPTED,
  ],
  [
    'a pool name twice',
    POOLS,
    (o) => (o.spec.pools[2].name = 'spot'),
    { field: 'spec.pools', message: 'spec.pools[2].name duplicates spec.pools[1].name (pool names must be unique)' },
  ],
  [
    'an on-demand base above maxSize',
    POOLS,
    (o) => (o.spec.pools[1].capacity.onDemandBaseCapacity = 31),
    {
      field: 'spec.pools[1].capacity.onDemandBaseCapacity',
      message: '31 is above maxSize 30: the on-demand base is part of the group, at most its maximum size',
    },
  ],
  [
    'capacity with a launch configuration',
    POOLS,
    (o) => Object.assign(o.spec.pools[0], { legacyLaunchConfiguration: true, capacity: {} }),
    {
      field: 'spec.pools[0].capacity',
      message: 'a launch configuration has no mixed instances policy, so no on-demand base or spot',
    },
  ],
  [
    "a pool subnet outside the cluster's",
    POOLS,
    (o) => (o.spec.pools[2].subnetIds[1] = 'subnet-0a1b2c3d4e5f69999'),
    {
      field: 'spec.pools',
      message:
        "spec.pools[2].subnetIds[1] subnet-0a1b2c3d4e5f69999 is not one of spec.network.subnetIds (a pool's subnets are a subset of the cluster's)",
    },
  ],
  [
    'a pool subnet twice',
    POOLS,
    (o) => (o.spec.pools[2].subnetIds[1] = o.spec.pools[2].subnetIds[0]),
    {
      field: 'spec.pools',
      message: 'spec.pools[2].subnetIds[1] duplicates spec.pools[2].subnetIds[0] (subnets must be unique)',
    },
  ],
  [
    'a taint twice in a pool',
    POOLS,
    (o) => o.spec.pools[0].taints.push(taint('CriticalAddonsOnly', 'NoSchedule')),
    { field: 'spec.pools', message: 'spec.pools[0].taints[1] duplicates spec.pools[0].taints[0] (taints' },
  ],
  [
    "a pool's taint that the cluster has",
    POOLS,
    (o) =>
      (o.spec.cloudConfig.values.nodeTaints = [taint('x', 'NoExecute'), taint('CriticalAddonsOnly', 'NoSchedule')]),
    {
      field: 'spec.pools',
      message: 'spec.pools[0].taints[0] duplicates spec.cloudConfig.values.nodeTaints[1] (taints',
    },
  ],
  [
    'a pool label key the kubelet refuses',
    POOLS,
    (o) => (o.spec.pools[0].labels['kubernetes.io/role'] = 'system'),
    {
      field: 'spec.pools[0].labels',
      message: '"kubernetes.io/role": the kubelet may not set labels in the kubernetes.io or k8s.io namespaces',
      at: 'spec.pools[0].labels["kubernetes.io/role"]',
    },
  ],
  [
    'a pool label value the kubelet refuses',
    POOLS,
    (o) => (o.spec.pools[0].labels['example.com/pool'] = 'system pool'),
    {
      field: 'spec.pools[0].labels[example.com/pool]',
      message: '"system pool" is not a label value',
      at: 'spec.pools[0].labels["example.com/pool"]',
    },
  ],
  [
    'a pool taint key the kubelet refuses',
    POOLS,
    (o) => (o.spec.pools[0].taints[0].key = 'critical addons'),
    { field: 'spec.pools[0].taints[0].key', message: '"critical addons" is not a taint key' },
  ],
  [
    'a pool value out of its range',
    POOLS,
    (o) => (o.spec.pools[2].cloudConfig.values.maxPods = 5),
    {
      field: 'spec.pools[2].cloudConfig.values.maxPods',
      message: '5 is not a valid pod count (a whole number 8-1024)',
    },
  ],
  [
    'a pool value of its own',
    POOLS,
    (o) => (o.spec.pools[2].cloudConfig.values.kubernetesVersion = 'v1.32.0'),
    ACCEPTED,
  ],
  [
    'a listener naming a pool that does not exist',
    POOLS,
    (o) => (o.spec.listeners[1].pools = ['spot', 'gpu']),
    {
      field: 'spec.listeners',
      message:
        'spec.listeners[1].pools[1] "gpu" is not a pool of this cluster (a name of spec.pools, or default with spec.pool)',
    },
  ],
  [
    'a listener naming a pool twice',
    POOLS,
    (o) => (o.spec.listeners[0].pools = ['spot', 'spot']),
    {
      field: 'spec.listeners',
      message: 'spec.listeners[0].pools[1] duplicates spec.listeners[0].pools[0] (pools of a listener must be unique)',
    },
  ],
  ['a listener naming the tainted system pool', POOLS, (o) => (o.spec.listeners[0].pools = ['system']), ACCEPTED],
  [
    'a single-pool listener naming a pool of spec.pools',
    'prod-eu1',
    (o) => (o.spec.listeners[0].pools = ['spot']),
    { field: 'spec.listeners', message: 'spec.listeners[0].pools[0] "spot" is not a pool of this cluster' },
  ],
  ['a single-pool listener naming default', 'prod-eu1', (o) => (o.spec.listeners[0].pools = ['default']), ACCEPTED],
  [
    'a security-group rule narrowed to a pool that does not exist',
    POOLS,
    (o) => (o.spec.securityGroupRules[0].pools = ['arm', 'gpu']),
    {
      field: 'spec.securityGroupRules',
      message:
        'spec.securityGroupRules[0].pools[1] "gpu" is not a pool of this cluster (a name of spec.pools, or default with spec.pool)',
    },
  ],
  [
    'a security-group rule naming a pool twice',
    POOLS,
    (o) => (o.spec.securityGroupRules[0].pools = ['spot', 'spot']),
    {
      field: 'spec.securityGroupRules',
      message:
        'spec.securityGroupRules[0].pools[1] duplicates spec.securityGroupRules[0].pools[0] (pools of a rule must be unique)',
    },
  ],
  [
    'a security-group rule narrowed to two pools',
    POOLS,
    (o) => (o.spec.securityGroupRules[0].pools = ['arm', 'spot']),
    ACCEPTED,
  ],
  [
    'a single-pool security-group rule narrowed to default',
    'prod-eu1',
    (o) => (o.spec.securityGroupRules[0].pools = ['default']),
    ACCEPTED,
  ],
  [
    'listeners that no pool takes',
    POOLS,
    (o) => {
      o.spec.pools[1].taints = [taint('example.com/spot', 'NoExecute')];
      o.spec.pools[2].taints = [taint('example.com/arm', 'NoSchedule')];
    },
    {
      field: 'spec.listeners',
      message: 'spec.listeners[0] takes no pool: every pool has a NoSchedule or NoExecute taint of its own',
    },
  ],
  [
    'spec.pool and spec.pools',
    POOLS,
    (o) => (o.spec.pool = rawExample('prod-eu1').spec.pool),
    { field: 'spec.pool', message: 'give spec.pool or spec.pools, not both' },
  ],
  [
    'neither spec.pool nor spec.pools',
    POOLS,
    (o) => delete o.spec.pools,
    { field: 'spec.pool', message: 'give spec.pool (one pool) or spec.pools (named pools)' },
  ],
];

let n = 0;
// A rest parameter: a function declaring more parameters than a row has gets jest's `done` callback as the last one.
test.each(CASES)('%s: the API server and validate agree', async (...row) => {
  const [, base, mutate, expected] = row;
  // GIVEN
  const name = `bound-${++n}`;
  const o = base === POOLS ? rawPoolsExample() : rawExample(base);
  o.metadata = { name, namespace: NS };
  o.spec.cloudConfig.values.bootstrapTokenSecretArn = o.spec.cloudConfig.values.bootstrapTokenSecretArn.replace(
    `worker-stacks/${base === POOLS ? 'prod-eu1' : base}/`,
    `worker-stacks/${name}/`,
  );
  mutate(o);
  // WHEN
  const r = await create(api(), o, { dryRun: true });
  const problems = validateCluster(
    { ...o, metadata: { name } },
    { file: `clusters/${name}.yaml`, templates: TEMPLATES },
  ).problems.map((p) => ({ path: p.path, message: p.message }));
  // THEN
  if (expected === ACCEPTED) {
    expect({ status: r.status, causes: r.body.details?.causes, problems }).toEqual({
      status: 201,
      causes: undefined,
      problems: [],
    });
    return;
  }
  expect(r.status).toBe(422);
  const causes: Array<{ field: string; message: string }> = r.body.details?.causes ?? [];
  expect(causes.filter((c) => c.field === expected.field).map((c) => c.message)).toEqual(
    expect.arrayContaining([expect.stringContaining(expected.message)]),
  );
  // AND validate refuses it too, at the item a list rule names
  const m = /^(spec\.[\w.[\]]+) (.*)$/.exec(expected.message);
  const at = expected.at
    ? { path: expected.at, message: expected.message }
    : m && m[1].startsWith(expected.field) && m[1] !== expected.field
      ? { path: m[1], message: m[2] }
      : { path: expected.field, message: expected.message };
  expect(problems).toContainEqual({ path: at.path, message: expect.stringContaining(at.message) });
});
