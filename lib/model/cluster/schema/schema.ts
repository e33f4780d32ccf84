import { z } from 'zod';
import { clusterDnsAddress, labelValue, nodeLabelKey, taintKey, taintValue } from './kubelet-rules';
import {
  awsId,
  dnsLabel,
  ec2Description,
  httpsUrl,
  intIn,
  ipCidr,
  ipv4Cidr,
  ipv6Cidr,
  noTokens,
  pattern,
  pauseTime,
  port,
} from './rules';
import { tagKey, tagValue } from './tag-rules';
import { LabelsSchema } from './selector';
import { MaintenanceWindowSchema } from './windows';
import {
  DEFAULT_NODE_READY_TIMEOUT_SECONDS,
  DRAIN_DEFAULT,
  DrainSchema,
  InstanceRefreshSchema,
  ROLLOUT_DEFAULT,
  RolloutSchema,
} from './rollout-schema';

/**
 * The WorkerCluster object. This schema is the single source of truth: the
 * TypeScript types are inferred from it, validation runs it, and the
 * reference (docs/reference.md) and the CRD are generated from it.
 */

export const API_VERSION = 'worker-stacks.io/v1alpha1';
export const KIND = 'WorkerCluster';

const d = (text: string) => ({ description: text });

export const RuleSourceSchema = z
  .strictObject({
    cidr: ipv4Cidr.optional().meta(d('An IPv4 CIDR, network address only (10.0.0.0/8).')),
    cidrIpv6: ipv6Cidr.optional().meta(d('An IPv6 CIDR (2001:db8::/32).')),
    securityGroupId: awsId('sg', 'a security group').optional().meta(d('Another security group.')),
    prefixListId: awsId('pl', 'a prefix list').optional().meta(d('A managed prefix list.')),
    self: z.literal(true).optional().meta(d('The worker pool itself (node to node).')),
    loadBalancer: z.literal(true).optional().meta(d("The cluster's load balancer.")),
  })
  .meta(
    d(
      'Where the traffic comes from: exactly one of cidr, cidrIpv6, securityGroupId, prefixListId, self, loadBalancer.',
    ),
  );

export const RULE_SOURCE_KINDS = [
  'cidr',
  'cidrIpv6',
  'securityGroupId',
  'prefixListId',
  'self',
  'loadBalancer',
] as const;

export const SecurityGroupRuleSchema = z
  .strictObject({
    description: ec2Description.meta(
      d(
        'What the rule is for; shown in the EC2 console. 1-255 characters: letters a-z A-Z, digits, space and ._-:/()#,@[]+=&;{}!$* (what EC2 takes).',
      ),
    ),
    protocol: z.enum(['tcp', 'udp', 'icmp', 'icmpv6', 'all']).meta(d('IP protocol.')),
    port: port().optional().meta(d('A single port (tcp/udp). Give either port or fromPort+toPort.')),
    fromPort: port().optional().meta(d('First port of a range (tcp/udp).')),
    toPort: port().optional().meta(d('Last port of a range, inclusive (tcp/udp).')),
    source: RuleSourceSchema,
    pools: z
      .array(dnsLabel)
      .min(1)
      .optional()
      .meta(
        d(
          "Pools (spec.pools[].name) whose nodes alone take the rule: it goes on each named pool's own security group (the first narrowed rule of a pool adds that group to its nodes: a roll of that pool), and source self means that pool's nodes. @default every node of the cluster (the shared worker security group)",
        ),
      ),
  })
  .meta(d('One inbound rule on the worker security group, or on the groups of the pools it names.'));

export const HealthCheckSchema = z
  .strictObject({
    protocol: z.enum(['TCP', 'HTTP', 'HTTPS']).default('TCP').meta(d('Health check protocol. @default TCP')),
    port: port().optional().meta(d("Port to probe on the node. @default the listener's nodePort")),
    path: noTokens(pattern(/^\/[\x21-\x7e]*$/, 'an HTTP path starting with /'))
      .optional()
      .meta(d('HTTP(S) path. Only for HTTP and HTTPS. @default /')),
    intervalSeconds: z.literal([10, 30]).default(10).meta(d('Seconds between probes (10 or 30). @default 10')),
    healthyThreshold: intIn(2, 10, 'healthy threshold').default(3).meta(d('@default 3')),
    unhealthyThreshold: intIn(2, 10, 'unhealthy threshold').default(3).meta(d('@default 3')),
  })
  .meta(d('Target health check.'));

