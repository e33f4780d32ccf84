import * as iam from 'aws-cdk-lib/aws-iam';
import { UsageError } from '../../core/errors';
import { HANDLER_PERMISSIONS } from './handler-permissions';
import { BEYOND_HANDLERS, DENIED_WITHIN_WILDCARDS, NOT_GRANTED } from './execution-exceptions';
import { CLUSTER_TAG, partitionOf, WORKER_ROLE_PATH, WORKER_STACK_PREFIX } from '../../core/naming';

/** Every resource type any worker stack can hold: the keys of the pinned handler table. */
export const WORKER_RESOURCE_TYPES: readonly string[] = Object.keys(HANDLER_PERMISSIONS).sort();

/** The union of the create, read, update and delete handler permissions of the given types. */
export function handlerActions(types: readonly string[] = WORKER_RESOURCE_TYPES): string[] {
  const out = new Set<string>();
  for (const t of types) {
    const h = Object.hasOwn(HANDLER_PERMISSIONS, t) ? HANDLER_PERMISSIONS[t] : undefined;
    if (!h)
      throw new UsageError(`${t} has no handler permissions in lib/engines/stacks/handler-permissions.ts`, {
        hint: 'add the type to scripts/extract-handler-permissions.py and regenerate',
      });
    for (const list of Object.values(h)) for (const a of list) out.add(a);
  }
  return [...out].sort();
}

/** The actions the execution role grants: every handler permission but NOT_GRANTED, and BEYOND_HANDLERS. */
export function executionActions(): string[] {
  return [...new Set([...handlerActions().filter((a) => !(a in NOT_GRANTED)), ...Object.keys(BEYOND_HANDLERS)])].sort();
}

interface Scope {
  readonly sid: string;
  /** Which granted actions this scope takes (the first scope that matches an action takes it). */
  readonly match: RegExp;
  /** The statements for the actions it took: each is resources + conditions. */
  readonly grants: ReadonlyArray<{
    readonly resources: string[];
    readonly conditions?: Record<string, Record<string, unknown>>;
    readonly only?: RegExp;
  }>;
}

/**
 * Which resources each granted action may touch. Mutations of security groups, launch templates, Auto Scaling groups,
 * load balancers and target groups need the cluster tag on the resource (aws:ResourceTag), or in the create request
 * (aws:RequestTag); tags can be added to an untagged resource only while creating it (ec2:CreateAction,
 * elasticloadbalancing:CreateAction), so no template can adopt a foreign resource by tagging it. Names CloudFormation
 * generates start with the stack name, so queues, rules, instance profiles, managed policies and launch
 * configurations are scoped to WorkerStack-*; roles to the /worker-stacks/ path with the node boundary.
 */
