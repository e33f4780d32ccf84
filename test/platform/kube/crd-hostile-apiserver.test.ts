import { validateCluster } from '../../../lib/model/cluster/validate';
import { CRD_NAME, workerClusterCrd } from '../../../lib/platform/kube/crd';
import { rawExample, TEMPLATES } from '../../helpers/clusters';
import { apiServerWithCrdForFile, create } from '../../helpers/kube-rest';

/**
 * Hostile input (issue 21) refused by the API server itself, through the CRD's CEL rules, at the same field as
 * `validate` refuses it: node services from public address space however the CIDR is written, CDK token shapes,
 * another cluster's secret, a registry mirror that would break containerd's TOML, and the low items of the issue.
 */
const NS = 'default';
const api = apiServerWithCrdForFile(workerClusterCrd, CRD_NAME);

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- objects are reshaped freely, into invalid forms too
type Raw = any;
let n = 0;
const TOKEN = '${Token[AWS.AccountId.4]}';
const rule = (extra: Raw) => (o: Raw) => o.spec.securityGroupRules.push({ description: 'under test', ...extra });

/** [what, base example, mutation, field the API server refuses at, what its message says, validate's field when written otherwise]. */
const BAD: Array<[string, string, (o: Raw) => void, string, RegExp, string?]> = [
  [
    'SSH from 0.0.0.0/1',
    'prod-eu1',
    rule({ protocol: 'tcp', port: 22, source: { cidr: '0.0.0.0/1' } }),
    'spec.securityGroupRules[4].source.cidr',
    /0\.0\.0\.0\/1 holds public addresses, and the rule opens tcp ports of node services; node services and protocol all are open only to non-public sources/,
  ],
  [
    'SSH from 128.0.0.0/1',
    'prod-eu1',
    rule({ protocol: 'tcp', port: 22, source: { cidr: '128.0.0.0/1' } }),
    'spec.securityGroupRules[4].source.cidr',
    /128\.0\.0\.0\/1 holds public addresses/,
  ],
  [
    'SSH from 2000::/3',
    'prod-eu1',
    rule({ protocol: 'tcp', port: 22, source: { cidrIpv6: '2000::/3' } }),
    'spec.securityGroupRules[4].source.cidrIpv6',
    /2000::\/3 holds public addresses/,
  ],
  [
    'etcd from 64.0.0.0/4',
    'prod-eu1',
    rule({ protocol: 'tcp', fromPort: 2379, toPort: 2380, source: { cidr: '64.0.0.0/4' } }),
    'spec.securityGroupRules[4].source.cidr',
    /64\.0\.0\.0\/4 holds public addresses/,
  ],
  [
    'all traffic from 8000::/1',
    'prod-eu1',
    rule({ protocol: 'all', source: { cidrIpv6: '8000::/1' } }),
    'spec.securityGroupRules[4].source.cidrIpv6',
    /8000::\/1 holds public addresses, and the rule opens all traffic/,
  ],
  [
    'the kubelet from 192.0.0.8/29 (the PCP anycast address inside)',
    'prod-eu1',
    rule({ protocol: 'tcp', port: 10250, source: { cidr: '192.0.0.8/29' } }),
    'spec.securityGroupRules[4].source.cidr',
    /holds public addresses/,
  ],
  [
    'a token in a rule description',
    'prod-eu1',
    (o) => (o.spec.securityGroupRules[0].description = `kubelet ${TOKEN}`),
    'spec.securityGroupRules[0].description',
    /has a CDK token marker/,
  ],
  [
    'a token in a health-check path',
    'prod-eu1',
    (o) => (o.spec.listeners[0].healthCheck.path = `/${TOKEN}`),
    'spec.listeners[0].healthCheck.path',
    /has a CDK token marker/,
  ],
  [
    'a number token in a tag value',
    'prod-eu1',
    (o) => (o.spec.tags.cost = '-1.8881545897087516e+289'),
    'spec.tags[cost]',
    /has a CDK token marker/,
    'spec.tags.cost',
  ],
  [
    "another team's secret",
    'prod-eu1',
    (o) =>
      (o.spec.cloudConfig.values.bootstrapTokenSecretArn =
        'arn:aws:secretsmanager:eu-west-1:111111111111:secret:prod-db/password-AbCdEf'),
    'spec.cloudConfig.values.bootstrapTokenSecretArn',
    /the secret "prod-db\/password-AbCdEf" is not one of this cluster's: its name must start with worker-stacks\/hostile-\d+\//,
  ],
  // Low items (issue 21)
  [
    'sslPolicy that takes TLS 1.0',
    'prod-eu1',
    (o) =>
      Object.assign(o.spec.listeners[0], {
        protocol: 'TLS',
        certificateArn: 'arn:aws:acm:eu-west-1:111111111111:certificate/0f0e0d0c-0b0a-0908-0706-050403020100',
        sslPolicy: 'ELBSecurityPolicy-TLS-1-0-2015-04',
      }),
    'spec.listeners[0].sslPolicy',
    /is not an ELB security policy of TLS 1\.2 or newer/,
  ],
  [
    'a label the kubelet may not set',
    'prod-eu1',
    (o) => (o.spec.cloudConfig.values.nodeLabels['node-role.kubernetes.io/worker'] = ''),
    'spec.cloudConfig.values.nodeLabels',
    /"node-role\.kubernetes\.io\/worker": the kubelet may not set labels in the kubernetes\.io or k8s\.io namespaces/,
    'spec.cloudConfig.values.nodeLabels["node-role.kubernetes.io/worker"]',
  ],
  [
    'a per-node label as a pool-wide constant (the zone)',
    'prod-eu1',
    (o) => (o.spec.cloudConfig.values.nodeLabels['topology.kubernetes.io/zone'] = 'eu-west-1a'),
    'spec.cloudConfig.values.nodeLabels',
    /"topology\.kubernetes\.io\/zone" differs from node to node/,
    'spec.cloudConfig.values.nodeLabels["topology.kubernetes.io/zone"]',
  ],
  [
    'a label value of 64 characters',
    'prod-eu1',
    (o) => (o.spec.cloudConfig.values.nodeLabels['example.com/x'] = 'v'.repeat(64)),
    'spec.cloudConfig.values.nodeLabels[example.com/x]',
    /is not a label value: at most 63 characters/,
    'spec.cloudConfig.values.nodeLabels["example.com/x"]',
  ],
  [
    'x86_64 and arm64 instance types with one AMI',
    'prod-eu1',
    (o) => (o.spec.pool.instanceTypes = ['m6i.xlarge', 'm6g.xlarge']),
    'spec.pool.instanceTypes',
    /spec\.pool\.instanceTypes\[1\] m6g\.xlarge is arm64, m6i\.xlarge is x86_64: one machine image boots one architecture/,
    'spec.pool.instanceTypes[1]',
  ],
  [
    'a rollback alarm of another partition',
    'prod-eu1',
    (o) =>
      (o.spec.rollout = {
        ...(o.spec.rollout ?? {}),
        rollbackAlarms: ['arn:aws-cn:cloudwatch:eu-west-1:111111111111:alarm:errors'],
      }),
    'spec.rollout.rollbackAlarms',
    /spec\.rollout\.rollbackAlarms\[0\] alarm is in partition aws-cn, but region eu-west-1 is in aws/,
    'spec.rollout.rollbackAlarms[0]',
  ],
  [
    'a rollback alarm of another account',
    'prod-eu1',
    (o) =>
      (o.spec.rollout = {
        ...(o.spec.rollout ?? {}),
        rollbackAlarms: [
          'arn:aws:cloudwatch:eu-west-1:111111111111:alarm:ok',
          'arn:aws:cloudwatch:eu-west-1:999999999999:alarm:errors',
        ],
      }),
    'spec.rollout.rollbackAlarms',
    /spec\.rollout\.rollbackAlarms\[1\] alarm is in account 999999999999, not the cluster's 111111111111/,
    'spec.rollout.rollbackAlarms[1]',
  ],
  [
    'nodePortRange 1-65535',
    'prod-eu1',
    (o) => (o.spec.nodePortRange = { from: 1, to: 65535 }),
    'spec.nodePortRange.from',
    /^Invalid value: .*1 is below 1024: the NodePort range holds only Kubernetes Service ports/,
  ],
  [
    'nodePortRange over the kubelet',
    'prod-eu1',
    (o) => (o.spec.nodePortRange = { from: 10000, to: 32767 }),
    'spec.nodePortRange',
    /10000-32767 holds 10248, the port of the kubelet health endpoint on the nodes/,
  ],
  [
    'the termination handler tag',
    'prod-eu1',
    (o) => (o.spec.tags['aws-node-termination-handler/managed'] = 'false'),
    'spec.tags',
    /starts with aws-node-termination-handler\/, which worker-stacks sets itself/,
    'spec.tags["aws-node-termination-handler/managed"]',
  ],
  [
    'a load-balancer client CIDR with host bits set',
    'prod-eu1',
    (o) => (o.spec.loadBalancer.allowedCidrs = ['10.0.0.1/8']),
    'spec.loadBalancer.allowedCidrs[0]',
    /10\.0\.0\.1\/8 has host bits set \(did you mean 10\.0\.0\.0\/8\?\)$/,
  ],
  [
    'a load-balancer client CIDR that is not one',
    'prod-eu1',
    (o) => (o.spec.loadBalancer.allowedCidrs = ['10.0.0.0/33']),
    'spec.loadBalancer.allowedCidrs[0]',
    /"10\.0\.0\.0\/33" is not an IPv4 or IPv6 CIDR$/,
  ],
  [
    'an IPv6 load-balancer client CIDR with host bits set',
    'prod-eu1',
    (o) => (o.spec.loadBalancer.allowedCidrs = ['2001:db8::1/32']),
    'spec.loadBalancer.allowedCidrs[0]',
    /2001:db8::1\/32 has host bits set \(did you mean 2001:db8::\/32\?\)$/,
  ],
  [
    'a reserved tag key in other case',
    'prod-eu1',
    (o) => (o.spec.tags['Worker-Stacks.io/cluster'] = 'other'),
    'spec.tags',
    /starts with worker-stacks\.io\/, which worker-stacks sets itself/,
    'spec.tags["Worker-Stacks.io/cluster"]',
  ],
  [
    'a cluster-autoscaler tag',
    'prod-eu1',
    (o) => (o.spec.tags['k8s.io/cluster-autoscaler/prod-eu1'] = 'owned'),
    'spec.tags',
    /starts with k8s\.io\/cluster-autoscaler\/, which worker-stacks sets itself/,
    'spec.tags["k8s.io/cluster-autoscaler/prod-eu1"]',
  ],
  [
    'clusterDNS 0.0.0.0',
    'prod-eu1',
    (o) => (o.spec.cloudConfig.values.clusterDNS = '0.0.0.0'),
    'spec.cloudConfig.values.clusterDNS',
    /0\.0\.0\.0 is not a unicast address a DNS service can have/,
  ],
  [
    'a registry mirror with a quote',
    'prod-eu1',
    (o) => (o.spec.cloudConfig.values.registryMirrors = ['https://mirror.example.com/v2"x']),
    'spec.cloudConfig.values.registryMirrors[0]',
    /is not an https:\/\/ registry mirror URL/,
  ],
];

