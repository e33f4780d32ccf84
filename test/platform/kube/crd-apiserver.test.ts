import { WorkerClusterSchema } from '../../../lib/model/cluster/schema/schema';
import { validateCluster } from '../../../lib/model/cluster/validate';
import { CRD_NAME, PLURAL, workerClusterCrd } from '../../../lib/platform/kube/crd';
import { toKubeStatus } from '../../../lib/platform/kube/printer-status';
import { EXAMPLE_NAMES, rawExample, TEMPLATES } from '../../helpers/clusters';
import { apiServerWithCrdForFile, create, kubeRequest } from '../../helpers/kube-rest';

/**
 * The CRD against the real kube-apiserver v1.37.2 (scripts/kube/build.sh): it installs (the API server compiles
 * every CEL rule and checks its cost), the examples are accepted, and each bad object is refused by the API
 * server itself with the field path and, where CEL can build it, the file store's own message.
 */
const NS = 'default';
const api = apiServerWithCrdForFile(workerClusterCrd, CRD_NAME);

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- objects are reshaped freely, into invalid forms too
type Raw = any;

/** The prod-eu1 example (or `base`) as a new object named `name`, changed by `mutate`. */
function object(name: string, mutate: (o: Raw) => void = () => undefined, base = 'prod-eu1'): Raw {
  const o = rawExample(base);
  o.metadata = { name, namespace: NS };
  // A cluster names only its own secrets (worker-stacks/<name>/...): the example's, renamed with the object.
  o.spec.cloudConfig.values.bootstrapTokenSecretArn = o.spec.cloudConfig.values.bootstrapTokenSecretArn.replace(
    `/${base}/`,
    `/${name}/`,
  );
  mutate(o);
  return o;
}

let n = 0;
const fresh = () => `bad-${++n}`;

test.each(EXAMPLE_NAMES)('the example %s is accepted by the API server', async (name) => {
  // GIVEN
  const o = { ...rawExample(name), metadata: { ...rawExample(name).metadata, namespace: NS } };
  // WHEN
  const r = await create(api(), o, { dryRun: true });
  // THEN
  expect({ status: r.status, body: r.status === 201 ? 'created' : r.body }).toEqual({ status: 201, body: 'created' });
});

test("the API server stores the object as written: defaults are the reconciler's, as with the file store", async () => {
  // GIVEN an object that leaves every defaulted field out
  const o = object('defaults');
  // WHEN
  const r = await create(api(), o);
  // THEN what comes back is what was sent, and parses to the same cluster as the file
  expect(r.status).toBe(201);
  expect(r.body.spec).toEqual(o.spec);
  expect(WorkerClusterSchema.parse({ ...o, metadata: { name: 'defaults' } }).spec).toEqual(
    WorkerClusterSchema.parse({ ...r.body, metadata: { name: 'defaults' } }).spec,
  );
  expect(r.body.metadata.generation).toBe(1);
});

test('kubectl get wc: the short name and the printer columns are served', async () => {
  // WHEN the table kubectl asks for
  const r = await kubeRequest(
    api(),
    'GET',
    `/apis/worker-stacks.io/v1alpha1/namespaces/${NS}/${PLURAL}`,
    undefined,
    api().adminToken,
  );
  const discovery = await kubeRequest(api(), 'GET', '/apis/worker-stacks.io/v1alpha1');
  // THEN
  expect(r.status).toBe(200);
  expect(discovery.body.resources.find((x: { name: string }) => x.name === PLURAL)).toMatchObject({
    shortNames: ['wc'],
    kind: 'WorkerCluster',
    namespaced: true,
  });
});

