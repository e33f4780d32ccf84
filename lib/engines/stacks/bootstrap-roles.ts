import { Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { executionStatements, WORKER_RESOURCE_TYPES } from './execution-policy';
import {
  CLUSTER_TAG,
  configBucketName,
  deployerRoleName,
  executionRoleName,
  nodeBoundaryName,
  partitionOf,
  PRINCIPAL_CLUSTER,
  SECRET_NAME_PREFIX,
  WORKER_ROLE_PATH,
  poolStackName,
  WORKER_STACK_PREFIX,
} from '../../core/naming';

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
      statements: nodeBoundaryStatements(account, region),
    });
    acknowledgeWildcards(
      this.boundary,
      this.boundary.document.toJSON() as PolicyJson,
      "A boundary caps, it grants nothing: each worker role's own policy names its cluster's prefix and its own secret; the boundary admits, for a role tagged with a cluster, that cluster's config prefix, secrets under worker-stacks/<cluster>/ and its own stack's signal, and only with EC2 instance credentials.",
    );
    if (!props.trust) return;

    const executionRole = new iam.Role(this, 'ExecutionRole', {
      roleName: executionRoleName(region),
      assumedBy: new iam.ServicePrincipal('cloudformation.amazonaws.com'),
      description:
        'Assumed by CloudFormation to change WorkerStack-* stacks (RoleARN of every worker-stacks change set)',
    });
    this.executionRole = executionRole;
    const execution = executionStatements(account, region, this.boundary.managedPolicyArn);
    for (const s of execution) executionRole.addToPolicy(s);
    acknowledgeWildcards(
      executionRole,
      execution.map((s) => s.toStatementJson() as StatementJson),
      "Derived from the CloudFormation handler permissions of the worker resource types (lib/engines/stacks/handler-permissions.ts), whose Describe*/Get* wildcards are the handlers' own and support no resource-level permission; every mutation is limited to this account and region, to resources with the cluster tag or CloudFormation names starting with WorkerStack-, IAM to roles under /worker-stacks/ that carry the node boundary (docs/security-model.md).",
    );

    const trust = props.trust;
    const principals = trust.principals.map((arn) => new iam.ArnPrincipal(arn));
    const assumedBy = new iam.CompositePrincipal(...principals);
    const deployerRole = new iam.Role(this, 'DeployerRole', {
      roleName: deployerRoleName(region, trust.roleName),
      assumedBy: trust.externalId
        ? assumedBy.withConditions({ StringEquals: { 'sts:ExternalId': trust.externalId } })
        : assumedBy,
      description:
        'Assumed by the worker-stacks daemon: CloudFormation on WorkerStack-* with the execution role, the config bucket objects',
    });
    this.deployerRole = deployerRole;
    const deployer = deployerStatements(account, region, workerStacks, bucketArn, executionRole.roleArn);
    for (const s of deployer) deployerRole.addToPolicy(s);
    acknowledgeWildcards(
      deployerRole,
      deployer.map((s) => s.toStatementJson() as StatementJson),
      "DescribeStacks without a stack name and ListStacks (paged listings per region instead of a call per cluster) need Resource '*'; everything else is WorkerStack-* stacks, their ws-* change sets and this account's config bucket objects (content-addressed keys, so a prefix).",
    );
  }
}

/**
 * The node boundary: at most what a worker node does, for the cluster its role is tagged with (`aws:PrincipalTag`),
 * and only with an EC2 instance's credentials (`aws:EC2InstanceSourceVPC` is set only for those): a role a template
 * makes trusted by some other principal still can read nothing through it. One policy per account and region serves
 * every cluster: the cluster comes from the role's tag, which the worker stack sets to the cluster's name.
 */
export function nodeBoundaryStatements(account: string, region: string): iam.PolicyStatement[] {
  const p = partitionOf(region);
  const own = PRINCIPAL_CLUSTER;
  const instanceCredentials = {
    Null: { 'aws:EC2InstanceSourceVPC': 'false', [`aws:PrincipalTag/${CLUSTER_TAG}`]: 'false' },
  };
  const bucketArn = `arn:${p}:s3:::${configBucketName(account, region)}`;
  return [
    new iam.PolicyStatement({
      sid: 'ReadOwnConfigObjects',
      actions: ['s3:GetObject'],
      resources: [`${bucketArn}/clusters/${own}/*`],
      conditions: instanceCredentials,
    }),
    new iam.PolicyStatement({
      sid: 'ReadOwnSecrets',
      actions: ['secretsmanager:GetSecretValue'],
      resources: [`arn:${p}:secretsmanager:${region}:${account}:secret:${SECRET_NAME_PREFIX}${own}/*`],
      conditions: instanceCredentials,
    }),
    // The node's readiness signal to its own stack (cloudconfig/_shared/signal-ready.sh.hbs): without it in the
    // boundary, the rolling update would wait for signals that AWS refuses. Its own stack is the shared one or one of
    // its cluster's pool stacks (WorkerStack-<cluster>-Pool-<pool>); the role's own policies name the exact stacks.
    new iam.PolicyStatement({
      sid: 'SignalOwnStack',
      actions: ['cloudformation:SignalResource'],
      resources: [
        `arn:${p}:cloudformation:${region}:${account}:stack/${WORKER_STACK_PREFIX}${own}/*`,
        `arn:${p}:cloudformation:${region}:${account}:stack/${poolStackName(own, '*')}/*`,
      ],
      conditions: instanceCredentials,
    }),
  ];
}

