import { validateCluster } from '../../../lib/model/cluster/validate';
import { BadRow, expectRefused } from '../../helpers/bad-input';
import { rawExample, TEMPLATES } from '../../helpers/clusters';

/**
 * AWS string rules and references, checked at validation (issue 10, items 6 and 7): what EC2, tagging and the
 * other services would refuse in a change set, or a node would fail on at boot, is refused here with the rule.
 */

const rows: BadRow[] = [
  // --- security-group rule descriptions (EC2's character set and length) ---------
  {
    what: 'emoji in a rule description',
    example: 'staging-us1',
    mutate: (r) => (r.spec.securityGroupRules[0].description = 'node to node 🚀'),
    path: 'spec.securityGroupRules[0].description',
    message: /^has characters EC2 refuses in a rule description: U\+1F680 \(allowed: letters, digits, space/,
  },
  {
    what: 'accented letter and quote in a description',
    example: 'staging-us1',
    mutate: (r) => (r.spec.securityGroupRules[0].description = "café's rule"),
    path: 'spec.securityGroupRules[0].description',
    message: /^has characters EC2 refuses in a rule description: U\+00E9, "'"/,
  },
  {
    what: 'description of 256 characters',
    example: 'staging-us1',
    mutate: (r) => (r.spec.securityGroupRules[0].description = 'a'.repeat(256)),
    path: 'spec.securityGroupRules[0].description',
    message: /^has 256 characters, at most 255 allowed/,
  },
  // --- tags ------------------------------------------------------------------------
  {
    what: 'tag key starting with aws:',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.tags['aws:owner'] = 'me'),
    path: 'spec.tags["aws:owner"]',
    message: /^tag key "aws:owner" starts with aws:, which AWS reserves/,
  },
  {
    what: 'tag key starting with AWS: (any case)',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.tags['AWS:owner'] = 'me'),
    path: 'spec.tags["AWS:owner"]',
    message: /^tag key "AWS:owner" starts with aws:/,
  },
  {
    what: 'tag key of 129 characters',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.tags['k'.repeat(129)] = 'x'),
    path: `spec.tags.${'k'.repeat(129)}`,
    message: /has 129 characters \(AWS takes 1-128\)$/,
  },
  {
    what: 'tag key with a comma',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.tags['team,owner'] = 'x'),
    path: 'spec.tags["team,owner"]',
    message: /has characters AWS refuses in a tag: ","/,
  },
  {
    what: 'tag key the stack sets itself',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.tags['kubernetes.io/cluster/prod-eu1'] = 'shared'),
    path: 'spec.tags["kubernetes.io/cluster/prod-eu1"]',
    message: /starts with kubernetes\.io\/cluster\/, which worker-stacks sets itself$/,
  },
  {
    what: 'tag key the stack sets itself, in other case (IAM compares keys without case)',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.tags['Worker-Stacks.io/cluster'] = 'other'),
    path: 'spec.tags["Worker-Stacks.io/cluster"]',
    message: /starts with worker-stacks\.io\/, which worker-stacks sets itself$/,
  },
  {
    what: "the owner tag of another object's stack",
    example: 'prod-eu1',
    mutate: (r) => (r.spec.tags['worker-stacks.io/owner'] = 'kubernetes:team-a/prod-eu1'),
    path: 'spec.tags["worker-stacks.io/owner"]',
    message: /starts with worker-stacks\.io\/, which worker-stacks sets itself$/,
  },
  {
    what: "a cluster-autoscaler tag (hides a pool from its autoscaler, or hands it to another cluster's)",
    example: 'prod-eu1',
    mutate: (r) => (r.spec.tags['K8s.io/cluster-autoscaler/enabled'] = 'false'),
    path: 'spec.tags["K8s.io/cluster-autoscaler/enabled"]',
    message: /starts with k8s\.io\/cluster-autoscaler\/, which worker-stacks sets itself$/,
  },
  {
    what: 'load-balancer client CIDR with host bits set (the API server says the same)',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.loadBalancer.allowedCidrs = ['10.0.0.1/8']),
    path: 'spec.loadBalancer.allowedCidrs[0]',
    message: /^10\.0\.0\.1\/8 has host bits set \(did you mean 10\.0\.0\.0\/8\?\)$/,
  },
  {
    what: 'IPv6 load-balancer client CIDR with host bits set',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.loadBalancer.allowedCidrs = ['2001:db8::1/32']),
    path: 'spec.loadBalancer.allowedCidrs[0]',
    message: /^2001:db8::1\/32 has host bits set \(did you mean 2001:db8::\/32\?\)$/,
  },
  {
    what: 'load-balancer client CIDR that is not one',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.loadBalancer.allowedCidrs = ['10.0.0.0/33']),
    path: 'spec.loadBalancer.allowedCidrs[0]',
    message: /^"10\.0\.0\.0\/33" is not an IPv4 or IPv6 CIDR$/,
  },
  {
    what: 'tag value with an emoji',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.tags.team = 'platform 🔥'),
    path: 'spec.tags.team',
    message: /^has characters AWS refuses in a tag value: U\+1F525/,
  },
  {
    what: 'tag value of 257 characters',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.tags.team = 'v'.repeat(257)),
    path: 'spec.tags.team',
    message: /^has 257 characters, at most 256 allowed/,
  },
  {
    what: '46 tags',
    example: 'prod-eu1',
    mutate: (r) => Object.assign(r.spec.tags, Object.fromEntries(Array.from({ length: 44 }, (_, i) => [`t${i}`, 'x']))),
    path: 'spec.tags',
    message: /^46 tags, at most 45 allowed/,
    rule: 'tags-limit',
  },
  // --- references agree with the cluster ----------------------------------------------
  {
    what: 'secret in another region',
    example: 'prod-eu1',
    mutate: (r) =>
      (r.spec.cloudConfig.values.bootstrapTokenSecretArn =
        'arn:aws:secretsmanager:us-east-1:111111111111:secret:worker-stacks/prod-eu1/x-AbCdEf'),
    path: 'spec.cloudConfig.values.bootstrapTokenSecretArn',
    message: /^the secret is in region us-east-1, the cluster in eu-west-1/,
    rule: 'reference-in-cluster',
  },
  {
    what: 'secret in another account',
    example: 'prod-eu1',
    mutate: (r) =>
      (r.spec.cloudConfig.values.bootstrapTokenSecretArn =
        'arn:aws:secretsmanager:eu-west-1:999999999999:secret:worker-stacks/prod-eu1/x-AbCdEf'),
    path: 'spec.cloudConfig.values.bootstrapTokenSecretArn',
    message: /^the secret is in account 999999999999, the cluster in 111111111111/,
    rule: 'reference-in-cluster',
  },
  {
    what: 'secret in another partition',
    example: 'prod-eu1',
    mutate: (r) =>
      (r.spec.cloudConfig.values.bootstrapTokenSecretArn =
        'arn:aws-cn:secretsmanager:eu-west-1:111111111111:secret:worker-stacks/prod-eu1/x-AbCdEf'),
    path: 'spec.cloudConfig.values.bootstrapTokenSecretArn',
    message: /^the secret is in partition aws-cn, but region eu-west-1 is in aws$/,
    rule: 'reference-in-cluster',
  },
  // --- a secret is its own cluster's: worker-stacks/<cluster>/... (issue 21) ----------------------------------------
  ...[
    ["another team's secret", 'prod-db/password-AbCdEf'],
    ["another cluster's secret", 'worker-stacks/staging-us1/kubelet-bootstrap-AbCdEf'],
    ['a cluster whose name extends this one', 'worker-stacks/prod-eu10/kubelet-bootstrap-AbCdEf'],
    ['the prefix without a name', 'worker-stacks/prod-eu1/'],
  ].map(([what, secret]): BadRow => ({
    what: `secret scope: ${what}`,
    example: 'prod-eu1',
    mutate: (r) =>
      (r.spec.cloudConfig.values.bootstrapTokenSecretArn = `arn:aws:secretsmanager:eu-west-1:111111111111:secret:${secret}`),
    path: 'spec.cloudConfig.values.bootstrapTokenSecretArn',
    message: new RegExp(
      `^the secret "${secret.replace(/[.]/g, '\\.')}" is not one of this cluster's: its name must start with worker-stacks/prod-eu1/ \\(the nodes of cluster prod-eu1 may read only those`,
    ),
    rule: 'secret-scope',
  })),
  {
    what: 'certificate in another region',
    example: 'edge-ap1',
    mutate: (r) =>
      (r.spec.listeners[18].certificateArn =
        'arn:aws:acm:us-east-1:333333333333:certificate/0f0e0d0c-0b0a-0908-0706-050403020100'),
    path: 'spec.listeners[18].certificateArn',
    message: /^the certificate is in region us-east-1, the cluster in ap-southeast-1/,
    rule: 'reference-in-cluster',
  },
  {
    what: 'certificate in another account',
    example: 'edge-ap1',
    mutate: (r) =>
      (r.spec.listeners[18].certificateArn =
        'arn:aws:acm:ap-southeast-1:444444444444:certificate/0f0e0d0c-0b0a-0908-0706-050403020100'),
    path: 'spec.listeners[18].certificateArn',
    message: /^the certificate is in account 444444444444/,
    rule: 'reference-in-cluster',
  },
  {
    what: 'apiEndpoint with port 70000',
    example: 'staging-us1',
    mutate: (r) => (r.spec.cloudConfig.values.apiEndpoint = 'https://api.example.com:70000'),
    path: 'spec.cloudConfig.values.apiEndpoint',
    message: /^"https:\/\/api\.example\.com:70000" has port 70000, which is not a port \(1-65535\)$/,
  },
  {
    what: 'apiEndpoint with port 0',
    example: 'staging-us1',
    mutate: (r) => (r.spec.cloudConfig.values.apiEndpoint = 'https://api.example.com:0'),
    path: 'spec.cloudConfig.values.apiEndpoint',
    message: /has port 0, which is not a port/,
  },
  {
    what: 'registry mirror with port 99999',
    example: 'staging-us1',
    mutate: (r) => (r.spec.cloudConfig.values.registryMirrors = ['https://mirror.example.com:99999/v2']),
    path: 'spec.cloudConfig.values.registryMirrors[0]',
    message: /has port 99999, which is not a port/,
  },
];

