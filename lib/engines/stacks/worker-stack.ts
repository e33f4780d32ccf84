import { CfnOutput, CliCredentialsStackSynthesizer, Duration, Stack, Tags } from 'aws-cdk-lib';
import { primaryPool } from '../../model/cluster/pools';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { WorkerCluster } from '../../model/cluster/schema';
import { RenderedConfig } from '../../model/cloudconfig/render';
import { renderUserData } from '../../model/cloudconfig/user-data';
import { NodeConfigObject } from '../constructs/node-config-object';
import { ruleKey, SecurityGroupRules } from '../constructs/security-group-rules';
import { WorkerListeners } from '../constructs/worker-listeners';
import { NodeDrain, NTH_MANAGED_TAG } from '../constructs/node-drain';
import { WorkerPool } from '../constructs/worker-pool';
import { acknowledgeWorkerStackFindings } from './nag';
import { pinLogicalIds } from './pin-logical-ids';
import {
  CLUSTER_TAG,
  clusterSecretPrefix,
  configBucketName,
  configKeyPrefix,
  kubernetesClusterTag,
  nodeBoundaryArn,
  WORKER_ROLE_PATH,
  workerStackName,
} from '../../core/naming';

export interface WorkerStackProps {
  /** The validated cluster object. */
  readonly cluster: WorkerCluster;
  /** Its rendered big config (rendered once by the caller, so the reconciler can reuse it). */
  readonly config: RenderedConfig;
}

/** Outputs the reconciler and operators read. */
export const OUTPUTS = {
  checksum: 'ConfigChecksum',
  configBucket: 'ConfigBucket',
  autoScalingGroupName: 'AutoScalingGroupName',
  launchTemplateId: 'LaunchTemplateId',
  launchTemplateVersion: 'LaunchTemplateVersion',
  loadBalancerDnsName: 'LoadBalancerDnsName',
  securityGroupId: 'WorkerSecurityGroupId',
  instanceRoleArn: 'InstanceRoleArn',
  instanceProfileName: 'InstanceProfileName',
  instanceProfileArn: 'InstanceProfileArn',
  terminationQueueUrl: 'TerminationQueueUrl',
  terminationHandlerPolicyArn: 'TerminationHandlerPolicyArn',
} as const;

/**
 * `WorkerStack-<cluster>`: everything one cluster's worker nodes need. The
 * same class builds the template for `cdk deploy` and for the reconciler.
 */
export class WorkerStack extends Stack {
  public readonly pool: WorkerPool;
  public readonly configObject: NodeConfigObject;
  /** Drain before terminate (lifecycle hook + aws-node-termination-handler queue); undefined when the cluster opts out. */
  public readonly drain?: NodeDrain;

