import { Duration, Stack, Tags } from 'aws-cdk-lib';
import * as autoscaling from 'aws-cdk-lib/aws-autoscaling';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { UsageError } from '../../core/errors';

export interface InstanceRefreshProps {
  /** @default 100 */
  readonly minHealthyPercentage?: number;
  /** Above 100: new nodes before old ones go. @default 110 */
  readonly maxHealthyPercentage?: number;
  /** @default the group's health check grace period */
  readonly instanceWarmupSeconds?: number;
  /** Ascending, the last one 100. @default none */
  readonly checkpoints?: readonly number[];
  /** @default 3600 with checkpoints */
  readonly checkpointDelaySeconds?: number;
  /** @default 0 */
  readonly bakeTimeSeconds?: number;
  /** CloudWatch alarm names that fail the refresh. @default none */
  readonly alarms?: readonly string[];
  /** @default true */
  readonly skipMatching?: boolean;
}

export interface RollingUpdateProps {
  /** rolling: AutoScalingRollingUpdate; instanceRefresh: AutoScalingInstanceRefresh. @default 'rolling' */
  readonly strategy?: 'rolling' | 'instanceRefresh';
  /** Instances replaced at a time. @default 1 */
  readonly maxBatchSize?: number;
  /** Instances kept in service while replacing. @default 0 */
  readonly minInstancesInService?: number;
  /** ISO 8601 pause after each batch. @default 'PT5M' */
  readonly pauseTime?: string;
  /** Wait for each new instance to signal (rolling); also makes the group's creation wait (both strategies). @default true */
  readonly waitOnResourceSignals?: boolean;
  /** Share of a batch (and of the created group) that must signal SUCCESS. @default 100 */
  readonly minSuccessfulInstancesPercent?: number;
  /** Preferences of the instance refresh (strategy instanceRefresh). @default AWS defaults */
  readonly instanceRefresh?: InstanceRefreshProps;
}

export interface WorkerPoolProps {
  /** The VPC of the nodes. */
  readonly vpc: ec2.IVpc;
  /** Subnets the group launches into. */
  readonly subnets: ec2.ISubnet[];
  /** Instance types; more than one gives a mixed instances policy with the first as preferred. */
  readonly instanceTypes: string[];
  /** AMI id in the stack's region. */
  readonly machineImageId: string;
  /** Minimum group size. */
  readonly minSize: number;
  /** Maximum group size. */
  readonly maxSize: number;
  /** Desired size; unset leaves the group's current size alone on every deploy. @default unset */
  readonly desiredCapacity?: number;
  /** Root volume size in GiB. @default 50 */
  readonly rootVolumeSizeGiB?: number;
  /** Root volume type. @default 'gp3' */
  readonly rootVolumeType?: 'gp3' | 'gp2' | 'io2';
  /** Root device name of the AMI. @default '/dev/xvda' */
  readonly rootDeviceName?: string;
  /** Rolling-update settings that apply when the launch template changes. @default one at a time, 5 minute pause */
  readonly rollingUpdate?: RollingUpdateProps;
  /** The small user data (already rendered: it embeds the config checksum). */
  readonly userData: string;
  /** S3 objects the nodes may read: the bucket and the cluster's own key prefix. */
  readonly configObjects: { readonly bucketName: string; readonly keyPrefix: string };
  /** Secrets Manager secrets the nodes fetch at boot. @default none */
  readonly secretArns?: string[];
  /**
   * The name prefix of the cluster's own secrets (`worker-stacks/<cluster>/`): the role denies reading any other
   * secret, whatever `secretArns` names (the account's node boundary says the same). @default no such deny
   */
  readonly secretNamePrefix?: string;
  /** Build a launch configuration instead of a launch template. @default false */
  readonly legacyLaunchConfiguration?: boolean;
  /** Security group of the nodes. @default a new one that allows all outbound */
  readonly securityGroup?: ec2.ISecurityGroup;
  /**
   * Tags that never change for this pool (the cluster's identity), put on instances and volumes through the launch
   * template data. Anything that may change (user tags) must not go here: a change would make a new launch template
   * version and roll every node. @default none
   */
  readonly fixedInstanceTags?: Record<string, string>;
  /**
   * Give each node a public IPv4 address. Off unless asked: a subnet that maps public IPs on launch would otherwise
   * expose every node, whatever its security group says. @default false
   */
  readonly associatePublicIpAddress?: boolean;
}