// A rest parameter: a function declaring more parameters than a row has gets jest's `done` callback as the last one.
test.each(BAD)('%s: refused by the API server and by validate, at the same field', async (...row) => {
  const [, base, mutate, field, message, fileField] = row;
  // GIVEN
  const name = `hostile-${++n}`;
  const o = rawExample(base);
  o.metadata = { name, namespace: NS };
  o.spec.cloudConfig.values.bootstrapTokenSecretArn = o.spec.cloudConfig.values.bootstrapTokenSecretArn.replace(
    `worker-stacks/${base}/`,
    `worker-stacks/${name}/`,
  );
  mutate(o);
  // WHEN
  const r = await create(api(), o);
  // THEN the API server refuses it at the field
  expect(r.status).toBe(422);
  const causes: Array<{ field: string; message: string }> = r.body.details?.causes ?? [];
  expect(causes.filter((c) => c.field === field).map((c) => c.message)).toEqual(
    expect.arrayContaining([expect.stringMatching(message)]),
  );
  // AND validate refuses the same object at the same field
  const { metadata: _m, ...raw } = o;
  const problems = validateCluster(
    { ...raw, metadata: { name } },
    { file: `clusters/${name}.yaml`, templates: TEMPLATES },
  ).problems;
  expect(problems.map((p) => p.path)).toContain(fileField ?? field);
  // AND says its rule there: no message may lose it (a zod union said only "Invalid input")
  for (const p of problems.filter((x) => x.path === (fileField ?? field)))
    expect({ field, message: p.message }).not.toEqual({ field, message: expect.stringMatching(/^Invalid \w+$/) });
});