function scopes(account: string, region: string, boundaryArn: string): Scope[] {
  const p = partitionOf(region);
  const here = (service: string, resource: string) => `arn:${p}:${service}:${region}:${account}:${resource}`;
  const tagged = { Null: { [`aws:ResourceTag/${CLUSTER_TAG}`]: 'false' } };
  const taggedRequest = { Null: { [`aws:RequestTag/${CLUSTER_TAG}`]: 'false' } };
  const groups = here('ec2', 'security-group/*');
  const templates = here('ec2', 'launch-template/*');
  const asgs = here('autoscaling', 'autoScalingGroup:*:autoScalingGroupName/*');
  const balancers = [here('elasticloadbalancing', 'loadbalancer/net/*'), here('elasticloadbalancing', 'targetgroup/*')];
  const workerRoles = `arn:${p}:iam::${account}:role${WORKER_ROLE_PATH}*`;
  return [
    {
      sid: 'Describe',
      match: /^(ec2|autoscaling|elasticloadbalancing):(Describe|Get)/,
      grants: [{ resources: ['*'] }],
    },
    {
      sid: 'RollbackAlarms',
      match: /^cloudwatch:DescribeAlarms$/,
      grants: [{ resources: [here('cloudwatch', 'alarm:*')] }],
    },
    // EKS access entries only for a worker node role of this account (CloudFormation names it WorkerStack-..., under
    // /worker-stacks/), only of type EC2_LINUX, in any EKS cluster of this account and region: the EKS cluster names are
    // not known when the account is bootstrapped, so "its own clusters" is "entries of its own worker roles".
    {
      sid: 'WorkerAccessEntries',
      match: /^eks:/,
      grants: [
        {
          resources: [here('eks', 'cluster/*')],
          only: /^eks:CreateAccessEntry$/,
          conditions: {
            StringLike: { 'eks:principalArn': workerRoles },
            StringEquals: { 'eks:accessEntryType': 'EC2_LINUX' },
          },
        },
        { resources: [here('eks', `access-entry/*/role/${account}/${WORKER_STACK_PREFIX}*`)] },
      ],
    },
    { sid: 'DrainQueues', match: /^sqs:/, grants: [{ resources: [here('sqs', `${WORKER_STACK_PREFIX}*`)] }] },
    { sid: 'DrainRules', match: /^events:/, grants: [{ resources: [here('events', `rule/${WORKER_STACK_PREFIX}*`)] }] },
    {
      sid: 'PassWorkerRolesToEc2',
      match: /^iam:PassRole$/,
      grants: [
        { resources: [workerRoles], conditions: { StringEquals: { 'iam:PassedToService': 'ec2.amazonaws.com' } } },
      ],
    },
    {
      sid: 'ServiceLinkedRoles',
      match: /^iam:CreateServiceLinkedRole$/,
      grants: [
        {
          resources: [`arn:${p}:iam::${account}:role/aws-service-role/*`],
          conditions: {
            StringEquals: { 'iam:AWSServiceName': ['autoscaling.amazonaws.com', 'elasticloadbalancing.amazonaws.com'] },
          },
        },
      ],
    },
    {
      sid: 'WorkerInstanceProfiles',
      match: /^iam:.*InstanceProfile/,
      grants: [{ resources: [`arn:${p}:iam::${account}:instance-profile/${WORKER_STACK_PREFIX}*`] }],
    },
    // Roles only under /worker-stacks/, and only with the node boundary: a worker stack can never make an admin role.
    {
      sid: 'WorkerRolesWithBoundary',
      match: /^iam:(CreateRole|PutRolePermissionsBoundary|PutRolePolicy|AttachRolePolicy)$/,
      grants: [{ resources: [workerRoles], conditions: { StringEquals: { 'iam:PermissionsBoundary': boundaryArn } } }],
    },
    { sid: 'WorkerRoles', match: /^iam:.*Role/, grants: [{ resources: [workerRoles] }] },
    // The drain handler's managed policy: a generated name starting with the stack name (never the node boundary, which is under /worker-stacks/).
    {
      sid: 'WorkerManagedPolicies',
      match: /^iam:.*Polic(y|ies)/,
      grants: [{ resources: [`arn:${p}:iam::${account}:policy/${WORKER_STACK_PREFIX}*`] }],
    },
    {
      sid: 'CreateTaggedSecurityGroups',
      match: /^ec2:CreateSecurityGroup$/,
      grants: [{ resources: [groups], conditions: taggedRequest }, { resources: [here('ec2', 'vpc/*')] }],
    },
    {
      sid: 'TaggedSecurityGroups',
      match:
        /^ec2:(AuthorizeSecurityGroup|RevokeSecurityGroup|UpdateSecurityGroupRuleDescriptions|DeleteSecurityGroup)/,
      // A new rule is its own resource (security-group-rule), authorized together with its group, which must be tagged.
      grants: [
        { resources: [groups], conditions: tagged },
        { resources: [here('ec2', 'security-group-rule/*')], only: /^ec2:Authorize/ },
      ],
    },
    {
      sid: 'CreateTaggedLaunchTemplates',
      match: /^ec2:CreateLaunchTemplate$/,
      grants: [{ resources: [templates], conditions: taggedRequest }],
    },
    {
      sid: 'TaggedLaunchTemplates',
      match: /^ec2:(CreateLaunchTemplateVersion|ModifyLaunchTemplate|DeleteLaunchTemplate)/,
      grants: [{ resources: [templates], conditions: tagged }],
    },
    {
      sid: 'Ec2Tags',
      match: /^ec2:(CreateTags|DeleteTags)$/,
      grants: [
        { resources: [groups, templates], conditions: tagged },
        {
          resources: [groups, templates],
          conditions: { StringEquals: { 'ec2:CreateAction': ['CreateSecurityGroup', 'CreateLaunchTemplate'] } },
          only: /^ec2:CreateTags$/,
        },
      ],
    },
    // The group's launch checks: instances from the worker launch template or launch configuration, in this account and region.
    {
      sid: 'LaunchWorkers',
      match: /^ec2:RunInstances$/,
      grants: [{ resources: [here('ec2', '*'), `arn:${p}:ec2:${region}::image/*`] }],
    },
    {
      sid: 'CreateTaggedGroups',
      match: /^autoscaling:CreateAutoScalingGroup$/,
      grants: [{ resources: [asgs], conditions: taggedRequest }],
    },
    // Tags come with CreateAutoScalingGroup, before the group has any: by the generated name, which starts with the stack name.
    {
      sid: 'WorkerGroupTags',
      match: /^autoscaling:CreateOrUpdateTags$/,
      grants: [{ resources: [here('autoscaling', `autoScalingGroup:*:autoScalingGroupName/${WORKER_STACK_PREFIX}*`)] }],
    },
    {
      sid: 'WorkerLaunchConfigurations',
      match: /^autoscaling:.*LaunchConfiguration/,
      grants: [
        { resources: [here('autoscaling', `launchConfiguration:*:launchConfigurationName/${WORKER_STACK_PREFIX}*`)] },
      ],
    },
    { sid: 'TaggedGroups', match: /^autoscaling:/, grants: [{ resources: [asgs], conditions: tagged }] },
    {
      sid: 'CreateTaggedLoadBalancers',
      match: /^elasticloadbalancing:CreateLoadBalancer$/,
      grants: [{ resources: [balancers[0]], conditions: taggedRequest }],
    },
    // The target group handler creates the group untagged and tags it afterwards (its schema: tagOnCreate false), so
    // neither call can need the tag. CloudFormation tags only resources of its own stacks, and IMPORT is denied.
    {
      sid: 'CreateTargetGroups',
      match: /^elasticloadbalancing:CreateTargetGroup$/,
      grants: [{ resources: [balancers[1]] }],
    },
    {
      sid: 'LoadBalancerTags',
      match: /^elasticloadbalancing:AddTags$/,
      grants: [
        { resources: [balancers[0]], conditions: tagged },
        {
          resources: [balancers[0]],
          conditions: { StringEquals: { 'elasticloadbalancing:CreateAction': 'CreateLoadBalancer' } },
        },
        { resources: [balancers[1]] },
      ],
    },
    // Listeners carry no tags (cfn-lint's schema has none): scoped to Network Load Balancer listeners of this account and region.
    {
      sid: 'Listeners',
      match: /^elasticloadbalancing:(ModifyListener|DeleteListener|ModifyListenerAttributes)/,
      grants: [{ resources: [here('elasticloadbalancing', 'listener/net/*')] }],
    },
    {
      sid: 'TaggedLoadBalancers',
      match: /^elasticloadbalancing:/,
      grants: [{ resources: balancers, conditions: tagged }],
    },
    // Target-tracking alarms Auto Scaling makes for a worker group are named after it.
    {
      sid: 'GroupAlarms',
      match: /^cloudwatch:PutMetricAlarm$/,
      grants: [{ resources: [here('cloudwatch', `alarm:TargetTracking-${WORKER_STACK_PREFIX}*`)] }],
    },
  ];
}