/** IMDS response hop limit: 1 keeps the instance role and its secrets away from containers (a pod is one hop further). */
export const IMDS_HOP_LIMIT = 1;

/**
 * The worker nodes: least-privilege instance role, launch template (IMDSv2
 * required, hop limit 1, encrypted root volume) and an Auto Scaling group whose
 * update policy replaces the nodes when the user data changes: a rolling update
 * gated by the nodes' own health signals, or an instance refresh.
 */
export class WorkerPool extends Construct {
  public readonly autoScalingGroup: autoscaling.AutoScalingGroup;
  public readonly role: iam.Role;
  public readonly securityGroup: ec2.ISecurityGroup;
  /** Undefined in legacy launch configuration mode. */
  public readonly launchTemplate?: ec2.LaunchTemplate;
  /** The instance profile of `role` (made by the launch template, or by the group for a launch configuration). */
  public readonly instanceProfile: iam.CfnInstanceProfile;

  constructor(scope: Construct, id: string, props: WorkerPoolProps) {
    super(scope, id);
    if (props.instanceTypes.length === 0) throw new UsageError('WorkerPool needs at least one instance type');
    if (props.minSize > props.maxSize)
      throw new UsageError(`WorkerPool minSize ${props.minSize} is greater than maxSize ${props.maxSize}`);
    if (props.legacyLaunchConfiguration && props.instanceTypes.length > 1) {
      throw new UsageError('a launch configuration takes one instance type; mixed instances need a launch template');
    }
    if (!props.configObjects.keyPrefix.endsWith('/'))
      throw new UsageError(`configObjects.keyPrefix must end with '/', got ${props.configObjects.keyPrefix}`);

    this.securityGroup =
      props.securityGroup ??
      new ec2.SecurityGroup(this, 'SecurityGroup', {
        vpc: props.vpc,
        allowAllOutbound: true,
        description: 'Worker nodes',
      });

    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('ec2.amazonaws.com'),
      description: 'Worker node instance role',
    });
    const partition = Stack.of(this).partition;
    // Only this cluster's own config objects: a node of one cluster cannot read another cluster's config.
    this.role.addToPolicy(
      new iam.PolicyStatement({
        actions: ['s3:GetObject'],
        resources: [`arn:${partition}:s3:::${props.configObjects.bucketName}/${props.configObjects.keyPrefix}*`],
      }),
    );
    if (props.secretArns?.length) {
      this.role.addToPolicy(
        new iam.PolicyStatement({
          actions: ['secretsmanager:GetSecretValue'],
          resources: [...props.secretArns].sort(),
        }),
      );
    }
    if (props.secretNamePrefix) {
      const { region, account } = Stack.of(this);
      this.role.addToPolicy(
        new iam.PolicyStatement({
          sid: 'OnlyOwnSecrets',
          effect: iam.Effect.DENY,
          actions: ['secretsmanager:GetSecretValue'],
          notResources: [`arn:${partition}:secretsmanager:${region}:${account}:secret:${props.secretNamePrefix}*`],
        }),
      );
    }

    const machineImage = ec2.MachineImage.genericLinux({ [Stack.of(this).region]: props.machineImageId });
    const userData = ec2.UserData.custom(props.userData);
    const volume = { encrypted: true, volumeType: props.rootVolumeType ?? 'gp3', deleteOnTermination: true };
    const size = props.rootVolumeSizeGiB ?? 50;
    const deviceName = props.rootDeviceName ?? '/dev/xvda';
    const ru = props.rollingUpdate ?? {};
    const signals = ru.strategy === 'instanceRefresh' || ru.waitOnResourceSignals !== false;
    const pause = Duration.parse(ru.pauseTime ?? 'PT10M');
    const initialCount = props.desiredCapacity ?? props.minSize;
    // Each node signals its own health to its own stack (the script in cloudconfig/_shared/signal-ready.sh.hbs). IAM
    // has no condition for the logical resource, so the stack is the narrowest scope: never another cluster's stack.
    this.role.addToPolicy(
      new iam.PolicyStatement({ actions: ['cloudformation:SignalResource'], resources: [Stack.of(this).stackId] }),
    );
    const common = {
      vpc: props.vpc,
      vpcSubnets: { subnets: props.subnets },
      minCapacity: props.minSize,
      maxCapacity: props.maxSize,
      desiredCapacity: props.desiredCapacity,
      // EC2 status checks only, never ELB: a target group's health is one application's (a NodePort service with
      // externalTrafficPolicy: Local fails the probe on every node without its pod, by design), so ELB checks would let
      // any listener terminate healthy nodes over and over. Node health is the kubelet's and the cluster's business.
      healthChecks: autoscaling.HealthChecks.ec2({ gracePeriod: Duration.minutes(5) }),
      updatePolicy: updatePolicy(this, ru),
      // The group's creation waits until its first nodes say they are up (or counts their silence as failure).
      signals:
        signals && initialCount > 0
          ? autoscaling.Signals.waitForCount(initialCount, {
              timeout: pause,
              minSuccessPercentage: ru.minSuccessfulInstancesPercent ?? 100,
            })
          : undefined,
    };

    if (props.legacyLaunchConfiguration) {
      this.autoScalingGroup = new autoscaling.AutoScalingGroup(this, 'Group', {
        ...common,
        instanceType: new ec2.InstanceType(props.instanceTypes[0]),
        machineImage,
        userData,
        role: this.role,
        securityGroup: this.securityGroup,
        requireImdsv2: true,
        blockDevices: [
          {
            deviceName,
            volume: autoscaling.BlockDeviceVolume.ebs(size, {
              ...volume,
              // eslint-disable-next-line @typescript-eslint/no-unsafe-enum-assignment -- autoscaling's enum lacks io2, which CloudFormation takes; gp3 and gp2 are its own values
              volumeType: volume.volumeType as autoscaling.EbsDeviceVolumeType,
            }),
          },
        ],
      });
      // requireImdsv2 sets only HttpTokens; the hop limit has no L2 property on a launch configuration.
      const lc = this.autoScalingGroup.node.findChild('LaunchConfig');
      if (!autoscaling.CfnLaunchConfiguration.isCfnLaunchConfiguration(lc))
        throw new Error('aws-cdk-lib changed: the group has no LaunchConfig L1');
      lc.addPropertyOverride('MetadataOptions.HttpPutResponseHopLimit', IMDS_HOP_LIMIT);
      // On the L1: the L2 refuses `true` unless the subnets are of its own public type, which given subnet ids never are.
      lc.addPropertyOverride('AssociatePublicIpAddress', props.associatePublicIpAddress ?? false);
      this.instanceProfile = instanceProfileOf(this.autoScalingGroup, 'InstanceProfile');
      return;
    }

    this.launchTemplate = new ec2.LaunchTemplate(this, 'LaunchTemplate', {
      machineImage,
      userData,
      role: this.role,
      securityGroup: this.securityGroup,
      instanceType: props.instanceTypes.length === 1 ? new ec2.InstanceType(props.instanceTypes[0]) : undefined,
      requireImdsv2: true,
      httpPutResponseHopLimit: IMDS_HOP_LIMIT,
      instanceMetadataTags: false,
      // Explicit, so the subnet's MapPublicIpOnLaunch never decides (CDK moves the security group onto the interface).
      associatePublicIpAddress: props.associatePublicIpAddress ?? false,
      blockDevices: [
        {
          deviceName,
          volume: ec2.BlockDeviceVolume.ebs(size, { ...volume, volumeType: EC2_VOLUME_TYPES[volume.volumeType] }),
        },
      ],
    });
    this.instanceProfile = instanceProfileOf(this.launchTemplate, 'Profile');
    for (const [key, value] of Object.entries(props.fixedInstanceTags ?? {}).sort(([a], [b]) => (a < b ? -1 : 1))) {
      Tags.of(this.launchTemplate).add(key, value);
    }
    this.autoScalingGroup = new autoscaling.AutoScalingGroup(this, 'Group', {
      ...common,
      ...(props.instanceTypes.length === 1
        ? { launchTemplate: this.launchTemplate }
        : {
            mixedInstancesPolicy: {
              launchTemplate: this.launchTemplate,
              launchTemplateOverrides: props.instanceTypes.map((t) => ({ instanceType: new ec2.InstanceType(t) })),
              instancesDistribution: {
                onDemandPercentageAboveBaseCapacity: 100,
                onDemandAllocationStrategy: autoscaling.OnDemandAllocationStrategy.PRIORITIZED,
              },
            },
          }),
    });
  }
}