test('kubectl get wc shows Ready, Reason, the checksum prefixes and the stack status of the status the store writes', async () => {
  // GIVEN an object whose status the Kubernetes store wrote (with the printer columns' prefixes)
  const created = (await create(api(), object('shown'))).body;
  const status = toKubeStatus({
    desiredChecksum: 'a1b2c3d4e5f6'.padEnd(64, '0'),
    cloudConfigChecksum: 'f6e5d4c3b2a1'.padEnd(64, '0'),
    stackStatus: 'UPDATE_IN_PROGRESS',
    observedGeneration: 1,
    conditions: [
      {
        type: 'Ready',
        status: 'False',
        reason: 'ChangeSetExecuting',
        message: 'rolling',
        lastTransitionTime: '2026-01-01T00:00:00Z',
        observedGeneration: 1,
      },
    ],
  });
  const put = await kubeRequest(
    api(),
    'PUT',
    `/apis/worker-stacks.io/v1alpha1/namespaces/${NS}/${PLURAL}/shown/status`,
    {
      ...created,
      status,
    },
  );
  expect(put.status).toBe(200);
  // WHEN the table kubectl asks for is read
  const table = await kubeRequest(
    api(),
    'GET',
    `/apis/worker-stacks.io/v1alpha1/namespaces/${NS}/${PLURAL}/shown`,
    undefined,
    api().adminToken,
    undefined,
    undefined,
    'application/json;as=Table;v=v1;g=meta.k8s.io',
  );
  // THEN
  const columns: string[] = table.body.columnDefinitions.map((c: { name: string }) => c.name);
  const row = Object.fromEntries(columns.map((c, i) => [c, table.body.rows[0].cells[i]]));
  expect(row).toMatchObject({
    Name: 'shown',
    Ready: 'False',
    Reason: 'ChangeSetExecuting',
    Desired: 'a1b2c3d4e5f6',
    Live: 'f6e5d4c3b2a1',
    Stack: 'UPDATE_IN_PROGRESS',
  });
  expect(columns).toEqual([
    'Name',
    'Ready',
    'Reason',
    'Desired',
    'Live',
    'Pending',
    'Stack',
    'Pools',
    'Paused',
    'Stack Name',
    'Age',
  ]);
});

/**
 * [what, mutation, field the API server names, its message]. A message that starts with an item path comes from
 * a rule over a whole list: the file store names that item as the field and says the rest.
 */