/** What CloudFormation needs to create, update and delete a worker stack's resources, derived from the handler table. */
export function executionStatements(account: string, region: string, boundaryArn: string): iam.PolicyStatement[] {
  const all = scopes(account, region, boundaryArn);
  const taken = new Map<Scope, string[]>();
  for (const action of executionActions()) {
    const scope = all.find((s) => s.match.test(action));
    if (!scope)
      throw new UsageError(`the execution role has no scope for ${action}`, {
        hint: 'add a scope in lib/engines/stacks/execution-policy.ts, or list the action in NOT_GRANTED (execution-exceptions.ts) with its reason',
      });
    taken.set(scope, [...(taken.get(scope) ?? []), action]);
  }
  const statements: iam.PolicyStatement[] = [];
  for (const scope of all) {
    const actions = taken.get(scope);
    if (!actions) continue;
    scope.grants.forEach((g, i) => {
      const mine = actions.filter((a) => !g.only || g.only.test(a));
      if (mine.length === 0) return;
      statements.push(
        new iam.PolicyStatement({
          sid: i === 0 ? scope.sid : `${scope.sid}${i}`,
          actions: mine,
          resources: g.resources,
          conditions: g.conditions,
        }),
      );
    });
  }
  const p = partitionOf(region);
  statements.push(
    // Nothing else, in no other region.
    new iam.PolicyStatement({
      sid: 'OnlyThisRegion',
      effect: iam.Effect.DENY,
      notActions: ['iam:*', 'sts:*'],
      resources: ['*'],
      conditions: { StringNotEquals: { 'aws:RequestedRegion': region } },
    }),
    new iam.PolicyStatement({
      sid: 'KeepTheBoundary',
      effect: iam.Effect.DENY,
      actions: ['iam:DeleteRolePermissionsBoundary'],
      resources: ['*'],
    }),
    new iam.PolicyStatement({
      sid: 'KeepTheBoundaryPolicy',
      effect: iam.Effect.DENY,
      actions: [
        'iam:CreatePolicyVersion',
        'iam:DeletePolicyVersion',
        'iam:SetDefaultPolicyVersion',
        'iam:DeletePolicy',
      ],
      resources: [boundaryArn, `arn:${p}:iam::${account}:policy${WORKER_ROLE_PATH}*`],
    }),
    new iam.PolicyStatement({
      sid: 'NoInstanceSecrets',
      effect: iam.Effect.DENY,
      actions: Object.keys(DENIED_WITHIN_WILDCARDS),
      resources: ['*'],
    }),
    new iam.PolicyStatement({
      sid: 'KeepTheTrust',
      effect: iam.Effect.DENY,
      actions: ['iam:UpdateAssumeRolePolicy'],
      resources: ['*'],
    }),
  );
  return statements;
}
