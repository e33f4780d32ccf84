import { CfnOutput, CliCredentialsStackSynthesizer, Duration, Stack, Tags } from 'aws-cdk-lib';
import { clusterWideRules, DEFAULT_POOL, listenerPools, poolNamed, poolsOf } from '../../model/cluster/pools/pools';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { WorkerCluster } from '../../model/cluster/schema/schema';
import { Loose } from '../../model/cluster/rules/loose';
import { secretReferences } from '../../model/cluster/values/secret-values';
import { FORMATS } from '../../model/cloudconfig/formats';
import { RenderedConfig } from '../../model/cloudconfig/render';
import { NodeConfigObject } from '../constructs/node-config-object';
import { nodeAccessEntry } from '../constructs/node-access-entry';
import { ruleKey, SecurityGroupRules } from '../constructs/security-group-rules';
import { WorkerListeners } from '../constructs/worker-listeners';
import { NodeDrain, NTH_MANAGED_TAG } from '../constructs/node-drain';
import { WorkerPool } from '../constructs/worker-pool';
import { createNodeIdentity } from '../constructs/node-identity';
import { tagForClusterAutoscaler } from '../constructs/autoscaler-tags';
import { exportShared, SHARED_EXPORTS, targetGroupExport } from './pool-exports';
import { addPoolRules, autoscalerTagsOf, poolsImportLoadBalancerGroup, poolGroupProps } from './pool-parts';
import { acknowledgeWorkerStackFindings } from './nag';
import { pinLogicalIds } from './pin-logical-ids';
import { UsageError } from '../../core/errors';
import {
  CLUSTER_TAG,
  clusterSecretPrefix,
  configBucketName,
  configKeyPrefix,
  kubernetesClusterTag,
  nodeBoundaryArn,
  WORKER_ROLE_PATH,
  poolStackName,
  workerStackName,
} from '../../core/naming';

export interface WorkerStackProps {
  /** The validated cluster object. */
  readonly cluster: WorkerCluster;
  /**
   * The rendered big config of the pool default (rendered once by the caller, so the reconciler can reuse it); required
   * when the cluster has that pool. Without it, the first pool's: only its checksum is used, as the ConfigChecksum
   * output the reconciler compares. @default none
   */
  readonly config?: RenderedConfig;
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
 * `WorkerStack-<cluster>`, the shared stack: what every pool of the cluster uses (the nodes' security group and its
 * rules, the instance role and profile, the load balancer with its listeners and target groups, the drain queue), and
 * the pool named default when there is one, inline, with the construct ids of the time before pools: a single-pool
 * object (spec.pool) gives the same template as then. The same class builds the template for `cdk deploy` and for the
 * reconciler; every other pool has its own PoolStack.
 */
export class WorkerStack extends Stack {
  /** The pool default; undefined when every pool has a stack of its own. */
  public readonly pool?: WorkerPool;
  /** The pool default's node config; undefined without that pool. */
  public readonly configObject?: NodeConfigObject;
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

    const pools = poolsOf(spec);
    const def = poolNamed(spec, DEFAULT_POOL);
    // A spec.pools object: every group carries cluster-autoscaler's tags, and the drain covers the pool stacks' groups.
    const named = spec.pools !== undefined;
    const outside = pools.filter((p) => p.name !== DEFAULT_POOL);
    if (def && !config) throw new UsageError(`${name}: the shared stack needs the config of the pool ${DEFAULT_POOL}`);
    this.configObject =
      def && config
        ? new NodeConfigObject(this, 'NodeConfig', {
            bytes: config.bytes,
            checksum: config.checksum,
            extension: config.extension,
            expectedKey: `${keyPrefix}${config.checksum}.${config.extension}`,
          })
        : undefined;

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