const BAD: Array<[string, (o: Raw) => void, string, string, string?]> = [
  [
    'min above max',
    (o) => (o.spec.pool.minSize = 40),
    'spec.pool.minSize',
    '40 is greater than maxSize 30 (rule pool-size-order)',
  ],
  [
    'desired outside min..max',
    (o) => (o.spec.pool.desiredCapacity = 50),
    'spec.pool.desiredCapacity',
    '50 is outside minSize..maxSize (3..30) (rule pool-size-order)',
  ],
  [
    'min in service not below max',
    (o) => (o.spec.pool.rollingUpdate.minInstancesInService = 30),
    'spec.pool.rollingUpdate.minInstancesInService',
    '30 must be less than maxSize 30, or no instance could ever be replaced (rule min-in-service-below-max)',
  ],
  [
    'launch configuration with mixed types',
    (o) => (o.spec.pool.legacyLaunchConfiguration = true),
    'spec.pool.instanceTypes',
    'a launch configuration takes exactly one instance type (mixed instances need a launch template) (rule launch-configuration-one-type)',
  ],
  [
    'a pool with both an AMI id and an image channel',
    (o) => (o.spec.pool.imageChannel = 'al2023'),
    'spec.pool.machineImage',
    'set exactly one of machineImage (an AMI id) and imageChannel (a WorkerImageChannel whose release the daemon pins) (rule image-source)',
  ],
  [
    'a pool with neither an AMI id nor an image channel',
    (o) => delete o.spec.pool.machineImage,
    'spec.pool.machineImage',
    'set exactly one of machineImage (an AMI id) and imageChannel (a WorkerImageChannel whose release the daemon pins) (rule image-source)',
  ],
  [
    'instance type twice',
    (o) => o.spec.pool.instanceTypes.push('m6i.xlarge'),
    'spec.pool.instanceTypes',
    'spec.pool.instanceTypes[3] duplicates spec.pool.instanceTypes[0] (instance types must be unique) (rule instance-types-unique)',
  ],
  [
    'fewer subnets than zones',
    (o) => o.spec.network.subnetIds.pop(),
    'spec.network.subnetIds',
    '2 subnets for 3 availability zones (give one subnet per zone, in the same order) (rule subnet-per-zone)',
  ],
  [
    'zone of another region',
    (o) => (o.spec.network.availabilityZones[1] = 'us-east-1b'),
    'spec.network.availabilityZones',
    'spec.network.availabilityZones[1] us-east-1b is not in region eu-west-1 (rule zone-in-region)',
  ],
  [
    'subnet twice',
    (o) => (o.spec.network.subnetIds[2] = o.spec.network.subnetIds[0]),
    'spec.network.subnetIds',
    'spec.network.subnetIds[2] duplicates spec.network.subnetIds[0] (subnets must be unique) (rule subnets-unique)',
  ],
  [
    'port and a range',
    (o) => (o.spec.securityGroupRules[0].fromPort = 1),
    'spec.securityGroupRules[0]',
    'give either port or fromPort+toPort, not both (rule sg-rule-ports)',
  ],
  [
    'tcp rule without a port',
    (o) => delete o.spec.securityGroupRules[0].port,
    'spec.securityGroupRules[0].port',
    'required field is missing (tcp rules need a port or a fromPort+toPort range) (rule sg-rule-ports)',
  ],
  [
    'half a range',
    (o) => delete o.spec.securityGroupRules[2].toPort,
    'spec.securityGroupRules[2]',
    'a port range needs both fromPort and toPort (rule sg-rule-ports)',
  ],
  [
    'reversed range',
    (o) => Object.assign(o.spec.securityGroupRules[2], { fromPort: 32767, toPort: 30000 }),
    'spec.securityGroupRules[2].fromPort',
    'port range is reversed: fromPort 32767 is greater than toPort 30000 (rule port-range-order)',
  ],
  [
    'icmp with a port',
    (o) => (o.spec.securityGroupRules[0].protocol = 'icmp'),
    'spec.securityGroupRules[0]',
    'icmp rules take no port (remove port/fromPort/toPort) (rule sg-rule-ports)',
  ],
  [
    'icmpv6 from an IPv4 cidr',
    (o) => Object.assign(o.spec.securityGroupRules[2], { protocol: 'icmpv6', fromPort: undefined, toPort: undefined }),
    'spec.securityGroupRules[2].protocol',
    'icmpv6 with an IPv4 source cidr never matches (use icmp, or cidrIpv6) (rule icmpv6-source)',
  ],
  [
    'two sources',
    (o) => (o.spec.securityGroupRules[0].source.self = true),
    'spec.securityGroupRules[0].source',
    'give exactly one of cidr, cidrIpv6, securityGroupId, prefixListId, self, loadBalancer (found securityGroupId, self) (rule sg-rule-one-source)',
  ],
  [
    'no source',
    (o) => (o.spec.securityGroupRules[0].source = {}),
    'spec.securityGroupRules[0].source',
    'give exactly one of cidr, cidrIpv6, securityGroupId, prefixListId, self, loadBalancer (found none) (rule sg-rule-one-source)',
  ],
  [
    'load balancer source without listeners',
    (o) => {
      o.spec.listeners = [];
      o.spec.securityGroupRules[0].source = { loadBalancer: true };
    },
    'spec.securityGroupRules',
    'spec.securityGroupRules[0].source.loadBalancer the cluster has no listeners, so no load balancer (rule load-balancer-source)',
  ],
  [
    'rule twice (port 22 and 22-22 are one rule)',
    (o) =>
      o.spec.securityGroupRules.push({ ...o.spec.securityGroupRules[3], port: undefined, fromPort: 22, toPort: 22 }),
    'spec.securityGroupRules',
    'spec.securityGroupRules[4] duplicates spec.securityGroupRules[3] (rules (same protocol, ports and source) must be unique) (rule sg-rules-unique)',
  ],
  [
    'listeners without a load balancer',
    (o) => delete o.spec.loadBalancer,
    'spec.loadBalancer',
    'required field is missing (listeners need a load balancer with allowedCidrs) (rule listeners-need-load-balancer)',
  ],
  [
    'TLS without a certificate',
    (o) => (o.spec.listeners[0].protocol = 'TLS'),
    'spec.listeners[0].certificateArn',
    'required field is missing (TLS listeners need an ACM certificate) (rule tls-fields)',
  ],
  [
    'a certificate on TCP',
    (o) =>
      (o.spec.listeners[0].certificateArn =
        'arn:aws:acm:eu-west-1:111111111111:certificate/0f0e0d0c-0b0a-0908-0706-050403020100'),
    'spec.listeners[0].certificateArn',
    'only TLS listeners take a certificate (protocol is TCP) (rule tls-fields)',
  ],
  [
    'an sslPolicy on TCP',
    (o) => (o.spec.listeners[0].sslPolicy = 'ELBSecurityPolicy-TLS13-1-2-2021-06'),
    'spec.listeners[0].sslPolicy',
    'only TLS listeners take an sslPolicy (protocol is TCP) (rule tls-fields)',
  ],
  [
    'a path on a TCP health check',
    (o) => (o.spec.listeners[0].healthCheck.protocol = 'TCP'),
    'spec.listeners[0].healthCheck.path',
    'a TCP health check takes no path (use protocol HTTP or HTTPS) (rule tcp-health-check-path)',
  ],
  [
    'listener name twice',
    (o) => (o.spec.listeners[1].name = o.spec.listeners[0].name),
    'spec.listeners',
    'spec.listeners[1].name duplicates spec.listeners[0].name (listener names must be unique) (rule listeners-unique)',
  ],
  [
    'listener port twice',
    (o) => (o.spec.listeners[1].port = o.spec.listeners[0].port),
    'spec.listeners',
    'spec.listeners[1].port duplicates spec.listeners[0].port (listener ports must be unique) (rule listeners-unique)',
  ],
  [
    'node port range reversed',
    (o) => (o.spec.nodePortRange = { from: 32767, to: 30000 }),
    'spec.nodePortRange.from',
    '32767 is greater than to (30000) (rule node-port-range-order)',
  ],
  [
    'node port of SSH',
    (o) => (o.spec.listeners[0].nodePort = 22),
    'spec.listeners[0].nodePort',
    '22 is the port of SSH on the nodes; a listener never points at a node service, not even with hostPort: true (rule no-node-service-port)',
  ],
  [
    'health check on the kubelet API',
    (o) => (o.spec.listeners[0].healthCheck.port = 10250),
    'spec.listeners[0].healthCheck.port',
    '10250 is the port of the kubelet API on the nodes; a health check never points at a node service, not even with hostPort: true (rule no-node-service-port)',
  ],
  [
    'node port outside the range',
    (o) => (o.spec.listeners[1].nodePort = 8080),
    'spec.listeners',
    'spec.listeners[1].nodePort 8080 is outside spec.nodePortRange (30000-32767); use a NodePort of a Service, or set hostPort: true on the listener if a hostNetwork pod listens on it (rule node-port-in-range)',
  ],
  [
    'UDP without a health-check port',
    (o) => {
      o.spec.listeners[0].protocol = 'UDP';
      delete o.spec.listeners[0].healthCheck;
    },
    'spec.listeners[0].healthCheck',
    'a UDP listener needs an explicit health check with a port (healthCheck: {protocol: TCP, HTTP or HTTPS, port: <a TCP port the same pods answer>}); a TCP probe of a UDP node port never passes (rule udp-health-check)',
  ],
  [
    'listeners × clients over the quota',
    (o) => (o.spec.loadBalancer.allowedCidrs = Array.from({ length: 31 }, (_, i) => `10.${i}.0.0/16`)),
    'spec.loadBalancer.allowedCidrs',
    '2 listeners × 31 CIDRs = 62 rules, over the AWS limit of 60 per security group (rule client-rules-limit)',
  ],
  [
    'load balancer subnet twice',
    (o) => (o.spec.loadBalancer.subnetIds = ['subnet-0a1b2c3d4e5f60001', 'subnet-0a1b2c3d4e5f60001']),
    'spec.loadBalancer.subnetIds',
    'spec.loadBalancer.subnetIds[1] duplicates spec.loadBalancer.subnetIds[0] (a load balancer takes each subnet once, one per zone) (rule subnets-unique)',
  ],
  [
    'secret of another region',
    (o) =>
      (o.spec.cloudConfig.values.bootstrapTokenSecretArn =
        'arn:aws:secretsmanager:us-east-1:111111111111:secret:x-AbCdEf'),
    'spec.cloudConfig.values.bootstrapTokenSecretArn',
    'the secret is in region us-east-1, the cluster in eu-west-1 (use the secret of eu-west-1) (rule reference-in-cluster)',
  ],
  [
    'secret of another account',
    (o) =>
      (o.spec.cloudConfig.values.bootstrapTokenSecretArn =
        'arn:aws:secretsmanager:eu-west-1:222222222222:secret:x-AbCdEf'),
    'spec.cloudConfig.values.bootstrapTokenSecretArn',
    'the secret is in account 222222222222, the cluster in 111111111111 (use the secret of account 111111111111) (rule reference-in-cluster)',
  ],
  // edge-ap1: 33 rules + 25 node-port rules (12 TCP and 1 TLS node ports, 6 UDP node ports and their 6 TCP health-check ports) = 58.
  [
    "security-group quota with the listeners' node-port rules",
    (o) =>
      o.spec.securityGroupRules.push(
        ...[8443, 8444, 8445].map((port) => ({
          description: `extra ${port}`,
          protocol: 'tcp',
          port,
          source: { cidr: '192.0.2.0/24' },
        })),
      ),
    'spec.securityGroupRules',
    '36 rules + 25 listener node-port rules = 61, over the AWS limit of 60 inbound rules per security group (use port ranges or prefix lists) (rule sg-rules-limit)',
    'edge-ap1',
  ],
  [
    'taint twice',
    (o) =>
      (o.spec.cloudConfig.values.nodeTaints = [
        { key: 'a', value: '1', effect: 'NoSchedule' },
        { key: 'a', value: '2', effect: 'NoSchedule' },
      ]),
    'spec.cloudConfig.values.nodeTaints',
    'spec.cloudConfig.values.nodeTaints[1] duplicates spec.cloudConfig.values.nodeTaints[0] (taints (same key and effect; the kubelet refuses them) must be unique) (rule taints-unique)',
  ],
  [
    '46 tags',
    (o) => (o.spec.tags = Object.fromEntries(Array.from({ length: 46 }, (_, i) => [`k${i}`, 'v']))),
    'spec.tags',
    '46 tags, at most 45 allowed (AWS takes 50 per resource, and worker-stacks adds its own) (rule tags-limit)',
  ],
  // Field rules (rules.ts), stated in the CRD from the same definitions.
  [
    'node port not a port',
    (o) => (o.spec.listeners[0].nodePort = 70000),
    'spec.listeners[0].nodePort',
    '70000 is not a node port (1-65535)',
  ],
  [
    'cidr with host bits',
    (o) => (o.spec.securityGroupRules[2].source.cidr = '10.20.0.1/16'),
    'spec.securityGroupRules[2].source.cidr',
    '10.20.0.1/16 has host bits set (did you mean 10.20.0.0/16?)',
  ],
  [
    'pause over an hour',
    (o) => (o.spec.pool.rollingUpdate.pauseTime = 'PT1H1S'),
    'spec.pool.rollingUpdate.pauseTime',
    "PT1H1S is longer than CloudFormation's maximum pause time (PT1H)",
  ],
  [
    'account of 5 digits',
    (o) => (o.spec.account = '12345'),
    'spec.account',
    '"12345" is not an AWS account id (12 digits)',
  ],
  [
    'group size not whole',
    (o) => (o.spec.pool.maxSize = 2000),
    'spec.pool.maxSize',
    '2000 is not a valid group size (a whole number 1-1000)',
  ],
  // Optional in the schema (an EKS object has neither), required by the templates that read them (values.yaml).
  [
    'a Flatcar object without kubernetesVersion',
    (o) => delete o.spec.cloudConfig.values.kubernetesVersion,
    'spec.cloudConfig.values.kubernetesVersion',
    'required field is missing (template flatcar-worker needs it: Version of the kubelet the node installs at boot.) (rule template-value-required)',
  ],
  [
    'an AL2023 object without bootstrapTokenSecretArn',
    (o) => delete o.spec.cloudConfig.values.bootstrapTokenSecretArn,
    'spec.cloudConfig.values.bootstrapTokenSecretArn',
    'required field is missing (template al2023-worker needs it: Secret the boot script fetches the bootstrap token from with the node role.) (rule template-value-required)',
    'staging-us1',
  ],
];

