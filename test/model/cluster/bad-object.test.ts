import { validateCluster } from '../../../lib/model/cluster/validate';
import { BadRow, expectRefused } from '../../helpers/bad-input';
import { rawExample, TEMPLATES } from '../../helpers/clusters';
import { Json } from '../../helpers/json';

/**
 * Malformed objects outside the rule and listener lists: kind and metadata,
 * account and region, network, worker pool, cloud-config and field types.
 * Each row breaks one thing in a valid example and names the field path and
 * the rule the message must state.
 */

const rows: BadRow[] = [
  // --- kind, metadata, unknown fields ------------------------------------------
  {
    what: 'wrong apiVersion',
    example: 'staging-us1',
    mutate: (r) => (r.apiVersion = 'worker-stacks.io/v1'),
    path: 'apiVersion',
    message: /^"worker-stacks\.io\/v1" is not allowed \(expected one of "worker-stacks\.io\/v1alpha1"\)$/,
  },
  {
    what: 'wrong kind',
    example: 'staging-us1',
    mutate: (r) => (r.kind = 'Cluster'),
    path: 'kind',
    message: /^"Cluster" is not allowed \(expected one of "WorkerCluster"\)$/,
  },
  {
    what: 'unknown top-level field',
    example: 'staging-us1',
    mutate: (r) => (r.specs = {}),
    path: 'specs',
    message: /^unknown field \(check the spelling/,
  },
  {
    what: 'unknown field in spec',
    example: 'staging-us1',
    mutate: (r) => (r.spec.regoin = 'us-east-1'),
    path: 'spec.regoin',
    message: /^unknown field/,
  },
  {
    what: 'unknown field in pool (instanceType)',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.pool.instanceType = 'm6i.large'),
    path: 'spec.pool.instanceType',
    message: /^unknown field/,
  },
  {
    what: 'metadata.name upper-case',
    example: 'prod-eu1',
    mutate: (r) => (r.metadata.name = 'Prod-EU1'),
    path: 'metadata.name',
    message: /^"Prod-EU1" is not a DNS label \(lower-case letters, digits and '-'/,
  },
  {
    what: 'metadata.name of 41 characters',
    example: 'prod-eu1',
    mutate: (r) => (r.metadata.name = 'p'.repeat(41)),
    path: 'metadata.name',
    message: /^"p{41}" is not a DNS label .*at most 40 characters\)$/,
  },
  {
    what: 'metadata.name not the file name',
    example: 'prod-eu1',
    mutate: (r) => (r.metadata.name = 'prod-eu2'),
    path: 'metadata.name',
    message: /^"prod-eu2" must match the file name \(prod-eu1\)$/,
    alsoAt: ['spec.cloudConfig.values.bootstrapTokenSecretArn'],
    rule: 'name-matches-file',
  }, // a secret is its cluster's by name
  {
    what: 'metadata.generation negative',
    example: 'prod-eu1',
    mutate: (r) => (r.metadata.generation = -1),
    path: 'metadata.generation',
    message: /^-1 is not a valid generation/,
  },

  // --- account and region --------------------------------------------------------
  {
    what: 'missing region',
    example: 'staging-us1',
    mutate: (r) => delete r.spec.region,
    path: 'spec.region',
    message: /^required field is missing/,
  },
  {
    what: 'bad region',
    example: 'staging-us1',
    mutate: (r) => (r.spec.region = 'us-east'),
    path: 'spec.region',
    message: /^"us-east" is not an AWS region such as eu-west-1$/,
  },
  {
    what: 'account of 5 digits',
    example: 'staging-us1',
    mutate: (r) => (r.spec.account = '12345'),
    path: 'spec.account',
    message: /^"12345" is not an AWS account id \(12 digits\)$/,
  },
  {
    what: 'account unquoted in YAML (a number)',
    example: 'staging-us1',
    mutate: (r) => (r.spec.account = 222222222222),
    path: 'spec.account',
    message: /^222222222222 is a number, expected a string \(quote it in YAML\)$/,
  },

  // --- network -------------------------------------------------------------------
  {
    what: 'subnet count differs from AZ count',
    example: 'staging-us1',
    mutate: (r) => r.spec.network.subnetIds.pop(),
    path: 'spec.network.subnetIds',
    message: /^1 subnets for 2 availability zones/,
    rule: 'subnet-per-zone',
  },
  {
    what: 'AZ not in the region',
    example: 'staging-us1',
    mutate: (r) => (r.spec.network.availabilityZones[1] = 'us-west-2b'),
    path: 'spec.network.availabilityZones[1]',
    message: /^us-west-2b is not in region us-east-1$/,
    rule: 'zone-in-region',
  },
  {
    what: 'duplicate subnet',
    example: 'staging-us1',
    mutate: (r) => (r.spec.network.subnetIds[1] = r.spec.network.subnetIds[0]),
    path: 'spec.network.subnetIds[1]',
    message: /^duplicates spec\.network\.subnetIds\[0\]/,
    rule: 'subnets-unique',
  },
  {
    what: 'malformed VPC id',
    example: 'staging-us1',
    mutate: (r) => (r.spec.network.vpcId = 'vpc-xyz'),
    path: 'spec.network.vpcId',
    message: /^"vpc-xyz" is not a VPC id \(vpc- followed by 8 or 17 hex digits\)$/,
  },

  // --- pool ----------------------------------------------------------------------
  {
    what: 'minSize > maxSize',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.pool.minSize = 31),
    path: 'spec.pool.minSize',
    message: /^31 is greater than maxSize 30$/,
    rule: 'pool-size-order',
  },
  {
    what: 'desiredCapacity above maxSize',
    example: 'staging-us1',
    mutate: (r) => (r.spec.pool.desiredCapacity = 9),
    path: 'spec.pool.desiredCapacity',
    message: /^9 is outside minSize\.\.maxSize \(1\.\.4\)$/,
    rule: 'pool-size-order',
  },
  {
    what: 'desiredCapacity below minSize',
    example: 'staging-us1',
    mutate: (r) => (r.spec.pool.desiredCapacity = 0),
    path: 'spec.pool.desiredCapacity',
    message: /^0 is outside minSize\.\.maxSize \(1\.\.4\)$/,
    rule: 'pool-size-order',
  },
  {
    what: 'minInstancesInService = maxSize',
    example: 'staging-us1',
    mutate: (r) => (r.spec.pool.rollingUpdate.minInstancesInService = 4),
    path: 'spec.pool.rollingUpdate.minInstancesInService',
    message: /^4 must be less than maxSize 4, or no instance could ever be replaced$/,
    rule: 'min-in-service-below-max',
  },
  {
    what: 'pauseTime PT2H',
    example: 'staging-us1',
    mutate: (r) => (r.spec.pool.rollingUpdate.pauseTime = 'PT2H'),
    path: 'spec.pool.rollingUpdate.pauseTime',
    message: /^PT2H is longer than CloudFormation's maximum pause time \(PT1H\)$/,
  },
  {
    what: 'pauseTime PT61M',
    example: 'staging-us1',
    mutate: (r) => (r.spec.pool.rollingUpdate.pauseTime = 'PT61M'),
    path: 'spec.pool.rollingUpdate.pauseTime',
    message: /^PT61M is longer than .*\(PT1H\)$/,
  },
  {
    what: 'pauseTime malformed',
    example: 'staging-us1',
    mutate: (r) => (r.spec.pool.rollingUpdate.pauseTime = '5 minutes'),
    path: 'spec.pool.rollingUpdate.pauseTime',
    message: /^"5 minutes" is not an ISO 8601 duration such as PT5M or PT1M30S$/,
  },
  {
    what: 'minSize as a string',
    example: 'staging-us1',
    mutate: (r) => (r.spec.pool.minSize = '1'),
    path: 'spec.pool.minSize',
    message: /^"1" is a string, expected a number \(remove the quotes\)$/,
  },
  {
    what: 'maxSize fractional',
    example: 'staging-us1',
    mutate: (r) => (r.spec.pool.maxSize = 4.5),
    path: 'spec.pool.maxSize',
    message: /^4\.5 is not a valid group size \(a whole number 1-1000\)$/,
  },
  {
    what: 'legacyLaunchConfiguration with 2 instance types',
    example: 'edge-ap1',
    mutate: (r) => r.spec.pool.instanceTypes.push('c6a.2xlarge'),
    path: 'spec.pool.instanceTypes',
    message: /^a launch configuration takes exactly one instance type/,
    rule: 'launch-configuration-one-type',
  },
  {
    what: 'no instance type',
    example: 'staging-us1',
    mutate: (r) => (r.spec.pool.instanceTypes = []),
    path: 'spec.pool.instanceTypes',
    message: /^has 0 items, at least 1 required$/,
  },
  {
    what: 'malformed instance type',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.pool.instanceTypes[1] = 'm6a'),
    path: 'spec.pool.instanceTypes[1]',
    message: /^"m6a" is not an EC2 instance type such as m6i\.large$/,
  },
  {
    what: 'bad AMI id',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.pool.machineImage = 'ami-12345'),
    path: 'spec.pool.machineImage',
    message: /^"ami-12345" is not an AMI id \(ami- followed by 8 or 17 hex digits\)$/,
  },
  {
    what: 'root volume of 4 GiB',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.pool.rootVolume.sizeGiB = 4),
    path: 'spec.pool.rootVolume.sizeGiB',
    message: /^4 is not a valid volume size in GiB \(a whole number 8-16384\)$/,
  },
  {
    what: 'waitOnResourceSignals as a string',
    example: 'staging-us1',
    mutate: (r) => (r.spec.pool.rollingUpdate.waitOnResourceSignals = 'yes'),
    path: 'spec.pool.rollingUpdate.waitOnResourceSignals',
    message: /^"yes" is a string, expected true or false$/,
  },

  // --- listener port type (quoted in YAML) --------------------------------------
  {
    what: 'port as a string "443"',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.listeners[0].port = '443'),
    path: 'spec.listeners[0].port',
    message: /^"443" is a string, expected a number \(remove the quotes\)$/,
  },
  {
    what: 'securityGroupRules as a map',
    example: 'staging-us1',
    mutate: (r) => (r.spec.securityGroupRules = { ssh: 22 }),
    path: 'spec.securityGroupRules',
    message: /^is an object, expected a list$/,
  },

  // --- cloud-config and tags -----------------------------------------------------
  {
    what: 'unknown template',
    example: 'staging-us1',
    mutate: (r) => (r.spec.cloudConfig.template = 'ubuntu-worker'),
    path: 'spec.cloudConfig.template',
    message:
      /^unknown template "ubuntu-worker" \(known: al2023-worker, eks-al2023, eks-bottlerocket, flatcar-worker\)$/,
    rule: 'template-known',
  },
  {
    what: 'secret ARN malformed',
    example: 'prod-eu1',
    mutate: (r) =>
      (r.spec.cloudConfig.values.bootstrapTokenSecretArn = 'arn:aws:secretsmanager:eu-west-1:1111:secret:x'),
    path: 'spec.cloudConfig.values.bootstrapTokenSecretArn',
    message: /^"arn:aws:secretsmanager:eu-west-1:1111:secret:x" is not a Secrets Manager secret ARN$/,
  },
  {
    what: 'bad nodeLabels key',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.cloudConfig.values.nodeLabels['-bad key'] = 'x'),
    path: 'spec.cloudConfig.values.nodeLabels["-bad key"]',
    message: /^"-bad key" is not a label key$/,
  },
  {
    what: 'bad nodeLabels value',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.cloudConfig.values.nodeLabels['node.kubernetes.io/pool'] = 'a b'),
    path: 'spec.cloudConfig.values.nodeLabels["node.kubernetes.io/pool"]',
    message: /^"a b" is not a label value$/,
  },
  {
    what: 'clusterDNS not an IPv4 address',
    example: 'staging-us1',
    mutate: (r) => (r.spec.cloudConfig.values.clusterDNS = '10.100.0.300'),
    path: 'spec.cloudConfig.values.clusterDNS',
    message: /^"10\.100\.0\.300" is not a valid IPv4 address$/,
  },
  {
    what: 'apiEndpoint over http',
    example: 'staging-us1',
    mutate: (r) => (r.spec.cloudConfig.values.apiEndpoint = 'http://api.example.com'),
    path: 'spec.cloudConfig.values.apiEndpoint',
    message: /^"http:\/\/api\.example\.com" is not an https:\/\/ URL/,
  },
  {
    what: 'taint effect unknown',
    example: 'staging-us1',
    mutate: (r) => (r.spec.cloudConfig.values.nodeTaints[0].effect = 'NoRun'),
    path: 'spec.cloudConfig.values.nodeTaints[0].effect',
    message: /^"NoRun" is not allowed \(expected one of "NoSchedule", "PreferNoSchedule", "NoExecute"\)$/,
  },
  {
    what: 'tag key starting with aws:',
    example: 'prod-eu1',
    mutate: (r) => (r.spec.tags['aws:owner'] = 'me'),
    path: 'spec.tags["aws:owner"]',
    message: /^tag key "aws:owner" starts with aws:, which AWS reserves for its own tags$/,
  },
];

