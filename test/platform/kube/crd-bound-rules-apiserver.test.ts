import { validateCluster } from '../../../lib/model/cluster/validate';
import { CRD_NAME, workerClusterCrd } from '../../../lib/platform/kube/crd';
import { rawExample, TEMPLATES } from '../../helpers/clusters';
import { apiServerWithCrdForFile, create } from '../../helpers/kube-rest';

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
type Refused = { field: string; message: string };

/**
 * [what, base example, mutation, ACCEPTED or where the API server refuses it and what its message says]. A message that
 * starts with an item path comes from a rule over the whole list: the file store names that item as the field.
 */
const CASES: Array<[string, string, (o: Raw) => void, typeof ACCEPTED | Refused]> = [
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
];

let n = 0;
// A rest parameter: a function declaring more parameters than a row has gets jest's `done` callback as the last one.
test.each(CASES)('%s: the API server and validate agree', async (...row) => {
  const [, base, mutate, expected] = row;
  // GIVEN
  const name = `bound-${++n}`;
  const o = rawExample(base);
  o.metadata = { name, namespace: NS };
  o.spec.cloudConfig.values.bootstrapTokenSecretArn = o.spec.cloudConfig.values.bootstrapTokenSecretArn.replace(
    `worker-stacks/${base}/`,
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
  const at =
    m && m[1].startsWith(expected.field) && m[1] !== expected.field
      ? { path: m[1], message: m[2] }
      : { path: expected.field, message: expected.message };
  expect(problems).toContainEqual({ path: at.path, message: expect.stringContaining(at.message) });
});