// A rest parameter: a function declaring more parameters than a row has gets jest's `done` callback as the last one.
test.each(BAD)('%s: refused by the API server, at the field, with the message of the file store', async (...row) => {
  // GIVEN
  const [, mutate, field, message, base] = row;
  const name = fresh();
  const o = object(name, mutate, base);
  // WHEN
  const r = await create(api(), o);
  // THEN the API server refuses it, naming the field and the rule
  expect(r.status).toBe(422);
  const causes: Array<{ field: string; message: string }> = r.body.details?.causes ?? [];
  expect(causes.filter((c) => c.field === field).map((c) => c.message)).toEqual(
    expect.arrayContaining([expect.stringContaining(message)]),
  );
  // AND `validate` says the same of the same object (a rule over a list: the item path is the file store's field)
  const m = /^(spec\.[\w.[\]]+) (.*)$/.exec(message);
  const file = m && m[1].startsWith(field) && m[1] !== field ? { path: m[1], message: m[2] } : { path: field, message };
  const { metadata: _m, ...raw } = o;
  const problems = validateCluster(
    { ...raw, metadata: { name } },
    { file: `clusters/${name}.yaml`, templates: TEMPLATES },
  ).problems;
  expect(problems.map((p) => ({ path: p.path, message: p.message }))).toContainEqual(file);
});