export const ListenerSchema = z
  .strictObject({
    name: dnsLabel.meta(d('Unique name; the listener and target group ids derive from it, not from its position.')),
    protocol: z.enum(['TCP', 'UDP', 'TCP_UDP', 'TLS']).default('TCP').meta(d('Listener protocol. @default TCP')),
    port: port().meta(d('Port the load balancer listens on.')),
    nodePort: port('node port').meta(d('Port on the nodes the traffic is forwarded to (a Kubernetes NodePort).')),
    certificateArn: pattern(/^arn:aws[a-z-]*:acm:[a-z0-9-]+:\d{12}:certificate\/[0-9a-f-]+$/, 'an ACM certificate ARN')
      .optional()
      .meta(d('ACM certificate; required for TLS, refused otherwise.')),
    // Only policies whose oldest protocol is TLS 1.2 or 1.3 (the minimum is in the name: TLS13-1-2, TLS-1-2, FS-1-2):
    // ELBSecurityPolicy-2016-08, -TLS-1-0-*, -TLS-1-1-*, -TLS13-1-0-*, -TLS13-1-1-*, -FS-2018-06 and -FS-1-1-* take TLS 1.0 or 1.1.
    sslPolicy: pattern(
      /^ELBSecurityPolicy-(TLS13-1-[23]|TLS-1-2|FS-1-2)(-[A-Za-z0-9]+)*-\d{4}-\d{2}$/,
      'an ELB security policy of TLS 1.2 or newer, such as ELBSecurityPolicy-TLS13-1-2-2021-06 (policies that accept TLS 1.0 or 1.1 are refused)',
    )
      .optional()
      .meta(
        d(
          'TLS security policy of a TLS listener; refused for other protocols. @default ELBSecurityPolicy-TLS13-1-2-2021-06 (TLS 1.2 and 1.3 only)',
        ),
      ),
    hostPort: z
      .boolean()
      .default(false)
      .meta(
        d(
          'Allow a nodePort outside spec.nodePortRange (for hostNetwork ingress); ports of node services (SSH, kubelet, etcd, API server ...) are refused even then. @default false',
        ),
      ),
    pools: z
      .array(dnsLabel)
      .min(1)
      .optional()
      .meta(
        d(
          'Pools (spec.pools[].name) whose nodes the target group takes. @default every pool without a NoSchedule or NoExecute taint',
        ),
      ),
    healthCheck: HealthCheckSchema.default({
      protocol: 'TCP',
      intervalSeconds: 10,
      healthyThreshold: 3,
      unhealthyThreshold: 3,
    }),
  })
  .meta(d('One load-balancer listener with its target group on the worker pool.'));