test('the whole internet written as halves, in one object: each half refused, all at once', async () => {
  // GIVEN
  const o = rawExample('prod-eu1');
  o.metadata = { name: 'halves', namespace: NS };
  o.spec.cloudConfig.values.bootstrapTokenSecretArn = o.spec.cloudConfig.values.bootstrapTokenSecretArn.replace(
    'worker-stacks/prod-eu1/',
    'worker-stacks/halves/',
  );
  rule({ protocol: 'all', source: { cidrIpv6: '::/1' } })(o);
  rule({ protocol: 'all', source: { cidrIpv6: '8000::/1' } })(o);
  // WHEN
  const r = await create(api(), o);
  // THEN
  expect(r.status).toBe(422);
  expect(r.body.details.causes.map((c: { field: string }) => c.field)).toEqual(
    expect.arrayContaining([
      'spec.securityGroupRules[4].source.cidrIpv6',
      'spec.securityGroupRules[5].source.cidrIpv6',
    ]),
  );
});

test('the examples (private and documentation ranges, their own secrets) are accepted', async () => {
  for (const name of ['prod-eu1', 'staging-us1', 'edge-ap1']) {
    const o = { ...rawExample(name), metadata: { name, namespace: NS } };
    const r = await create(api(), o, { dryRun: true });
    expect({ name, status: r.status, body: r.status === 201 ? 'created' : r.body }).toEqual({
      name,
      status: 201,
      body: 'created',
    });
  }
});
