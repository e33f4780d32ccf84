import * as fs from 'node:fs';
import * as path from 'node:path';
import { architectureOf } from '../../../lib/model/cluster/pools/instance-architecture';
import { loadClusterFile } from '../../../lib/platform/files/load-clusters';
import { validateCluster } from '../../../lib/model/cluster/validate';
import { BadRow, expectRefused } from '../../helpers/bad-input';
import { EXAMPLES_DIR, rawExample, tempDir, TEMPLATES } from '../../helpers/clusters';
import { Json } from '../../helpers/json';

/**
 * The low items of issue 21 that an object can carry: each is refused by validate with its field path and rule.
 * (The API server's side: test/platform/kube/crd-hostile-apiserver.test.ts.)
 */

const CERT = 'arn:aws:acm:eu-west-1:111111111111:certificate/0f0e0d0c-0b0a-0908-0706-050403020100';
const tls = (policy: string) => (r: Json) =>
  Object.assign(r.spec.listeners[0], { protocol: 'TLS', certificateArn: CERT, sslPolicy: policy });
const alarm = (arn: string) => (r: Json) => (r.spec.rollout = { ...(r.spec.rollout ?? {}), rollbackAlarms: [arn] });

const rows: BadRow[] = [
  // --- TLS below 1.2 -----------------------------------------------------------------------------------------------
  ...[
    'ELBSecurityPolicy-TLS-1-0-2015-04',
    'ELBSecurityPolicy-2016-08',
    'ELBSecurityPolicy-TLS13-1-1-2021-06',
    'ELBSecurityPolicy-FS-1-1-2019-08',
    'ELBSecurityPolicy-TLS13-1-0-2021-06',
  ].map((p): BadRow => ({
    what: `sslPolicy ${p}`,
    example: 'prod-eu1',
    mutate: tls(p),
    path: 'spec.listeners[0].sslPolicy',
    message: new RegExp(`^"${p}" is not an ELB security policy of TLS 1\\.2 or newer`),
  })),
  // --- alarms of another partition ---------------------------------------------------------------------------------
  {
    what: 'a rollback alarm in aws-cn for an aws region',
    example: 'prod-eu1',
    mutate: alarm('arn:aws-cn:cloudwatch:eu-west-1:111111111111:alarm:errors'),
    path: 'spec.rollout.rollbackAlarms[0]',
    message: /^alarm is in partition aws-cn, but region eu-west-1 is in aws$/,
    rule: 'reference-in-cluster',
  },
  // --- one AMI, one architecture -----------------------------------------------------------------------------------
  {
    what: 'x86_64 and arm64 instance types with one AMI',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.pool.instanceTypes = ['m6i.xlarge', 'm6g.xlarge']),
    path: 'spec.pool.instanceTypes[1]',
    message: /^m6g\.xlarge is arm64, m6i\.xlarge is x86_64: one machine image boots one architecture/,
    rule: 'one-architecture',
  },
  // --- labels and taints as the kubelet takes them -----------------------------------------------------------------
  {
    what: 'a label in kubernetes.io the kubelet may not set',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.cloudConfig.values.nodeLabels['node-role.kubernetes.io/worker'] = ''),
    path: 'spec.cloudConfig.values.nodeLabels["node-role.kubernetes.io/worker"]',
    message:
      /^"node-role\.kubernetes\.io\/worker": the kubelet may not set labels in the kubernetes\.io or k8s\.io namespaces/,
  },
  {
    what: 'a label in k8s.io',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.cloudConfig.values.nodeLabels['example.k8s.io/x'] = 'y'),
    path: 'spec.cloudConfig.values.nodeLabels["example.k8s.io/x"]',
    message: /the kubelet may not set labels in the kubernetes\.io or k8s\.io namespaces/,
  },
  {
    what: 'a label name of 64 characters',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.cloudConfig.values.nodeLabels[`example.com/${'n'.repeat(64)}`] = 'y'),
    path: `spec.cloudConfig.values.nodeLabels["example.com/${'n'.repeat(64)}"]`,
    message: /is not a label key: the name after the prefix has 64 characters, at most 63$/,
  },
  {
    what: 'a label value of 64 characters',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.cloudConfig.values.nodeLabels['example.com/x'] = 'v'.repeat(64)),
    path: 'spec.cloudConfig.values.nodeLabels["example.com/x"]',
    message: /is not a label value: 64 characters, at most 63$/,
  },
  {
    what: 'a label value starting with -',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.cloudConfig.values.nodeLabels['example.com/x'] = '-a'),
    path: 'spec.cloudConfig.values.nodeLabels["example.com/x"]',
    message: /^"-a" is not a label value$/,
  },
  {
    what: 'a label prefix that is no DNS subdomain',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.cloudConfig.values.nodeLabels['-x-.com/a'] = 'b'),
    path: 'spec.cloudConfig.values.nodeLabels["-x-.com/a"]',
    message: /^"-x-\.com\/a" is not a label key$/,
  },
  {
    what: 'a taint value of 64 characters',
    example: 'staging-us1',
    mutate: (r) => (r.spec.cloudConfig.values.nodeTaints[0].value = 'v'.repeat(64)),
    path: 'spec.cloudConfig.values.nodeTaints[0].value',
    message: /is not a taint value: 64 characters, at most 63$/,
  },
  // --- the NodePort range --------------------------------------------------------------------------------------------
  {
    what: 'nodePortRange 1-65535',
    example: 'staging-us1',
    mutate: (r) => (r.spec.nodePortRange = { from: 1, to: 65535 }),
    path: 'spec.nodePortRange.from',
    message: /^1 is below 1024: the NodePort range holds only Kubernetes Service ports/,
    rule: 'node-port-range-unprivileged',
  },
  {
    what: 'nodePortRange over the kubelet',
    example: 'staging-us1',
    mutate: (r) => (r.spec.nodePortRange = { from: 10000, to: 32767 }),
    path: 'spec.nodePortRange',
    message: /^10000-32767 holds 10248, the port of the kubelet health endpoint on the nodes/,
    rule: 'node-port-range-no-service',
  },
  // --- the NTH tag -----------------------------------------------------------------------------------------------------
  {
    what: 'the termination handler tag in spec.tags',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.tags['aws-node-termination-handler/managed'] = 'false'),
    path: 'spec.tags["aws-node-termination-handler/managed"]',
    message:
      /^tag key "aws-node-termination-handler\/managed" starts with aws-node-termination-handler\/, which worker-stacks sets itself$/,
  },
  // --- cluster DNS -------------------------------------------------------------------------------------------------------
  ...['0.0.0.0', '127.0.0.53', '169.254.20.10', '224.0.0.1', '255.255.255.255'].map((ip): BadRow => ({
    what: `clusterDNS ${ip}`,
    example: 'staging-us1',
    mutate: (r) => (r.spec.cloudConfig.values.clusterDNS = ip),
    path: 'spec.cloudConfig.values.clusterDNS',
    message: new RegExp(`^${ip.replace(/\./g, '\\.')} is not a unicast address a DNS service can have`),
  })),
];