export const RollingUpdateSchema = z
  .strictObject({
    strategy: z
      .enum(['rolling', 'instanceRefresh'])
      .default('rolling')
      .meta(
        d(
          "rolling: CloudFormation's AutoScalingRollingUpdate, in batches gated by node signals; instanceRefresh: the AutoScalingInstanceRefresh policy (surge, checkpoints, bake time, alarms). @default rolling",
        ),
      ),
    maxBatchSize: intIn(1, 1000, 'batch size').default(1).meta(d('Instances replaced at a time (rolling). @default 1')),
    minInstancesInService: intIn(0, 1000, 'instance count')
      .default(0)
      .meta(d('Instances kept in service during the update; must be below maxSize (rolling). @default 0')),
    pauseTime: pauseTime
      .default('PT10M')
      .meta(
        d(
          "With waitOnResourceSignals: how long each batch (and the group's creation) waits for its nodes' signals, at least the node ready timeout plus a minute of boot; without: the pause after each batch. ISO 8601, at most PT1H. @default PT10M",
        ),
      ),
    waitOnResourceSignals: z
      .boolean()
      .default(true)
      .meta(
        d(
          'Each new node signals CloudFormation once its kubelet is healthy and the node is registered (or FAILURE after spec.cloudConfig.values.nodeReadyTimeoutSeconds); a batch that does not signal rolls the stack back. @default true',
        ),
      ),
    minSuccessfulInstancesPercent: intIn(0, 100, 'percentage')
      .default(100)
      .meta(d('Share of the nodes of a batch (and of the created group) that must signal SUCCESS. @default 100')),
    instanceRefresh: InstanceRefreshSchema.optional().meta(
      d(
        'AutoScalingInstanceRefresh preferences (strategy instanceRefresh only). @default AWS defaults: 100 / 110 %, no checkpoints',
      ),
    ),
  })
  .meta(d('How a config change replaces the nodes.'));

export const ROLLING_UPDATE_DEFAULT = {
  strategy: 'rolling',
  maxBatchSize: 1,
  minInstancesInService: 0,
  pauseTime: 'PT10M',
  waitOnResourceSignals: true,
  minSuccessfulInstancesPercent: 100,
} as const;

/** Machine image families a pool may state (spec.pool.imageFamily); each node-config format names the ones that read it. */
export const IMAGE_FAMILIES = ['flatcar', 'al2023', 'ubuntu', 'eks-al2023', 'bottlerocket'] as const;
export type ImageFamily = (typeof IMAGE_FAMILIES)[number];

export const PoolSchema = z
  .strictObject({
    instanceTypes: z
      .array(pattern(/^[a-z][a-z0-9-]*\.[a-z0-9]+$/, 'an EC2 instance type such as m6i.large'))
      .min(1)
      .meta(d('Instance types; more than one makes a mixed instances policy, first is preferred.')),
    machineImage: awsId('ami', 'an AMI')
      .optional()
      .meta(
        d(
          'AMI id in the cluster region (no lookups at synth time). Exactly one of machineImage and imageChannel (rule image-source). @default none: imageChannel pins one',
        ),
      ),
    imageChannel: dnsLabel
      .optional()
      .meta(
        d(
          'A WorkerImageChannel (docs/image-channels.md) whose release the daemon pins as this pool AMI id before synthesis: a new release is a roll that goes through the fleet rollout waves. Exactly one of machineImage and imageChannel (rule image-source). @default none',
        ),
      ),
    imageFamily: z
      .enum(IMAGE_FAMILIES)
      .optional()
      .meta(
        d(
          'What machineImage is (an AMI id says nothing offline): flatcar, al2023 (Amazon Linux 2023), ubuntu, eks-al2023 (the EKS-optimized AL2023 AMI, with nodeadm) or bottlerocket (an aws-k8s-* variant). A template whose node config only that family reads (eks-al2023, eks-bottlerocket, flatcar-worker...) is refused on a pool that states another (rule image-family). @default unstated: not checked',
        ),
      ),
    minSize: intIn(0, 1000, 'group size').meta(d('Minimum number of nodes.')),
    maxSize: intIn(1, 1000, 'group size').meta(d('Maximum number of nodes.')),
    desiredCapacity: intIn(0, 1000, 'group size')
      .optional()
      .meta(d('Desired nodes. Leave unset so a deploy never resets what an autoscaler chose. @default unset')),
    rootVolume: z
      .strictObject({
        sizeGiB: intIn(8, 16384, 'volume size in GiB').default(50).meta(d('@default 50')),
        type: z.enum(['gp3', 'gp2', 'io2']).default('gp3').meta(d('@default gp3')),
        deviceName: pattern(/^\/dev\/(sd|xvd)[a-z]$/, 'a root device name such as /dev/xvda')
          .default('/dev/xvda')
          .meta(d('@default /dev/xvda')),
      })
      .default({ sizeGiB: 50, type: 'gp3', deviceName: '/dev/xvda' })
      .meta(d('Root volume; always encrypted.')),
    rollingUpdate: RollingUpdateSchema.default(ROLLING_UPDATE_DEFAULT),
    drain: DrainSchema.default(DRAIN_DEFAULT),
    legacyLaunchConfiguration: z
      .boolean()
      .default(false)
      .meta(
        d(
          'Build an AWS::AutoScaling::LaunchConfiguration instead of a launch template, for accounts that still use them. @default false',
        ),
      ),
    detailedMonitoring: z
      .boolean()
      .default(false)
      .meta(
        d(
          'EC2 detailed monitoring (1-minute instance metrics, billed by CloudWatch). Part of what the nodes launch with: turning it on or off rolls the pool. A launch configuration (legacyLaunchConfiguration) has it on whatever this says (the CloudFormation default). @default false',
        ),
      ),
  })
  .meta(d('The worker Auto Scaling group.'));

