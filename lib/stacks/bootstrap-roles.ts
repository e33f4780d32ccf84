import { Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { configBucketName, deployerRoleName, executionRoleName, nodeBoundaryName, partitionOf, WORKER_ROLE_PATH, WORKER_STACK_PREFIX } from './naming';

/** A role, user, account root or assumed-role session ARN: what a trust policy can name as the management principal. */
export function isPrincipalArn(arn: string): boolean {
  return /^arn:aws[a-z-]*:(iam|sts)::\d{12}:(root|role\/.+|user\/.+|assumed-role\/.+)$/.test(arn);
}

export interface DeployerTrust {
  /** Principal ARNs (a role or user of the management account) that may assume the deployer role. */
  readonly principals: readonly string[];
  /** sts:ExternalId the principals must pass. @default none required */
  readonly externalId?: string;
  /** Prefix of the deployer role's name; the region is appended. @default worker-stacks-deployer */
  readonly roleName?: string;
}

export interface BootstrapRolesProps {
  readonly account: string;
  readonly region: string;
  /** Who may assume the deployer role. @default no deployer or execution role (single-credential mode) */
  readonly trust?: DeployerTrust;
}

/**
 * What one account and region needs so that a daemon in another account can deploy its worker stacks, modelled on
 * `cdk bootstrap`'s deploy and execution roles:
 *
 * - the **node boundary**, a managed policy every role of a worker stack carries as its permissions boundary: at most
 *   what a worker node does (read its config object, read its bootstrap secret), so no worker stack can ever make an
 *   admin role — made always, since worker stacks name it whoever deploys them;
 * - the **execution role**, which CloudFormation assumes (`RoleARN` of every change set) with what a worker stack's
 *   resources need, IAM limited to roles under /worker-stacks/ that carry the boundary;
 * - the **deployer role**, trusted only by the given principals, allowed exactly the calls the reconciler makes:
 *   CloudFormation on WorkerStack-* stacks and their change sets (each with the execution role), the config bucket's
 *   objects, and iam:PassRole on the execution role alone.
 */
export class BootstrapRoles extends Construct {
  public readonly boundary: iam.ManagedPolicy;
  public readonly executionRole?: iam.Role;
  public readonly deployerRole?: iam.Role;

  constructor(scope: Construct, id: string, props: BootstrapRolesProps) {
    super(scope, id);
    const { account, region } = props;
    const p = partitionOf(region);
    const workerStacks = `arn:${p}:cloudformation:${region}:${account}:stack/${WORKER_STACK_PREFIX}*/*`;
    // Literal, not the bucket's token: the name is fixed, and cdk-nag's acknowledgements name each wildcard resource.
    const bucketArn = `arn:${p}:s3:::${configBucketName(account, region)}`;

    this.boundary = new iam.ManagedPolicy(this, 'NodeBoundary', {
      managedPolicyName: nodeBoundaryName(region),
      path: WORKER_ROLE_PATH,
      description: 'Permissions boundary of every role a worker stack creates: at most what a worker node does',
      statements: [
        new iam.PolicyStatement({ sid: 'ReadConfigObjects', actions: ['s3:GetObject'], resources: [`${bucketArn}/clusters/*`] }),
        new iam.PolicyStatement({ sid: 'ReadBootstrapSecrets', actions: ['secretsmanager:GetSecretValue'], resources: [`arn:${p}:secretsmanager:*:*:secret:*`] }),
      ],
    });
    acknowledgeWildcards(this.boundary, this.boundary.document.toJSON(),
        "A boundary caps, it grants nothing: each worker role's own policy names its cluster's prefix and its own secret; the boundary admits any cluster's prefix of this bucket and any secret a cluster object may name.",
    );
    if (!props.trust) return;

    const executionRole = new iam.Role(this, 'ExecutionRole', {
      roleName: executionRoleName(region),
      assumedBy: new iam.ServicePrincipal('cloudformation.amazonaws.com'),
      description: 'Assumed by CloudFormation to change WorkerStack-* stacks (RoleARN of every worker-stacks change set)',
    });
    this.executionRole = executionRole;
    const execution = executionStatements(account, region, this.boundary.managedPolicyArn);
    for (const s of execution) executionRole.addToPolicy(s);
    acknowledgeWildcards(
      executionRole,
      execution.map((s) => s.toStatementJson()),
      'EC2, Auto Scaling and ELB describe calls and several create calls support no resource-level permission; every mutating call is limited to this account and region, IAM to roles under /worker-stacks/ that carry the node boundary, instance profiles to WorkerStack-*.',
    );

    const trust = props.trust;
    const principals = trust.principals.map((arn) => new iam.ArnPrincipal(arn));
    const assumedBy = new iam.CompositePrincipal(...principals);
    const deployerRole = new iam.Role(this, 'DeployerRole', {
      roleName: deployerRoleName(region, trust.roleName),
      assumedBy: trust.externalId ? assumedBy.withConditions({ StringEquals: { 'sts:ExternalId': trust.externalId } }) : assumedBy,
      description: 'Assumed by the worker-stacks daemon: CloudFormation on WorkerStack-* with the execution role, the config bucket objects',
    });
    this.deployerRole = deployerRole;
    const deployer = deployerStatements(account, region, workerStacks, bucketArn, executionRole.roleArn);
    for (const s of deployer) deployerRole.addToPolicy(s);
    acknowledgeWildcards(
      deployerRole,
      deployer.map((s) => s.toStatementJson()),
      "DescribeStacks without a stack name and ListStacks (paged listings per region instead of a call per cluster) need Resource '*'; everything else is WorkerStack-* stacks, their ws-* change sets and this account's config bucket objects (content-addressed keys, so a prefix).",
    );
  }
}

/**
 * Every CloudFormation and S3 action the reconciler sends with the deployer's credentials (test/stacks derives the
 * same list from the SDK commands in lib/aws and compares), and PassRole for the execution role alone.
 */
export function deployerStatements(account: string, region: string, workerStacks: string, bucketArn: string, executionRoleArn: string): iam.PolicyStatement[] {
  const p = partitionOf(region);
  const changeSets = `arn:${p}:cloudformation:${region}:${account}:changeSet/ws-*/*`;
  const withExecutionRole = { StringEquals: { 'cloudformation:RoleArn': executionRoleArn } };
  return [
    // The paged listing of every stack (DescribeStacks without a name) and of the stacks in progress (ListStacks).
    new iam.PolicyStatement({ sid: 'ListStacks', actions: ['cloudformation:DescribeStacks', 'cloudformation:ListStacks'], resources: ['*'] }),
    new iam.PolicyStatement({
      sid: 'ReadWorkerStacks',
      actions: ['cloudformation:DescribeStackEvents', 'cloudformation:GetTemplate', 'cloudformation:DescribeChangeSet'],
      resources: [workerStacks, changeSets],
    }),
    // Every operation that makes CloudFormation act runs as the execution role: the deployer cannot act with its own rights.
    new iam.PolicyStatement({
      sid: 'ChangeWorkerStacksAsExecutionRole',
      actions: ['cloudformation:CreateChangeSet', 'cloudformation:DeleteStack', 'cloudformation:ContinueUpdateRollback'],
      resources: [workerStacks, changeSets],
      conditions: withExecutionRole,
    }),
    new iam.PolicyStatement({ sid: 'RunOwnChangeSets', actions: ['cloudformation:ExecuteChangeSet', 'cloudformation:DeleteChangeSet'], resources: [workerStacks, changeSets] }),
    new iam.PolicyStatement({ sid: 'ConfigObjects', actions: ['s3:GetObject', 's3:PutObject'], resources: [`${bucketArn}/*`] }),
    // Old node configs are cleaned up once a cluster settles (clean-config-objects): only under clusters/.
    new iam.PolicyStatement({ sid: 'CleanUpOldConfigObjects', actions: ['s3:DeleteObject'], resources: [`${bucketArn}/clusters/*`] }),
    // HeadObject of a key that is not there answers 404 only with ListBucket (403 otherwise).
    new iam.PolicyStatement({ sid: 'ConfigBucket', actions: ['s3:ListBucket'], resources: [bucketArn] }),
    new iam.PolicyStatement({
      sid: 'PassExecutionRole',
      actions: ['iam:PassRole'],
      resources: [executionRoleArn],
      conditions: { StringEquals: { 'iam:PassedToService': 'cloudformation.amazonaws.com' } },
    }),
  ];
}

/** What CloudFormation needs to create, update and delete a worker stack's resources, and nothing in IAM beyond /worker-stacks/. */
export function executionStatements(account: string, region: string, boundaryArn: string): iam.PolicyStatement[] {
  const p = partitionOf(region);
  const here = (service: string, resource: string) => `arn:${p}:${service}:${region}:${account}:${resource}`;
  const workerRoles = `arn:${p}:iam::${account}:role${WORKER_ROLE_PATH}*`;
  const workerProfiles = `arn:${p}:iam::${account}:instance-profile/${WORKER_STACK_PREFIX}*`;
  const regionOnly = { StringEquals: { 'aws:RequestedRegion': region } };
  return [
    new iam.PolicyStatement({
      sid: 'Describe',
      actions: ['ec2:Describe*', 'autoscaling:Describe*', 'elasticloadbalancing:Describe*'],
      resources: ['*'],
    }),
    new iam.PolicyStatement({
      sid: 'WorkerNetworkAndLaunch',
      actions: [
        'ec2:CreateSecurityGroup',
        'ec2:DeleteSecurityGroup',
        'ec2:AuthorizeSecurityGroupIngress',
        'ec2:AuthorizeSecurityGroupEgress',
        'ec2:RevokeSecurityGroupIngress',
        'ec2:RevokeSecurityGroupEgress',
        'ec2:UpdateSecurityGroupRuleDescriptionsIngress',
        'ec2:UpdateSecurityGroupRuleDescriptionsEgress',
        'ec2:ModifySecurityGroupRules',
        'ec2:CreateLaunchTemplate',
        'ec2:CreateLaunchTemplateVersion',
        'ec2:ModifyLaunchTemplate',
        'ec2:DeleteLaunchTemplate',
        'ec2:DeleteLaunchTemplateVersions',
        'ec2:RunInstances',
        'ec2:CreateTags',
        'ec2:DeleteTags',
      ],
      resources: [here('ec2', '*'), `arn:${p}:ec2:${region}::image/*`],
    }),
    new iam.PolicyStatement({
      sid: 'WorkerGroup',
      actions: [
        'autoscaling:CreateAutoScalingGroup',
        'autoscaling:UpdateAutoScalingGroup',
        'autoscaling:DeleteAutoScalingGroup',
        'autoscaling:CreateLaunchConfiguration',
        'autoscaling:DeleteLaunchConfiguration',
        'autoscaling:CreateOrUpdateTags',
        'autoscaling:DeleteTags',
        'autoscaling:SuspendProcesses',
        'autoscaling:ResumeProcesses',
        'autoscaling:TerminateInstanceInAutoScalingGroup',
        'autoscaling:SetDesiredCapacity',
        'autoscaling:AttachLoadBalancerTargetGroups',
        'autoscaling:DetachLoadBalancerTargetGroups',
      ],
      resources: [here('autoscaling', 'autoScalingGroup:*:autoScalingGroupName/*'), here('autoscaling', 'launchConfiguration:*:launchConfigurationName/*')],
    }),
    new iam.PolicyStatement({
      sid: 'WorkerLoadBalancer',
      actions: [
        'elasticloadbalancing:CreateLoadBalancer',
        'elasticloadbalancing:DeleteLoadBalancer',
        'elasticloadbalancing:ModifyLoadBalancerAttributes',
        'elasticloadbalancing:SetSecurityGroups',
        'elasticloadbalancing:SetSubnets',
        'elasticloadbalancing:CreateListener',
        'elasticloadbalancing:DeleteListener',
        'elasticloadbalancing:ModifyListener',
        'elasticloadbalancing:CreateTargetGroup',
        'elasticloadbalancing:DeleteTargetGroup',
        'elasticloadbalancing:ModifyTargetGroup',
        'elasticloadbalancing:ModifyTargetGroupAttributes',
        'elasticloadbalancing:AddTags',
        'elasticloadbalancing:RemoveTags',
      ],
      resources: [here('elasticloadbalancing', '*')],
    }),
    // Roles only under /worker-stacks/, and only with the node boundary: a worker stack can never make an admin role.
    new iam.PolicyStatement({
      sid: 'WorkerRolesWithBoundary',
      actions: ['iam:CreateRole', 'iam:PutRolePermissionsBoundary', 'iam:PutRolePolicy', 'iam:AttachRolePolicy'],
      resources: [workerRoles],
      conditions: { StringEquals: { 'iam:PermissionsBoundary': boundaryArn } },
    }),
    new iam.PolicyStatement({
      sid: 'WorkerRoles',
      actions: ['iam:GetRole', 'iam:GetRolePolicy', 'iam:DeleteRole', 'iam:DeleteRolePolicy', 'iam:DetachRolePolicy', 'iam:UpdateRole', 'iam:UpdateRoleDescription', 'iam:UpdateAssumeRolePolicy', 'iam:TagRole', 'iam:UntagRole', 'iam:ListRoleTags'],
      resources: [workerRoles],
    }),
    new iam.PolicyStatement({ sid: 'PassWorkerRolesToEc2', actions: ['iam:PassRole'], resources: [workerRoles], conditions: { StringEquals: { 'iam:PassedToService': 'ec2.amazonaws.com' } } }),
    new iam.PolicyStatement({
      sid: 'WorkerInstanceProfiles',
      actions: ['iam:CreateInstanceProfile', 'iam:DeleteInstanceProfile', 'iam:GetInstanceProfile', 'iam:AddRoleToInstanceProfile', 'iam:RemoveRoleFromInstanceProfile', 'iam:TagInstanceProfile'],
      resources: [workerProfiles],
    }),
    new iam.PolicyStatement({
      sid: 'ServiceLinkedRoles',
      actions: ['iam:CreateServiceLinkedRole'],
      resources: [`arn:${p}:iam::${account}:role/aws-service-role/*`],
      conditions: { StringEquals: { 'iam:AWSServiceName': ['autoscaling.amazonaws.com', 'elasticloadbalancing.amazonaws.com'] } },
    }),
    // Nothing else, in no other region.
    new iam.PolicyStatement({ sid: 'OnlyThisRegion', effect: iam.Effect.DENY, notActions: ['iam:*', 'sts:*'], resources: ['*'], conditions: { StringNotEquals: regionOnly.StringEquals } }),
    new iam.PolicyStatement({
      sid: 'KeepTheBoundary',
      effect: iam.Effect.DENY,
      actions: ['iam:DeleteRolePermissionsBoundary', 'iam:CreatePolicyVersion', 'iam:SetDefaultPolicyVersion', 'iam:DeletePolicy'],
      resources: ['*'],
    }),
  ];
}

/**
 * cdk-nag reports each wildcard action and resource of a policy as its own AwsSolutions-IAM5 finding: each is
 * acknowledged by name, with the role's reason, so a new wildcard added later is a finding again.
 */
function acknowledgeWildcards(scope: Construct, doc: { Statement?: Array<{ Effect?: string; Action?: string | string[]; Resource?: string | string[] }> } | Array<{ Effect?: string; Action?: string | string[]; Resource?: string | string[] }>, reason: string): void {
  const statements = Array.isArray(doc) ? doc : (doc.Statement ?? []);
  const list = (v: string | string[] | undefined) => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
  const ids = new Set<string>();
  for (const s of statements.filter((x) => x.Effect !== 'Deny')) {
    for (const a of list(s.Action).filter((x) => x.includes('*'))) ids.add(`AwsSolutions-IAM5[Action::${a}]`);
    for (const r of list(s.Resource).filter((x) => typeof x === 'string' && x.includes('*'))) ids.add(`AwsSolutions-IAM5[Resource::${r}]`);
  }
  for (const id of [...ids].sort()) Validations.of(scope).acknowledge({ id, reason });
}
