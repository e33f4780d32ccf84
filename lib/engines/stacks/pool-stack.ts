import { Annotations, CfnOutput, CliCredentialsStackSynthesizer, Duration, Stack, Tags } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as elbv2 from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { WorkerCluster } from '../../model/cluster/schema/schema';
import { listenerPools, NodePool } from '../../model/cluster/pools/pools';
import { RenderedConfig } from '../../model/cloudconfig/render';
import { NodeConfigObject } from '../constructs/node-config-object';
import { addPoolDrainHook, NTH_MANAGED_TAG } from '../constructs/node-drain';
import { WorkerPool } from '../constructs/worker-pool';
import { tagForClusterAutoscaler } from '../constructs/autoscaler-tags';
import { acknowledgeGroupFindings } from './nag';
import { pinLogicalIds } from './pin-logical-ids';
import { importShared, SHARED_EXPORTS, targetGroupExport } from './pool-exports';
import { OUTPUTS } from './worker-stack';
import { addPoolRules, autoscalerTagsOf, poolGroupProps } from './pool-parts';
import { nameSharedRoleGrants } from './shared-role-grants';
import {
  CLUSTER_TAG,
  configBucketName,
  configKeyPrefix,
  kubernetesClusterTag,
  nodeBoundaryArn,
  poolStackName,
} from '../../core/naming';

export interface PoolStackProps {
  /** The validated cluster object. */
  readonly cluster: WorkerCluster;
  /** The pool (not the pool default, which lives in the shared stack). */
  readonly pool: NodePool;
  /** The pool's rendered big config (its own labels, taints and values; rendered once by the caller). */
  readonly config: RenderedConfig;
}

/**
 * `WorkerStack-<cluster>-Pool-<pool>`: one pool's own stack, beside the shared `WorkerStack-<cluster>` (docs/pool-stacks.md,
 * "One shared stack, one stack per other pool"): its node config object under its own SHA-256, its launch template whose user data embeds that
 * checksum, its Auto Scaling group (construct path Pool/Group, so the same logical id as in the shared stack, which
 * the node's signal names), its drain hook. What the pools share (security group, instance profile and role, target
 * groups) comes from the shared stack's exports. A change to this pool rolls this stack only.
 */
export class PoolStack extends Stack {
  public readonly pool: WorkerPool;
  public readonly configObject: NodeConfigObject;
  /** The pool's name. */
  public readonly poolName: string;