describe('a malformed object is refused with its field path and rule', () => {
  test.each(rows)('$what', (row) => expectRefused(row));
});

describe('edge values that are allowed', () => {
  test.each([
    ['pauseTime PT1H', (r: Json) => (r.spec.pool.rollingUpdate.pauseTime = 'PT1H')],
    ['pauseTime PT59M60S', (r: Json) => (r.spec.pool.rollingUpdate.pauseTime = 'PT59M60S')],
    ['minInstancesInService one below maxSize', (r: Json) => (r.spec.pool.rollingUpdate.minInstancesInService = 3)],
    ['desiredCapacity = maxSize', (r: Json) => (r.spec.pool.desiredCapacity = 4)],
    [
      'metadata.name of 40 characters in a file of that name',
      (r: Json) => {
        r.metadata.name = 's'.repeat(40);
        r.spec.cloudConfig.values.bootstrapTokenSecretArn = r.spec.cloudConfig.values.bootstrapTokenSecretArn.replace(
          '/staging-us1/',
          `/${r.metadata.name}/`,
        );
      },
    ],
    ['port 65535', (r: Json) => (r.spec.securityGroupRules[1].port = 65535)],
    ['a /32 CIDR', (r: Json) => (r.spec.securityGroupRules[1].source.cidr = '10.1.0.5/32')],
  ])('%s', (_what, mutate) => {
    // GIVEN staging-us1 changed to an edge value
    const raw = rawExample('staging-us1');
    mutate(raw);
    const file = `clusters/${raw.metadata.name}.yaml`;

    // WHEN it is validated
    const result = validateCluster(raw, { file, templates: TEMPLATES });

    // THEN it is valid
    expect(result.problems).toEqual([]);
    expect(result.cluster).toBeDefined();
  });
});

test('two taints with the same key and effect are refused', () => {
  // GIVEN
  const raw = rawExample('staging-us1');
  raw.spec.cloudConfig.values.nodeTaints.push({ key: 'example.com/staging', value: 'x', effect: 'PreferNoSchedule' });
  // WHEN
  const r = validateCluster(raw, { file: 'clusters/staging-us1.yaml', templates: TEMPLATES });
  // THEN
  expect(r.problems).toEqual([
    expect.objectContaining({
      path: 'spec.cloudConfig.values.nodeTaints[1]',
      message: expect.stringMatching(/duplicates spec\.cloudConfig\.values\.nodeTaints\[0\]/),
    }),
  ]);
});