export const TaintSchema = z
  .strictObject({
    key: taintKey,
    value: taintValue.default(''),
    effect: z.enum(['NoSchedule', 'PreferNoSchedule', 'NoExecute']),
  })
  .meta(d('A node taint, as the kubelet registers it (--register-with-taints).'));

export const CapacitySchema = z
  .strictObject({
    onDemandBaseCapacity: intIn(0, 1000, 'instance count')
      .default(0)
      .meta(d('Nodes always on-demand, before any spot; at most maxSize. @default 0')),
    onDemandPercentageAboveBaseCapacity: intIn(0, 100, 'percentage')
      .default(100)
      .meta(d('Share of the nodes above the base that are on-demand; 0 makes them all spot. @default 100')),
    spotAllocationStrategy: z
      .enum(['price-capacity-optimized', 'capacity-optimized', 'capacity-optimized-prioritized', 'lowest-price'])
      .default('price-capacity-optimized')
      .meta(d('How EC2 picks spot pools (the AWS recommendation). @default price-capacity-optimized')),
    capacityRebalance: z
      .boolean()
      .default(true)
      .meta(d('Launch a replacement when EC2 says a spot node is at elevated risk of interruption. @default true')),
  })
  .meta(d('On-demand and spot: the mixed instances policy of the pool (EC2 Auto Scaling InstancesDistribution).'));

export const CloudConfigValuesSchema = z
  .strictObject({
    apiEndpoint: httpsUrl('an https:// URL of the Kubernetes API server (https://host[:port], no path)', false).meta(
      d('Kubernetes API server URL (https://host[:port], port 1-65535, no credentials).'),
    ),
    clusterCA: pattern(
      /^-----BEGIN CERTIFICATE-----\n[A-Za-z0-9+/=\n]+-----END CERTIFICATE-----\n?$/,
      'a PEM certificate',
      65536,
    ).meta(d('PEM CA bundle of the API server (public, not a secret).')),
    // Optional here: required by the templates that read it (their values.yaml says required: true), so an EKS
    // object, whose AMI brings its kubelet, need not write one.
    kubernetesVersion: pattern(/^v1\.\d{1,2}\.\d{1,3}$/, 'a Kubernetes version such as v1.31.2')
      .optional()
      .meta(d('Kubelet version. Required by the templates that install a kubelet (flatcar-worker, al2023-worker).')),
    clusterDNS: clusterDnsAddress.meta(
      d('Cluster DNS service IP (a unicast IPv4 address: not 0.0.0.0/8, loopback, link-local, multicast or reserved).'),
    ),
    maxPods: intIn(8, 1024, 'pod count').default(110).meta(d('@default 110')),
    nodeLabels: z
      .record(nodeLabelKey, labelValue)
      .default({})
      .meta(d('Labels the kubelet registers the node with. @default {}')),
    nodeTaints: z.array(TaintSchema).default([]).meta(d('Taints the kubelet registers the node with. @default []')),
    registryMirrors: z
      .array(httpsUrl('an https:// registry mirror URL', true))
      .default([])
      .meta(
        d(
          'Container registry mirrors for docker.io (https://host[:port][/path], port 1-65535, the path of letters, digits and ._~%/:+=,-; a URL with user:password@ is refused and never echoed). @default []',
        ),
      ),
    nodeReadyTimeoutSeconds: intIn(60, 3540, 'timeout in seconds')
      .default(DEFAULT_NODE_READY_TIMEOUT_SECONDS)
      .meta(
        d(
          `How long a booting node waits for its kubelet to be healthy and its node object to exist before it signals FAILURE to CloudFormation. @default ${DEFAULT_NODE_READY_TIMEOUT_SECONDS}`,
        ),
      ),
    bootstrapTokenSecretArn: pattern(
      /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[A-Za-z0-9/_+=.@-]+$/,
      'a Secrets Manager secret ARN',
      2048,
    )
      // Optional here, as kubernetesVersion: an EKS node joins with its role, not a bootstrap token.
      .optional()
      .meta(
        d(
          'Secret holding the kubelet bootstrap token, in the cluster account and region; its name starts with worker-stacks/<metadata.name>/ (a cluster names only its own secrets). Secret: fetched by the node at boot with its role, never rendered into a config. Required by the templates that join with a bootstrap token (flatcar-worker, al2023-worker).',
        ),
      ),
  })
  // Keys beyond these are the chosen template's own values: lib/model/cluster/values/template-values.ts checks them against the
  // template's values.yaml, so a template can take a new setting without a change here.
  .catchall(z.unknown())
  .meta(
    d(
      "Typed values the config template renders with: these, which every template takes, and the template's own (below).",
    ),
  );