    const identityProps = {
      vpc,
      configObjects: { bucketName, keyPrefix },
      // Every secret a value names (the bootstrap token's, a template's own, a pool's), each checked as the cluster's
      // own by validation; the role's OnlyOwnSecrets deny and the node boundary hold it to that prefix as well.
      secretArns: [...new Set(secretReferences(spec as unknown as Loose).map((r) => r.arn))],
      secretNamePrefix: clusterSecretPrefix(name),
    };
    if (def && config && this.configObject) {
      this.pool = new WorkerPool(this, 'Pool', {
        ...identityProps,
        ...poolGroupProps(cluster, def, subnets, config, this.configObject.s3Url),
      });
    }
    const identity = this.pool
      ? { securityGroup: this.pool.securityGroup, role: this.pool.role, instanceProfile: this.pool.instanceProfile }
      : sharedIdentityWithoutPool(this, identityProps);
    const group = this.pool?.autoScalingGroup;

    const drainPools = pools.filter((p) => p.drain.enabled);
    if (drainPools.length > 0) {
      this.drain = new NodeDrain(this, 'Drain', {
        autoScalingGroup: def?.drain.enabled ? group : undefined,
        heartbeatTimeout: def ? Duration.seconds(def.drain.heartbeatTimeoutSeconds) : undefined,
        groupPath: `${this.node.path}/Pool/Group`,
        poolGroupPrefix: named ? poolStackName(name, '') : undefined,
      });
      // The handler drains only nodes of groups with this tag; on the group (not the launch template), so it never rolls nodes.
      if (group && def?.drain.enabled) Tags.of(group).add(NTH_MANAGED_TAG, 'true');
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
            target: group,
            // A spec.pool object's one pool takes every listener, as before pools (whatever the cluster's taints).
            attaches: (listener) =>
              !named ||
              listenerPools(spec, spec.listeners.find((l) => l.name === listener) ?? {}).includes(DEFAULT_POOL),
            nodeSecurityGroup: identity.securityGroup,
          })
        : undefined;

    // Roles under /worker-stacks/ carrying the account's node boundary (made by the bootstrap stack): the only roles the
    // CloudFormation execution role may create, so no worker stack can ever make an admin role.
    iam.PermissionsBoundary.of(this).apply(
      iam.ManagedPolicy.fromManagedPolicyArn(this, 'NodeBoundary', nodeBoundaryArn(spec.account, spec.region)),
    );
    (identity.role.node.defaultChild as iam.CfnRole).path = WORKER_ROLE_PATH;
    // A user's rule (cluster-wide or narrowed to pools) replaces the listener rule of the same protocol, port and source.
    const userKeys = new Set(spec.securityGroupRules.map(ruleKey));
    new SecurityGroupRules(this, 'Rules', {
      securityGroup: identity.securityGroup,
      loadBalancerSecurityGroup: listeners?.securityGroup,
      rules: [...clusterWideRules(spec), ...(listeners?.nodeRules ?? []).filter((r) => !userKeys.has(ruleKey(r)))],
    });
    if (this.pool) addPoolRules(this, this.pool, cluster, DEFAULT_POOL, vpc, () => listeners?.securityGroup);
    // EKS nodes (a nodeadm or Bottlerocket config) are let into their EKS cluster by an access entry of the shared node
    // role, unless the object chose aws-auth (the template's values.yaml types both values; validation has checked them).
    const values = spec.cloudConfig.values as Record<string, unknown>;
    if (config && FORMATS[config.format].joinsEks && values.nodeAccess !== 'aws-auth')
      nodeAccessEntry(this, String(values.eksClusterName), identity.role);