  constructor(scope: Construct, props: WorkerStackProps) {
    const { cluster, config } = props;
    const spec = cluster.spec;
    const name = cluster.metadata.name;
    const bucketName = configBucketName(spec.account, spec.region);
    const keyPrefix = configKeyPrefix(name);
    super(scope, workerStackName(name), {
      env: { account: spec.account, region: spec.region },
      description: `Worker nodes of Kubernetes cluster ${name} (worker-stacks)`,
      // The CLI's own credentials publish to the config bucket: no CDK bootstrap roles, same path as the reconciler.
      synthesizer: new CliCredentialsStackSynthesizer({ fileAssetsBucketName: bucketName, bucketPrefix: keyPrefix }),
    });

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
    // The load balancer's own subnets when given (public subnets for an internet-facing one), else the nodes'.
    const lbSubnets = (spec.loadBalancer?.subnetIds ?? []).map(
      (subnetId) =>
        subnets.find((s) => s.subnetId === subnetId) ?? ec2.Subnet.fromSubnetId(this, `LbSubnet-${subnetId}`, subnetId),
    );
    const vpc = ec2.Vpc.fromVpcAttributes(this, 'Vpc', {
      vpcId: spec.network.vpcId,
      availabilityZones: spec.network.availabilityZones,
      privateSubnetIds: spec.network.subnetIds,
    });

    const pool = primaryPool(spec);
    this.pool = new WorkerPool(this, 'Pool', {
      vpc,
      subnets,
      instanceTypes: pool.instanceTypes,
      machineImageId: pool.machineImage,
      minSize: pool.minSize,
      maxSize: pool.maxSize,
      desiredCapacity: pool.desiredCapacity,
      rootVolumeSizeGiB: pool.rootVolume.sizeGiB,
      rootVolumeType: pool.rootVolume.type,
      rootDeviceName: pool.rootVolume.deviceName,
      rollingUpdate: pool.rollingUpdate,
      legacyLaunchConfiguration: pool.legacyLaunchConfiguration,
      associatePublicIpAddress: spec.network.associatePublicIpAddress,
      userData: renderUserData({ format: config.format, checksum: config.checksum, source: this.configObject.s3Url }),
      configObjects: { bucketName, keyPrefix },
      secretArns: [spec.cloudConfig.values.bootstrapTokenSecretArn],
      secretNamePrefix: clusterSecretPrefix(name),
      // Constant for the cluster, so they may live in the launch template data (instances and volumes) without ever rolling nodes.
      fixedInstanceTags: { [CLUSTER_TAG]: name, [kubernetesClusterTag(name)]: 'owned' },
    });

    if (pool.drain.enabled) {
      this.drain = new NodeDrain(this, 'Drain', {
        autoScalingGroup: this.pool.autoScalingGroup,
        heartbeatTimeout: Duration.seconds(pool.drain.heartbeatTimeoutSeconds),
      });
      // The handler drains only nodes of groups with this tag; on the group (not the launch template), so it never rolls nodes.
      Tags.of(this.pool.autoScalingGroup).add(NTH_MANAGED_TAG, 'true');
      new CfnOutput(this, OUTPUTS.terminationQueueUrl, {
        value: this.drain.queue.queueUrl,
        description: "aws-node-termination-handler's queueURL (queue mode)",
      });
      new CfnOutput(this, OUTPUTS.terminationHandlerPolicyArn, {
        value: this.drain.handlerPolicy.managedPolicyArn,
        description: "Attach to aws-node-termination-handler's role",
      });
    }

    const listeners =
      spec.listeners.length > 0 && spec.loadBalancer
        ? new WorkerListeners(this, 'Listeners', {
            vpc,
            subnets: lbSubnets.length > 0 ? lbSubnets : subnets,
            internetFacing: spec.loadBalancer.scheme === 'internet-facing',
            allowedCidrs: spec.loadBalancer.allowedCidrs,
            listeners: spec.listeners,
            target: this.pool.autoScalingGroup,
          })
        : undefined;

    // A listener rule that the user also wrote by hand would be a duplicate in AWS: keep the user's.
    // Roles under /worker-stacks/ carrying the account's node boundary (made by the bootstrap stack): the only roles the
    // CloudFormation execution role may create, so no worker stack can ever make an admin role.
    iam.PermissionsBoundary.of(this).apply(
      iam.ManagedPolicy.fromManagedPolicyArn(this, 'NodeBoundary', nodeBoundaryArn(spec.account, spec.region)),
    );
    (this.pool.role.node.defaultChild as iam.CfnRole).path = WORKER_ROLE_PATH;
    const userKeys = new Set(spec.securityGroupRules.map(ruleKey));
    new SecurityGroupRules(this, 'Rules', {
      securityGroup: this.pool.securityGroup,
      loadBalancerSecurityGroup: listeners?.securityGroup,
      rules: [...spec.securityGroupRules, ...(listeners?.nodeRules ?? []).filter((r) => !userKeys.has(ruleKey(r)))],
    });

    new CfnOutput(this, OUTPUTS.checksum, {
      value: config.checksum,
      description: 'SHA-256 of the node config the launch template boots',
    });
    new CfnOutput(this, OUTPUTS.configBucket, { value: bucketName });
    new CfnOutput(this, OUTPUTS.autoScalingGroupName, { value: this.pool.autoScalingGroup.autoScalingGroupName });
    // A launch template this stack creates always has an id (only an imported one may have a name alone).
    const launchTemplate = this.pool.launchTemplate;
    if (launchTemplate?.launchTemplateId) {
      new CfnOutput(this, OUTPUTS.launchTemplateId, { value: launchTemplate.launchTemplateId });
      new CfnOutput(this, OUTPUTS.launchTemplateVersion, { value: launchTemplate.latestVersionNumber });
    }
    if (listeners)
      new CfnOutput(this, OUTPUTS.loadBalancerDnsName, { value: listeners.loadBalancer.loadBalancerDnsName });
    // What a control plane needs to wire its nodes: the group to allow, the role to map, the profile to reuse.
    new CfnOutput(this, OUTPUTS.securityGroupId, {
      value: this.pool.securityGroup.securityGroupId,
      description: 'Security group of the worker nodes',
    });
    new CfnOutput(this, OUTPUTS.instanceRoleArn, {
      value: this.pool.role.roleArn,
      description: "Instance role of the worker nodes (map it in the cluster's aws-auth / access entries)",
    });
    new CfnOutput(this, OUTPUTS.instanceProfileName, { value: this.pool.instanceProfile.ref });
    new CfnOutput(this, OUTPUTS.instanceProfileArn, { value: this.pool.instanceProfile.attrArn });

    // cfn-lint's resource schema has no Tags on listeners; tagging them would fail the lint (E3002).
    // User tags never enter the launch template: there they would be launch template data (instance and volume tag
    // specifications), and a tag change would roll every node. They reach the instances through the group's tags
    // (PropagateAtLaunch) instead; the group's tags are not among the changes that start a rolling update.
    const userTagOptions = {
      excludeResourceTypes: ['AWS::ElasticLoadBalancingV2::Listener', 'AWS::EC2::LaunchTemplate'],
    };
    for (const key of Object.keys(spec.tags).sort()) Tags.of(this).add(key, spec.tags[key], userTagOptions);
    Tags.of(this).add(CLUSTER_TAG, name, { excludeResourceTypes: ['AWS::ElasticLoadBalancingV2::Listener'] });
    // Where Kubernetes' AWS integrations (cloud-provider-aws, the load balancer controller) look for the cluster's
    // instances and their security group; not on the load balancer's group, which must not be taken for the nodes'.
    Tags.of(this.pool.autoScalingGroup).add(kubernetesClusterTag(name), 'owned');
    Tags.of(this.pool.securityGroup).add(kubernetesClusterTag(name), 'owned');
    acknowledgeWorkerStackFindings(this, {
      pool: this.pool,
      listeners,
      drain: this.drain,
      bucketName,
      keyPrefix,
      internetFacing: spec.loadBalancer?.scheme === 'internet-facing',
    });
    pinLogicalIds(this);
  }
}
