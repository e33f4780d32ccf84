import { Duration, Stack, Tags } from 'aws-cdk-lib';
import * as autoscaling from 'aws-cdk-lib/aws-autoscaling';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { UsageError } from '../../core/errors';
import { createNodeIdentity, NodeIdentityProps, signalStatement } from './node-identity';
import { RollingUpdateProps, updatePolicy } from './update-policy';

/** On-demand and spot (EC2 Auto Scaling InstancesDistribution), the schema's pool.capacity. */
export interface CapacityProps {
  /** Nodes always on-demand, before any spot. */
  readonly onDemandBaseCapacity: number;
  /** Share of the nodes above the base that are on-demand. */
  readonly onDemandPercentageAboveBaseCapacity: number;
  /** How EC2 picks spot pools. */
  readonly spotAllocationStrategy:
    'price-capacity-optimized' | 'capacity-optimized' | 'capacity-optimized-prioritized' | 'lowest-price';
  /** Replace a spot node at elevated risk of interruption before it goes. */
  readonly capacityRebalance: boolean;
}

/** A node identity made elsewhere (the shared stack's, imported into a pool's own stack). */
export interface ImportedNodeIdentity {
  readonly securityGroup: ec2.ISecurityGroup;
  readonly role: iam.IRole;
  readonly instanceProfile: iam.IInstanceProfile;
  /**
   * The name of the inline policy this pool attaches to `role` (its nodes' signal to this stack). Every pool stack of a
   * cluster attaches one to the same role, and a role's inline policy of the same name is one policy: each needs its own.
   */
  readonly signalPolicyName: string;
}

export interface WorkerPoolProps extends Omit<NodeIdentityProps, 'configObjects'> {
  /** S3 objects the nodes may read (required unless `identity` is given). @default none */
  readonly configObjects?: NodeIdentityProps['configObjects'];
  /**
   * The security group, role and instance profile of the nodes, made by another stack: nothing of the node identity
   * is created here. @default a security group and role of this pool (the shared stack's pool default)
   */
  readonly identity?: ImportedNodeIdentity;
  /** On-demand and spot: a mixed instances policy with this distribution, and capacity rebalance. @default all on-demand */
  readonly capacity?: CapacityProps;
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
  /** Build a launch configuration instead of a launch template. @default false */
  readonly legacyLaunchConfiguration?: boolean;
  /**
   * EC2 detailed monitoring of the nodes (launch templates only: a launch configuration left unset already has it, as
   * CloudFormation's default). @default false (basic: 5-minute metrics)
   */
  readonly detailedMonitoring?: boolean;
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
  /** The instance role: this pool's own, or the imported one of `identity`. */
  public readonly role: iam.IRole;
  public readonly securityGroup: ec2.ISecurityGroup;
  /** Undefined in legacy launch configuration mode. */
  public readonly launchTemplate?: ec2.LaunchTemplate;
  /**
   * The instance profile of `role` (made by the launch template, or by the group for a launch configuration);
   * undefined for an imported identity with a launch template (the launch template names the imported profile).
   */
  public readonly instanceProfile?: iam.CfnInstanceProfile;