/**
 * Every CloudFormation and S3 action the reconciler sends with the deployer's credentials (test/engines/stacks derives the
 * same list from the SDK commands in lib/platform/aws and compares), and PassRole for the execution role alone.
 */
export function deployerStatements(
  account: string,
  region: string,
  workerStacks: string,
  bucketArn: string,
  executionRoleArn: string,
): iam.PolicyStatement[] {
  const p = partitionOf(region);
  const changeSets = `arn:${p}:cloudformation:${region}:${account}:changeSet/ws-*/*`;
  const withExecutionRole = { StringEquals: { 'cloudformation:RoleArn': executionRoleArn } };
  return [
    // The paged listing of every stack (DescribeStacks without a name) and of the stacks in progress (ListStacks), and
    // the account's stack quota (DescribeAccountLimits: how close the planned stacks are to it); none takes a resource.
    new iam.PolicyStatement({
      sid: 'ListStacks',
      actions: ['cloudformation:DescribeStacks', 'cloudformation:ListStacks', 'cloudformation:DescribeAccountLimits'],
      resources: ['*'],
    }),
    new iam.PolicyStatement({
      sid: 'ReadWorkerStacks',
      actions: ['cloudformation:DescribeStackEvents', 'cloudformation:GetTemplate', 'cloudformation:DescribeChangeSet'],
      resources: [workerStacks, changeSets],
    }),
    // Every operation that makes CloudFormation act runs as the execution role: the deployer cannot act with its own rights.
    new iam.PolicyStatement({
      sid: 'ChangeWorkerStacksAsExecutionRole',
      actions: [
        'cloudformation:CreateChangeSet',
        'cloudformation:DeleteStack',
        'cloudformation:ContinueUpdateRollback',
      ],
      resources: [workerStacks, changeSets],
      conditions: withExecutionRole,
    }),
    // A change set may hold only the resource types whose handler permissions the execution role was derived from.
    new iam.PolicyStatement({
      sid: 'OnlyWorkerResourceTypes',
      effect: iam.Effect.DENY,
      actions: ['cloudformation:CreateChangeSet'],
      resources: ['*'],
      conditions: { 'ForAnyValue:StringNotEquals': { 'cloudformation:ResourceTypes': [...WORKER_RESOURCE_TYPES] } },
    }),
    // No IMPORT change set: it would adopt a resource that is not a worker stack's into one.
    new iam.PolicyStatement({
      sid: 'NoImport',
      effect: iam.Effect.DENY,
      actions: ['cloudformation:CreateChangeSet'],
      resources: ['*'],
      conditions: { Null: { 'cloudformation:ImportResourceTypes': 'false' } },
    }),
    new iam.PolicyStatement({
      sid: 'RunOwnChangeSets',
      actions: ['cloudformation:ExecuteChangeSet', 'cloudformation:DeleteChangeSet'],
      resources: [workerStacks, changeSets],
    }),
    new iam.PolicyStatement({
      sid: 'ConfigObjects',
      actions: ['s3:GetObject', 's3:PutObject'],
      resources: [`${bucketArn}/*`],
    }),
    // Old node configs are cleaned up once a cluster settles (clean-config-objects): only under clusters/.
    new iam.PolicyStatement({
      sid: 'CleanUpOldConfigObjects',
      actions: ['s3:DeleteObject'],
      resources: [`${bucketArn}/clusters/*`],
    }),
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

/**
 * cdk-nag reports each wildcard action and resource of a policy as its own AwsSolutions-IAM5 finding: each is
 * acknowledged by name, with the role's reason, so a new wildcard added later is a finding again.
 */
/** The fields of an IAM statement's JSON (CDK's toStatementJson, untyped) that the acknowledgement reads. */
type StatementJson = { Effect?: string; Action?: string | string[]; Resource?: string | string[] };
/** A policy document's JSON (CDK's PolicyDocument.toJSON, untyped). */
type PolicyJson = { Statement?: StatementJson[] };

function acknowledgeWildcards(scope: Construct, doc: PolicyJson | StatementJson[], reason: string): void {
  const statements = Array.isArray(doc) ? doc : (doc.Statement ?? []);
  const list = (v: string | string[] | undefined) => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
  const ids = new Set<string>();
  for (const s of statements.filter((x) => x.Effect !== 'Deny')) {
    for (const a of list(s.Action).filter((x) => x.includes('*'))) ids.add(`AwsSolutions-IAM5[Action::${a}]`);
    // cdk-nag names a policy variable ${x} as <x>.
    for (const r of list(s.Resource).filter((x) => typeof x === 'string' && x.includes('*')))
      ids.add(`AwsSolutions-IAM5[Resource::${r.replace(/\$\{([^}]+)\}/g, '<$1>')}]`);
  }
  for (const id of [...ids].sort()) Validations.of(scope).acknowledge({ id, reason });
}