describe('an AWS string or reference that AWS or a node would refuse is refused at validation', () => {
  test.each(rows)('$what', (row) => expectRefused(row));
});

test.each([
  ['user and password', 'https://robot:s3cr3t-Pa55@mirror.example.com/v2'],
  ['a token as the user', 'https://s3cr3t-Pa55@mirror.example.com'],
  ['a password with a slash', 'https://robot:s3cr3t/Pa55@mirror.example.com'],
  ['plain http with credentials', 'http://robot:s3cr3t-Pa55@mirror.example.com'],
])(
  'a registry mirror URL with credentials (%s) is refused for what it is, and the credentials appear in no message',
  (_what, url) => {
    // GIVEN a registry mirror URL with user info
    const raw = rawExample('staging-us1');
    raw.spec.cloudConfig.values.registryMirrors = [url];

    // WHEN it is validated
    const result = validateCluster(raw, { file: 'clusters/staging-us1.yaml', templates: TEMPLATES });

    // THEN it is refused as credentials, and no message holds the secret part or the URL
    expect(result.problems).toEqual([
      {
        file: 'clusters/staging-us1.yaml',
        path: 'spec.cloudConfig.values.registryMirrors[0]',
        message: expect.stringMatching(
          /^has user info \(credentials before "@"\) in the URL; credentials never go in a cluster object/,
        ),
      },
    ]);
    expect(JSON.stringify(result)).not.toMatch(/s3cr3t|Pa55|robot/);
  },
);

test('an emoji in a description never reaches synthesis: the whole object is refused', () => {
  // GIVEN the description of the example, with an emoji
  const raw = rawExample('prod-eu1');
  raw.spec.securityGroupRules[3].description = 'SSH 🔑 from the bastion';

  // WHEN it is validated
  const result = validateCluster(raw, { file: 'clusters/prod-eu1.yaml', templates: TEMPLATES });

  // THEN there is no cluster to synthesize
  expect(result.cluster).toBeUndefined();
});