  constructor(scope: Construct, props: PoolStackProps) {
    const { cluster, pool, config } = props;
    const spec = cluster.spec;
    const name = cluster.metadata.name;
    const bucketName = configBucketName(spec.account, spec.region);
    const keyPrefix = configKeyPrefix(name);
    super(scope, poolStackName(name, pool.name), {
      env: { account: spec.account, region: spec.region },
      description: `Worker pool ${pool.name} of Kubernetes cluster ${name} (worker-stacks)`,
      synthesizer: new CliCredentialsStackSynthesizer({ fileAssetsBucketName: bucketName, bucketPrefix: keyPrefix }),
    });
    this.poolName = pool.name;

    this.configObject = new NodeConfigObject(this, 'NodeConfig', {
      bytes: config.bytes,
      checksum: config.checksum,
      extension: config.extension,
      expectedKey: `${keyPrefix}${config.checksum}.${config.extension}`,
    });
    const subnets = spec.network.subnetIds.map((subnetId, i) =>
      ec2.Subnet.fromSubnetAttributes(this, `Subnet-${subnetId}`, {
        subnetId,
        availabilityZone: spec.network.availabilityZones[i],
      }),
    );
    const vpc = ec2.Vpc.fromVpcAttributes(this, 'Vpc', {
      vpcId: spec.network.vpcId,
      availabilityZones: spec.network.availabilityZones,
      privateSubnetIds: spec.network.subnetIds,
    });
    const role = iam.Role.fromRoleName(this, 'NodeRole', importShared(name, SHARED_EXPORTS.instanceRoleName));
    const identity = {
      securityGroup: ec2.SecurityGroup.fromSecurityGroupId(
        this,
        'NodeSecurityGroup',
        importShared(name, SHARED_EXPORTS.securityGroupId),
        { mutable: false, allowAllOutbound: true },
      ),
      role,
      instanceProfile: iam.InstanceProfile.fromInstanceProfileAttributes(this, 'NodeProfile', {
        instanceProfileArn: importShared(name, SHARED_EXPORTS.instanceProfileArn),
        role,
      }),
      signalPolicyName: `signal-pool-${pool.name}`,
    };

    this.pool = new WorkerPool(this, 'Pool', {
      vpc,
      identity,
      ...poolGroupProps(cluster, pool, subnets, config, this.configObject.s3Url),
    });
    const group = this.pool.autoScalingGroup;

    // The listeners that take this pool's nodes (those that name it, else every pool without a repelling taint).
    if (spec.loadBalancer) {
      for (const l of [...spec.listeners].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
        if (!listenerPools(spec, l).includes(pool.name)) continue;
        group.attachToNetworkTargetGroup(
          elbv2.NetworkTargetGroup.fromTargetGroupAttributes(this, `TargetGroup-${l.name}`, {
            targetGroupArn: importShared(name, targetGroupExport(l.name)),
          }),
        );
      }
    }

    addPoolRules(this, this.pool, cluster, pool.name, vpc, () =>
      ec2.SecurityGroup.fromSecurityGroupId(
        this,
        'LoadBalancerSecurityGroup',
        importShared(name, SHARED_EXPORTS.loadBalancerSecurityGroupId),
        { mutable: false },
      ),
    );

    // The shared stack's drain queue takes this group's lifecycle actions by its name prefix (NodeDrain poolGroupPrefix);
    // the hook is inline in the group, so a removed pool's nodes are drained as its stack is deleted.
    if (pool.drain.enabled) {
      addPoolDrainHook(group, Duration.seconds(pool.drain.heartbeatTimeoutSeconds));
      Tags.of(group).add(NTH_MANAGED_TAG, 'true');
    }

    iam.PermissionsBoundary.of(this).apply(
      iam.ManagedPolicy.fromManagedPolicyArn(this, 'NodeBoundary', nodeBoundaryArn(spec.account, spec.region)),
    );

    new CfnOutput(this, OUTPUTS.checksum, {
      value: config.checksum,
      description: 'SHA-256 of the node config the launch template boots',
    });
    new CfnOutput(this, OUTPUTS.configBucket, { value: bucketName });
    new CfnOutput(this, OUTPUTS.autoScalingGroupName, { value: group.autoScalingGroupName });
    const launchTemplate = this.pool.launchTemplate;
    if (launchTemplate?.launchTemplateId) {
      new CfnOutput(this, OUTPUTS.launchTemplateId, { value: launchTemplate.launchTemplateId });
      new CfnOutput(this, OUTPUTS.launchTemplateVersion, { value: launchTemplate.latestVersionNumber });
    }

    // As in the shared stack: user tags never enter the launch template (a tag change would roll every node).
    const userTagOptions = { excludeResourceTypes: ['AWS::EC2::LaunchTemplate'] };
    for (const key of Object.keys(spec.tags).sort()) Tags.of(this).add(key, spec.tags[key], userTagOptions);
    Tags.of(this).add(CLUSTER_TAG, name);
    Tags.of(group).add(kubernetesClusterTag(name), 'owned');
    tagForClusterAutoscaler(group, autoscalerTagsOf(cluster, pool));
    acknowledgeGroupFindings(this.pool);
    Annotations.of(this).acknowledgeWarning(
      '@aws-cdk/aws-ec2:noSubnetRouteTableId',
      'Subnets are given explicitly by id so that synthesis needs no AWS lookup; nothing in a worker stack reads their route tables.',
    );
    // Last, after every grant: what aws-cdk-lib put on the shared role takes this pool's name, not one of every pool stack.
    nameSharedRoleGrants(role, pool.name);
    pinLogicalIds(this);
  }
}
