import { z } from 'zod';
import { taintKey, taintValue } from './kubelet-rules';
import { awsId, dnsLabel, intIn, pattern, pauseTime } from './rules';
import { DRAIN_DEFAULT, DrainSchema, InstanceRefreshSchema } from './rollout-schema';

/** spec.pool of the WorkerCluster object (also the base of each of spec.pools): its group, rolling update, taints, capacity. */

const d = (text: string) => ({ description: text });

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