/**
 * The values every template takes that a pool may set for itself (a kubelet version per pool, its pod density, its
 * boot time); the others are the cluster's alone (pool-rules.ts refuses them in a pool): where the API server is and how
 * a node trusts it and joins it (apiEndpoint, clusterCA, clusterDNS, the bootstrap secret, whose name is checked against
 * the cluster's), the registry mirrors, and nodeLabels and nodeTaints, which are the pool's labels and taints.
 */
export const POOL_OWN_VALUES = ['kubernetesVersion', 'maxPods', 'nodeReadyTimeoutSeconds'] as const;

/**
 * A pool's own values: POOL_OWN_VALUES typed as in CloudConfigValuesSchema but optional and without their defaults (a
 * default here would replace the cluster's value in the pool's merged values), and the template's own (checked against
 * its values.yaml).
 */
function poolValuesSchema() {
  const own: readonly string[] = POOL_OWN_VALUES;
  const shape = Object.fromEntries(
    Object.entries(CloudConfigValuesSchema.shape)
      .filter(([key]) => own.includes(key))
      .map(([key, field]) => [
        key,
        (field instanceof z.ZodDefault ? (field.unwrap() as z.ZodType) : field)
          .optional()
          .meta(d(`This pool's ${key}, in place of spec.cloudConfig.values.${key}. @default the cluster's`)),
      ]),
  );
  return z.strictObject(shape).catchall(z.unknown());
}