/** The processes that would fight a rolling update (AWS recommends suspending them while it runs). */
export const SUSPENDED_DURING_ROLL = [
  autoscaling.ScalingProcess.HEALTH_CHECK,
  autoscaling.ScalingProcess.REPLACE_UNHEALTHY,
  autoscaling.ScalingProcess.AZ_REBALANCE,
  autoscaling.ScalingProcess.ALARM_NOTIFICATION,
  autoscaling.ScalingProcess.SCHEDULED_ACTIONS,
];

function updatePolicy(scope: Construct, ru: RollingUpdateProps): autoscaling.UpdatePolicy {
  if (ru.strategy === 'instanceRefresh') {
    const ir = ru.instanceRefresh ?? {};
    const seconds = (v: number | undefined) => (v === undefined ? undefined : Duration.seconds(v));
    return autoscaling.UpdatePolicy.instanceRefresh({
      strategy: autoscaling.InstanceRefreshStrategy.ROLLING,
      minHealthyPercentage: ir.minHealthyPercentage ?? 100,
      maxHealthyPercentage: ir.maxHealthyPercentage ?? 110,
      instanceWarmup: seconds(ir.instanceWarmupSeconds),
      skipMatching: ir.skipMatching ?? true,
      checkpointPercentages: ir.checkpoints?.length ? [...ir.checkpoints] : undefined,
      checkpointDelay: ir.checkpoints?.length ? seconds(ir.checkpointDelaySeconds) : undefined,
      bakeTime: seconds(ir.bakeTimeSeconds),
      alarms: ir.alarms?.length
        ? ir.alarms.map((name, i) => cloudwatch.Alarm.fromAlarmName(scope, `RefreshAlarm${i}`, name))
        : undefined,
    });
  }
  const wait = ru.waitOnResourceSignals ?? true;
  return autoscaling.UpdatePolicy.rollingUpdate({
    maxBatchSize: ru.maxBatchSize ?? 1,
    minInstancesInService: ru.minInstancesInService ?? 0,
    // With signals: how long each batch waits for them; without: the pause after each batch.
    pauseTime: Duration.parse(ru.pauseTime ?? 'PT10M'),
    waitOnResourceSignals: wait,
    minSuccessPercentage: wait ? (ru.minSuccessfulInstancesPercent ?? 100) : undefined,
    suspendProcesses: SUSPENDED_DURING_ROLL,
  });
}

/** The root volume types a pool takes, as ec2's enum names them. */
const EC2_VOLUME_TYPES: Readonly<Record<NonNullable<WorkerPoolProps['rootVolumeType']>, ec2.EbsDeviceVolumeType>> = {
  gp3: ec2.EbsDeviceVolumeType.GP3,
  gp2: ec2.EbsDeviceVolumeType.GP2,
  io2: ec2.EbsDeviceVolumeType.IO2,
};

/** The instance profile L1 that aws-cdk-lib creates under `scope` with the id `id`. */
function instanceProfileOf(scope: Construct, id: string): iam.CfnInstanceProfile {
  const child = scope.node.findChild(id);
  if (!iam.CfnInstanceProfile.isCfnInstanceProfile(child))
    throw new Error(`aws-cdk-lib changed: ${scope.node.path} has no ${id} instance profile L1`);
  return child;
}