  constructor(scope: Construct, id: string, props: WorkerPoolProps) {
    super(scope, id);
    if (props.instanceTypes.length === 0) throw new UsageError('WorkerPool needs at least one instance type');
    if (props.minSize > props.maxSize)
      throw new UsageError(`WorkerPool minSize ${props.minSize} is greater than maxSize ${props.maxSize}`);
    if (props.legacyLaunchConfiguration && props.instanceTypes.length > 1) {
      throw new UsageError('a launch configuration takes one instance type; mixed instances need a launch template');
    }
    if (props.legacyLaunchConfiguration && props.capacity)
      throw new UsageError('a launch configuration takes no capacity (on-demand and spot need a launch template)');

    // The shared stack's pool makes the node identity under its own path (Pool/SecurityGroup, Pool/Role); a pool's own
    // stack imports the shared one.
    const identity =
      props.identity ??
      createNodeIdentity(this, {
        ...props,
        configObjects: props.configObjects ?? missing('configObjects (or identity)'),
      });
    this.securityGroup = identity.securityGroup;
    this.role = identity.role;
    const importedProfile = props.identity?.instanceProfile;

    const machineImage = ec2.MachineImage.genericLinux({ [Stack.of(this).region]: props.machineImageId });
    const userData = ec2.UserData.custom(props.userData);
    const volume = { encrypted: true, volumeType: props.rootVolumeType ?? 'gp3', deleteOnTermination: true };
    const size = props.rootVolumeSizeGiB ?? 50;
    const deviceName = props.rootDeviceName ?? '/dev/xvda';
    const ru = props.rollingUpdate ?? {};
    const signals = ru.strategy === 'instanceRefresh' || ru.waitOnResourceSignals !== false;
    const pause = Duration.parse(ru.pauseTime ?? 'PT10M');
    const initialCount = props.desiredCapacity ?? props.minSize;
    // The role is the shared stack's: a pool's own stack grants its nodes the signal to itself (a policy of its own,
    // attached to the shared role), so adding a pool changes nothing in the shared stack.
    if (props.identity)
      new iam.Policy(this, 'SignalPolicy', {
        policyName: props.identity.signalPolicyName,
        roles: [this.role],
        statements: [signalStatement(Stack.of(this))],
      });
    else this.role.addToPrincipalPolicy(signalStatement(Stack.of(this)));
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
      ...(importedProfile ? { instanceProfile: importedProfile } : { role: this.role }),
      securityGroup: this.securityGroup,
      instanceType: props.instanceTypes.length === 1 ? new ec2.InstanceType(props.instanceTypes[0]) : undefined,
      requireImdsv2: true,
      httpPutResponseHopLimit: IMDS_HOP_LIMIT,
      // Unset unless on, so the launch data of a pool without it stays as it was.
      ...(props.detailedMonitoring ? { detailedMonitoring: true } : {}),
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
    this.instanceProfile = importedProfile ? undefined : instanceProfileOf(this.launchTemplate, 'Profile');
    for (const [key, value] of Object.entries(props.fixedInstanceTags ?? {}).sort(([a], [b]) => (a < b ? -1 : 1))) {
      Tags.of(this.launchTemplate).add(key, value);
    }
    const cap = props.capacity;
    this.autoScalingGroup = new autoscaling.AutoScalingGroup(this, 'Group', {
      ...common,
      ...(props.instanceTypes.length === 1 && !cap
        ? { launchTemplate: this.launchTemplate }
        : {
            mixedInstancesPolicy: {
              launchTemplate: this.launchTemplate,
              launchTemplateOverrides: props.instanceTypes.map((t) => ({ instanceType: new ec2.InstanceType(t) })),
              instancesDistribution: {
                onDemandBaseCapacity: cap?.onDemandBaseCapacity,
                onDemandPercentageAboveBaseCapacity: cap?.onDemandPercentageAboveBaseCapacity ?? 100,
                onDemandAllocationStrategy: autoscaling.OnDemandAllocationStrategy.PRIORITIZED,
                spotAllocationStrategy: cap ? SPOT_STRATEGIES[cap.spotAllocationStrategy] : undefined,
              },
            },
          }),
      capacityRebalance: cap?.capacityRebalance,
    });
  }

  /**
   * Gives this pool's nodes one more security group (its own, for the rules narrowed to it): on the launch template's
   * interface, or on the launch configuration. Either is a change of what the nodes boot with, so it rolls the pool.
   */
  public addSecurityGroup(securityGroup: ec2.ISecurityGroup): void {
    if (this.launchTemplate) this.launchTemplate.addSecurityGroup(securityGroup);
    else this.autoScalingGroup.addSecurityGroup(securityGroup);
  }
}

/** The root volume types a pool takes, as ec2's enum names them. */
const EC2_VOLUME_TYPES: Readonly<Record<NonNullable<WorkerPoolProps['rootVolumeType']>, ec2.EbsDeviceVolumeType>> = {
  gp3: ec2.EbsDeviceVolumeType.GP3,
  gp2: ec2.EbsDeviceVolumeType.GP2,
  io2: ec2.EbsDeviceVolumeType.IO2,
};

/** The spot allocation strategies a pool takes, as autoscaling's enum names them. */
const SPOT_STRATEGIES: Readonly<Record<CapacityProps['spotAllocationStrategy'], autoscaling.SpotAllocationStrategy>> = {
  'price-capacity-optimized': autoscaling.SpotAllocationStrategy.PRICE_CAPACITY_OPTIMIZED,
  'capacity-optimized': autoscaling.SpotAllocationStrategy.CAPACITY_OPTIMIZED,
  'capacity-optimized-prioritized': autoscaling.SpotAllocationStrategy.CAPACITY_OPTIMIZED_PRIORITIZED,
  'lowest-price': autoscaling.SpotAllocationStrategy.LOWEST_PRICE,
};

function missing(what: string): never {
  throw new UsageError(`WorkerPool needs ${what}`);
}

/** The instance profile L1 that aws-cdk-lib creates under `scope` with the id `id`. */
function instanceProfileOf(scope: Construct, id: string): iam.CfnInstanceProfile {
  const child = scope.node.findChild(id);
  if (!iam.CfnInstanceProfile.isCfnInstanceProfile(child))
    throw new Error(`aws-cdk-lib changed: ${scope.node.path} has no ${id} instance profile L1`);
  return child;
}