/** One named pool of spec.pools: spec.pool's fields, and what only a pool among several needs. */
export const NodePoolSchema = PoolSchema.extend({
  name: dnsLabel.meta(
    d(
      'Unique within the cluster. The pool named default lives in the stack WorkerStack-<cluster> (beside what the pools share); every other pool has its own stack WorkerStack-<cluster>-Pool-<name>.',
    ),
  ),
  architecture: z
    .enum(['x86_64', 'arm64'])
    .optional()
    .meta(
      d(
        "The machine image's architecture; every instance type must support it (EC2's DescribeInstanceTypes). @default the instance types' own",
      ),
    ),
  subnetIds: z
    .array(awsId('subnet', 'a subnet'))
    .min(1)
    .optional()
    .meta(d("Subnets of this pool, a subset of spec.network.subnetIds. @default all of the cluster's")),
  labels: z
    .record(nodeLabelKey, labelValue)
    .default({})
    .meta(d('Node labels of this pool, merged over spec.cloudConfig.values.nodeLabels. @default {}')),
  taints: z
    .array(TaintSchema)
    .default([])
    .meta(d('Node taints of this pool, added to spec.cloudConfig.values.nodeTaints. @default []')),
  capacity: CapacitySchema.optional().meta(
    d('On-demand and spot. @default every node on-demand, no mixed instances policy beyond the instance types'),
  ),
  cloudConfig: z
    .strictObject({
      template: pattern(/^[a-z0-9][a-z0-9-]*$/, 'a template name')
        .optional()
        .meta(d("Directory name under cloudconfig/. @default the cluster's")),
      values: poolValuesSchema()
        .default({})
        .meta(
          d(
            "Values merged over the cluster's spec.cloudConfig.values (a key here replaces the cluster's): of those every template takes, kubernetesVersion, maxPods and nodeReadyTimeoutSeconds (the others are the cluster's alone; the pool's labels and taints are its labels and taints), and the template's own. @default {}",
          ),
        ),
    })
    .optional()
    .meta(d("This pool's node config: template and values over the cluster's. @default the cluster's")),
}).meta(d('One worker pool: an Auto Scaling group in its own stack, rolling on its own.'));