test('a name the file store refuses is refused: a DNS label of at most 40 characters', async () => {
  // GIVEN a valid Kubernetes name (a DNS subdomain) that is no stack name
  const name = 'a'.repeat(41);
  // WHEN
  const r = await create(api(), object(name));
  // THEN
  expect(r.status).toBe(422);
  expect(r.body.details.causes).toContainEqual(
    expect.objectContaining({
      field: 'metadata.name',
      message: expect.stringContaining(`"${name}" is not a DNS label`),
    }),
  );
});

test('an unknown field is refused under strict field validation (kubectl apply --validate=strict)', async () => {
  // WHEN
  const r = await create(
    api(),
    object(fresh(), (o) => (o.spec.pool.minSise = 3)),
  );
  // THEN
  expect(r.status).toBe(400);
  expect(r.body.message).toContain('unknown field "spec.pool.minSise"');
});

test('several problems are all reported at once', async () => {
  // WHEN
  const r = await create(
    api(),
    object(fresh(), (o) => {
      o.spec.pool.minSize = 40;
      o.spec.listeners[0].nodePort = 22;
    }),
  );
  // THEN
  expect(r.body.details.causes.map((c: { field: string }) => c.field)).toEqual(
    expect.arrayContaining(['spec.pool.minSize', 'spec.listeners[0].nodePort']),
  );
});