describe('low items of issue 21 are refused with their field path and rule', () => {
  test.each(rows)('$what', (row) => expectRefused(row));
});

describe('what stays valid', () => {
  test.each<[string, (r: Json) => void]>([
    ['sslPolicy TLS13-1-2 post-quantum', tls('ELBSecurityPolicy-TLS13-1-2-PQ-2025-09')],
    ['sslPolicy FS-1-2-Res', tls('ELBSecurityPolicy-FS-1-2-Res-2020-10')],
    [
      'labels the kubelet may set',
      (r) =>
        Object.assign(r.spec.cloudConfig.values.nodeLabels, {
          'node.kubernetes.io/pool': 'a',
          'kubernetes.io/arch': 'amd64',
          'example.com/role': '',
        }),
    ],
    ['two arm64 types', (r) => (r.spec.pool.instanceTypes = ['m6g.xlarge', 'c7gn.xlarge'])],
    [
      'a NodePort range of its own above the node services',
      (r) => Object.assign(r, { spec: { ...r.spec, nodePortRange: { from: 30000, to: 32767 } } }),
    ],
  ])('%s', (_what, mutate) => {
    const raw = rawExample('prod-eu1');
    mutate(raw);
    expect(validateCluster(raw, { file: 'clusters/prod-eu1.yaml', templates: TEMPLATES }).problems).toEqual([]);
  });

  test.each([
    ['m6i.large', 'x86_64'],
    ['m6a.large', 'x86_64'],
    ['g4dn.xlarge', 'x86_64'],
    ['t4g.small', 'arm64'],
    ['a1.large', 'arm64'],
    ['im4gn.large', 'arm64'],
    ['is4gen.large', 'arm64'],
    ['g5g.xlarge', 'arm64'],
  ])('%s is %s', (type, arch) => expect(architectureOf(type)).toBe(arch));
});

describe('YAML tags and warnings', () => {
  test.each([
    ['!Ref', 'account: !Ref AWS::AccountId'],
    ['!Sub', 'account: !Sub "${AWS::AccountId}"'],
  ])('%s is refused with file and line, not dropped in silence', (tag, line) => {
    // GIVEN staging-us1 with a CloudFormation tag on its account line
    const dir = tempDir('yaml-tags');
    const file = path.join(dir, 'staging-us1.yaml');
    const text = fs.readFileSync(path.join(EXAMPLES_DIR, 'staging-us1.yaml'), 'utf8');
    const lines = text.split('\n');
    const at = lines.findIndex((l) => /^\s+account:/.test(l));
    lines[at] = lines[at].replace(/account:.*/, line);
    fs.writeFileSync(file, lines.join('\n'));
    // WHEN
    const r = loadClusterFile(file, { templates: TEMPLATES, relativeTo: dir });
    // THEN
    expect(r.cluster).toBeUndefined();
    expect(r.problems).toEqual([
      {
        file: 'staging-us1.yaml',
        path: '',
        message: expect.stringMatching(
          new RegExp(
            `^YAML warning at line ${at + 1}, column \\d+: Unresolved tag: ${tag} \\(a cluster object is plain YAML`,
          ),
        ),
      },
    ]);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