export const ClusterSpecSchema = z.strictObject({
  account: pattern(/^\d{12}$/, 'an AWS account id (12 digits)').meta(d('AWS account of the stack.')),
  region: pattern(/^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-\d$/, 'an AWS region such as eu-west-1').meta(
    d('AWS region of the stack.'),
  ),
  network: z
    .strictObject({
      vpcId: awsId('vpc', 'a VPC').meta(d('VPC of the nodes.')),
      availabilityZones: z
        .array(pattern(/^[a-z]{2}(-gov)?-[a-z]+-\d[a-z]$/, 'an availability zone such as eu-west-1a'))
        .min(1)
        .meta(d('Zones, in the same order as subnetIds.')),
      subnetIds: z
        .array(awsId('subnet', 'a subnet'))
        .min(1)
        .meta(d('One subnet per zone, given explicitly: synthesis never looks anything up.')),
      associatePublicIpAddress: z
        .boolean()
        .default(false)
        .meta(
          d(
            'Give each node a public IPv4 address (only for public subnets without NAT or VPC endpoints; nodes otherwise reach S3 and the API privately). @default false',
          ),
        ),
    })
    .meta(d('Network, given explicitly.')),
  pool: PoolSchema.optional().meta(
    d('The one worker pool of a single-pool cluster (the pool named default). Give either pool or pools.'),
  ),
  pools: z
    .array(NodePoolSchema)
    .min(1)
    .optional()
    .meta(
      d(
        'Named worker pools, each in its own stack and rolling on its own (on-demand system, spot, arm64, GPU ...). Give either pool or pools.',
      ),
    ),
  nodePortRange: z
    .strictObject({
      from: port('node port').meta(d('First port of the range.')),
      to: port('node port').meta(d('Last port of the range, inclusive.')),
    })
    .default({ from: 30000, to: 32767 })
    .meta(
      d(
        "The cluster's Kubernetes NodePort range (kube-apiserver --service-node-port-range); listeners forward only into it unless they set hostPort. @default 30000-32767",
      ),
    ),
  loadBalancer: z
    .strictObject({
      scheme: z.enum(['internal', 'internet-facing']).default('internal').meta(d('@default internal')),
      allowedCidrs: z
        .array(ipCidr)
        .min(1)
        .meta(
          d(
            'Clients allowed to reach the listeners (IPv4 or IPv6 CIDRs; IPv6 clients make the load balancer dual-stack).',
          ),
        ),
      subnetIds: z
        .array(awsId('subnet', 'a subnet'))
        .min(1)
        .optional()
        .meta(d('Subnets of the load balancer. @default the node subnets')),
    })
    .optional()
    .meta(d('The Network Load Balancer in front of the listeners. Required when there are listeners.')),
  securityGroupRules: z
    .array(SecurityGroupRuleSchema)
    .default([])
    .meta(d('Inbound rules of the worker security group. @default []')),
  listeners: z.array(ListenerSchema).default([]).meta(d('Listeners of the load balancer. @default []')),
  cloudConfig: z
    .strictObject({
      template: pattern(/^[a-z0-9][a-z0-9-]*$/, 'a template name').meta(d('Directory name under cloudconfig/.')),
      values: CloudConfigValuesSchema,
    })
    .meta(d('The big node config: template and values.')),
  paused: z
    .boolean()
    .default(false)
    .meta(
      d(
        'Stop every AWS write for this cluster (waits on a stack already in progress go on and are recorded). worker-stacks pause|resume sets it. @default false',
      ),
    ),
  // How node-rolling changes reach this cluster: fleet rollouts (lib/engines/rollout: a hold and maintenance windows; waves
  // come from a WorkerRolloutPolicy) and the alarms that watch each update (rollout-schema.ts).
  rollout: RolloutSchema.extend({
    hold: z
      .boolean()
      .default(false)
      .meta(
        d(
          'Stage a new config without rolling the nodes: it is rendered, published and shown as desired, and the stack is not updated until hold is removed. Changes that roll no node still apply. @default false',
        ),
      ),
    maxConcurrentPools: intIn(1, 100, 'pool count')
      .default(1)
      .meta(
        d(
          'Pools of this cluster whose nodes roll at the same time: a cluster never loses more pools than this at once. @default 1',
        ),
      ),
    maintenanceWindows: z
      .array(MaintenanceWindowSchema)
      .max(16)
      .default([])
      .meta(
        d(
          "Rolls of this cluster start only inside one of these windows; they replace the wave's windows. @default [] (the wave's, else any time)",
        ),
      ),
  })
    .default({ ...ROLLOUT_DEFAULT, hold: false, maxConcurrentPools: 1, maintenanceWindows: [] })
    .meta(
      d(
        'How node-rolling changes reach this cluster (with the waves of a WorkerRolloutPolicy), and how each update of the stack is watched (reconciler change sets; cdk deploy has no rollback triggers).',
      ),
    ),
  deletionPolicy: z
    .enum(['Retain', 'Delete'])
    .default('Retain')
    .meta(
      d(
        'What deleting the object does to its stack (the Kubernetes store): Retain leaves it; Delete deletes it and waits, holding the object with the finalizer worker-stacks.io/stack until it is gone. The file store always retains. @default Retain',
      ),
    ),
  tags: z
    .record(tagKey, tagValue)
    .default({})
    .meta(
      d(
        'Tags on every resource of the stack: at most 45 (AWS takes 50 per resource; worker-stacks adds its own); keys 1-128 and values 0-256 characters of letters, digits, spaces and _.:/=+-@; keys not starting, in any case, with aws:, worker-stacks.io/, kubernetes.io/cluster/, aws-node-termination-handler/ or k8s.io/cluster-autoscaler/ (worker-stacks sets those). @default {}',
      ),
    ),
});

export const ClusterMetadataSchema = z.strictObject({
  name: dnsLabel.meta(d('Cluster name; the stack is WorkerStack-<name>.')),
  generation: intIn(0, Number.MAX_SAFE_INTEGER, 'generation')
    .optional()
    .meta(d('Bumped on every spec change by the store. @default 1')),
  labels: LabelsSchema.optional().meta(
    d('Kubernetes labels; rollout policies select waves by them (e.g. ring: canary). @default {}'),
  ),
  annotations: z.record(z.string(), z.string()).optional().meta(d('Free-form annotations. @default {}')),
});

export const WorkerClusterSchema = z.strictObject({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal(KIND),
  metadata: ClusterMetadataSchema,
  spec: ClusterSpecSchema,
  /** Written only by the reconciler; synthesis ignores it. */
  status: z.record(z.string(), z.unknown()).optional().meta(d('Written by the reconciler only; ignored by synthesis.')),
});

export type WorkerCluster = z.output<typeof WorkerClusterSchema>;
export type ClusterSpec = WorkerCluster['spec'];