    if (config) {
      new CfnOutput(this, OUTPUTS.checksum, {
        value: config.checksum,
        description: this.pool
          ? 'SHA-256 of the node config the launch template boots'
          : "SHA-256 of the first pool's node config (this stack boots no node; the reconciler compares it)",
      });
    }
    new CfnOutput(this, OUTPUTS.configBucket, { value: bucketName });
    if (this.pool) {
      new CfnOutput(this, OUTPUTS.autoScalingGroupName, { value: this.pool.autoScalingGroup.autoScalingGroupName });
      // A launch template this stack creates always has an id (only an imported one may have a name alone).
      const launchTemplate = this.pool.launchTemplate;
      if (launchTemplate?.launchTemplateId) {
        new CfnOutput(this, OUTPUTS.launchTemplateId, { value: launchTemplate.launchTemplateId });
        new CfnOutput(this, OUTPUTS.launchTemplateVersion, { value: launchTemplate.latestVersionNumber });
      }
    }
    if (listeners)
      new CfnOutput(this, OUTPUTS.loadBalancerDnsName, { value: listeners.loadBalancer.loadBalancerDnsName });
    // What a control plane needs to wire its nodes: the group to allow, the role to map, the profile to reuse.
    new CfnOutput(this, OUTPUTS.securityGroupId, {
      value: identity.securityGroup.securityGroupId,
      description: 'Security group of the worker nodes',
    });
    new CfnOutput(this, OUTPUTS.instanceRoleArn, {
      value: identity.role.roleArn,
      description: "Instance role of the worker nodes (map it in the cluster's aws-auth / access entries)",
    });
    const profile = identity.instanceProfile ?? missingProfile();
    new CfnOutput(this, OUTPUTS.instanceProfileName, { value: profile.ref });
    new CfnOutput(this, OUTPUTS.instanceProfileArn, { value: profile.attrArn });
    // What the pools' own stacks import (docs/pool-stacks.md, "What the pool stacks import"): only while there are such stacks.
    if (outside.length > 0) {
      exportShared(this, name, SHARED_EXPORTS.securityGroupId, identity.securityGroup.securityGroupId);
      exportShared(this, name, SHARED_EXPORTS.instanceProfileArn, profile.attrArn);
      exportShared(this, name, SHARED_EXPORTS.instanceRoleName, identity.role.roleName);
      if (listeners && poolsImportLoadBalancerGroup(cluster))
        exportShared(this, name, SHARED_EXPORTS.loadBalancerSecurityGroupId, listeners.securityGroup.securityGroupId);
      for (const l of spec.listeners) {
        const tg = listeners?.targetGroups.get(l.name);
        if (tg && listenerPools(spec, l).some((p) => p !== DEFAULT_POOL))
          exportShared(this, name, targetGroupExport(l.name), tg.ref);
      }
    }

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
    if (group) Tags.of(group).add(kubernetesClusterTag(name), 'owned');
    Tags.of(identity.securityGroup).add(kubernetesClusterTag(name), 'owned');
    if (group && def && named) tagForClusterAutoscaler(group, autoscalerTagsOf(cluster, def));
    acknowledgeWorkerStackFindings(this, {
      pool: this.pool,
      role: identity.role,
      listeners,
      drain: this.drain,
      bucketName,
      keyPrefix,
      internetFacing: spec.loadBalancer?.scheme === 'internet-facing',
      poolGroupPrefix: named ? poolStackName(name, '') : undefined,
    });
    pinLogicalIds(this);
  }
}

/**
 * The node identity of a shared stack without the pool default: the security group and role under `Pool`, and the
 * instance profile where the launch template of the pool default makes it (`Pool/LaunchTemplate/Profile`), so the
 * logical ids are the same with and without that pool.
 */
function sharedIdentityWithoutPool(stack: Stack, props: Parameters<typeof createNodeIdentity>[1]) {
  const scope = new Construct(stack, 'Pool');
  const { securityGroup, role } = createNodeIdentity(scope, props);
  const instanceProfile = new iam.CfnInstanceProfile(new Construct(scope, 'LaunchTemplate'), 'Profile', {
    roles: [role.roleName],
  });
  return { securityGroup, role, instanceProfile };
}

function missingProfile(): never {
  throw new Error('a launch template or launch configuration of the shared stack made no instance profile');
}
