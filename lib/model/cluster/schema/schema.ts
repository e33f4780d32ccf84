import { z } from 'zod';
import { ipCidr } from './cidr-rules';
import { awsId, dnsLabel, intIn, pattern, port } from './rules';
import { tagKey, tagValue } from './tag-rules';
import { LabelsSchema } from './selector';
import { MaintenanceWindowSchema } from './windows';
import { ROLLOUT_DEFAULT, RolloutSchema } from './rollout-schema';
import { ListenerSchema, SecurityGroupRuleSchema } from './network-schema';
import { PoolSchema } from './pool-schema';
import { CloudConfigValuesSchema } from './cloud-config-schema';
import { NodePoolSchema } from './node-pool-schema';

/**
 * The WorkerCluster object. This schema is the single source of truth: the
 * TypeScript types are inferred from it, validation runs it, and the
 * reference (docs/reference.md) and the CRD are generated from it.
 */

export const API_VERSION = 'worker-stacks.io/v1alpha1';
export const KIND = 'WorkerCluster';

const d = (text: string) => ({ description: text });

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
