import * as fs from 'node:fs';
import * as path from 'node:path';
import { App, Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { BootstrapStack } from '../../../lib/engines/stacks/bootstrap-stack';
import { buildFleetApp } from '../../../lib/engines/stacks/app';
import { nodeBoundaryArn, executionRoleName, deployerRoleName } from '../../../lib/core/naming';
import { example, REPO, tempDir } from '../../helpers/clusters';
import { synthCluster } from '../../helpers/synth';

const ACCOUNT = '222222222222';
const REGION = 'eu-west-1';
const TRUST = 'arn:aws:iam::111111111111:role/worker-stacks-daemon';

function bootstrap(props: Partial<ConstructorParameters<typeof BootstrapStack>[1]> = {}, nag = true) {
  const app = new App({ outdir: tempDir('bootstrap-roles') });
  if (nag) Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  const stack = new BootstrapStack(app, { account: ACCOUNT, region: REGION, trust: { principals: [TRUST] }, ...props });
  app.synth();
  return { stack, template: Template.fromStack(stack) };
}

/** Every Action of the role's inline policies, flattened. */
function actionsOf(template: Template, roleName: string): string[] {
  const roles = template.findResources('AWS::IAM::Role', { Properties: { RoleName: roleName } });
  const [roleId] = Object.keys(roles);
  const policies = Object.values(template.findResources('AWS::IAM::Policy')).filter((p) =>
    JSON.stringify(p.Properties.Roles).includes(roleId),
  );
  return policies
    .flatMap((p) => p.Properties.PolicyDocument.Statement)
    .filter((s: { Effect: string }) => s.Effect === 'Allow')
    .flatMap((s: { Action: string | string[] }) => (Array.isArray(s.Action) ? s.Action : [s.Action]))
    .sort();
}

describe('bootstrap with --trust', () => {
  test('the deployer role is trusted by the management principal only, with the external id when given', () => {
    // GIVEN / WHEN
    const { template } = bootstrap({ trust: { principals: [TRUST], externalId: 'fleet-7' } });
    // THEN
    template.hasResourceProperties('AWS::IAM::Role', {
      RoleName: deployerRoleName(REGION),
      AssumeRolePolicyDocument: {
        Statement: [
          {
            Action: 'sts:AssumeRole',
            Effect: 'Allow',
            Principal: { AWS: TRUST },
            Condition: { StringEquals: { 'sts:ExternalId': 'fleet-7' } },
          },
        ],
      },
    });
  });

  test('the deployer may pass the execution role alone, to CloudFormation alone', () => {
    const { template } = bootstrap();
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Action: 'iam:PassRole',
            Condition: { StringEquals: { 'iam:PassedToService': 'cloudformation.amazonaws.com' } },
            Resource: { 'Fn::GetAtt': [Match.stringLikeRegexp('ExecutionRole'), 'Arn'] },
          }),
        ]),
      },
    });
  });

  test('every CloudFormation write the deployer may make runs as the execution role', () => {
    const { template } = bootstrap();
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Action: [
              'cloudformation:CreateChangeSet',
              'cloudformation:DeleteStack',
              'cloudformation:ContinueUpdateRollback',
            ],
            Condition: {
              StringEquals: {
                'cloudformation:RoleArn': { 'Fn::GetAtt': [Match.stringLikeRegexp('ExecutionRole'), 'Arn'] },
              },
            },
            Resource: [
              `arn:aws:cloudformation:${REGION}:${ACCOUNT}:stack/WorkerStack-*/*`,
              `arn:aws:cloudformation:${REGION}:${ACCOUNT}:changeSet/ws-*/*`,
            ],
          }),
        ]),
      },
    });
  });

  test("the execution role is CloudFormation's, and creates roles only under /worker-stacks/ with the node boundary", () => {
    const { template } = bootstrap();
    template.hasResourceProperties('AWS::IAM::Role', {
      RoleName: executionRoleName(REGION),
      AssumeRolePolicyDocument: {
        Statement: [
          { Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'cloudformation.amazonaws.com' } },
        ],
      },
    });
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Action: ['iam:AttachRolePolicy', 'iam:CreateRole', 'iam:PutRolePermissionsBoundary', 'iam:PutRolePolicy'],
            Resource: `arn:aws:iam::${ACCOUNT}:role/worker-stacks/*`,
            Condition: { StringEquals: { 'iam:PermissionsBoundary': { Ref: Match.stringLikeRegexp('NodeBoundary') } } },
          }),
          Match.objectLike({ Effect: 'Deny', Action: 'iam:DeleteRolePermissionsBoundary' }),
        ]),
      },
    });
  });

  test('cdk-nag passes, every acknowledgement with a reason', () => {
    // WHEN / THEN: synth with the AwsSolutions pack throws on any unacknowledged finding
    expect(() => bootstrap({ trust: { principals: [TRUST], externalId: 'x' } }, true)).not.toThrow();
  });
});

test('without --trust the bootstrap stack makes the bucket and the node boundary, and no role', () => {
  const { template } = bootstrap({ trust: undefined });
  template.resourceCountIs('AWS::IAM::Role', 0);
  template.hasResourceProperties('AWS::IAM::ManagedPolicy', {
    ManagedPolicyName: `worker-stacks-node-boundary-${REGION}`,
    Path: '/worker-stacks/',
  });
});

test('cdk deploy passes the trust as context: -c worker-stacks:trust=<ARN>', () => {
  // GIVEN the context the CDK CLI hands the app for `-c worker-stacks:trust=… -c worker-stacks:external-id=…`
  const cluster = example('prod-eu1');
  const build = () =>
    buildFleetApp({ clusters: [{ file: 'x', cluster }], outdir: tempDir('ctx'), nag: false, bootstrap: true });
  process.env.CDK_CONTEXT_JSON = JSON.stringify({ 'worker-stacks:trust': TRUST, 'worker-stacks:external-id': 'e1' });
  try {
    // WHEN
    const fleet = build();
    // THEN
    const t = Template.fromStack(fleet.bootstrapStacks[0]);
    t.hasResourceProperties('AWS::IAM::Role', {
      AssumeRolePolicyDocument: {
        Statement: [
          Match.objectLike({ Principal: { AWS: TRUST }, Condition: { StringEquals: { 'sts:ExternalId': 'e1' } } }),
        ],
      },
    });
    // and a principal that is not an ARN is refused, naming the context key
    process.env.CDK_CONTEXT_JSON = JSON.stringify({ 'worker-stacks:trust': 'my-admin' });
    expect(build).toThrow(/worker-stacks:trust: my-admin is not a principal ARN/);
  } finally {
    delete process.env.CDK_CONTEXT_JSON;
  }
});

test("a worker stack's roles are under /worker-stacks/ and carry the account's node boundary", () => {
  const cluster = example('prod-eu1');
  const s = synthCluster(cluster);
  s.template.hasResourceProperties('AWS::IAM::Role', {
    Path: '/worker-stacks/',
    PermissionsBoundary: nodeBoundaryArn(cluster.spec.account, cluster.spec.region),
  });
  expect(Object.values(s.template.findResources('AWS::IAM::Role')).every((r) => r.Properties.PermissionsBoundary)).toBe(
    true,
  );
});

/**
 * SDK operation → the IAM action it needs, for every call lib/platform/aws sends with the deployer's credentials. S3's
 * HeadObject is authorized as s3:GetObject and HeadBucket as s3:ListBucket; a waiter or paginator is its Describe call.
 */
const IAM_ACTION: Record<string, string> = {
  HeadObject: 's3:GetObject',
  HeadBucket: 's3:ListBucket',
  GetObject: 's3:GetObject',
  PutObject: 's3:PutObject',
  ListObjectsV2: 's3:ListBucket',
  // DeleteObjects (the batch call) is authorized per key as s3:DeleteObject.
  DeleteObjects: 's3:DeleteObject',
};
/**
 * Calls IAM never authorizes (GetCallerIdentity), that the management credentials make (AssumeRole), or that only
 * `bootstrap` makes, with the account's own credentials before any deployer role exists (GetRole: is a role of the
 * bootstrap stack gone?), or that the image channels make with the daemon's own credentials (docs/image-channels.md:
 * SSM GetParameter, EC2 DescribeImages, in the management principal's account).
 */
const NOT_THE_DEPLOYERS = new Set([
  'sts:GetCallerIdentity',
  'sts:AssumeRole',
  'iam:GetRole',
  'ssm:GetParameter',
  'ec2:DescribeImages',
]);

/** The SDK operations a source file sends: `new XCommand(`, `paginateX(` and `waitUntilX(` of its @aws-sdk imports. */
function operationsSent(file: string): { service: string; operation: string }[] {
  const text = fs.readFileSync(file, 'utf8');
  const out: { service: string; operation: string }[] = [];
  for (const m of text.matchAll(/import\s*{([^}]*)}\s*from\s*'@aws-sdk\/client-([a-z0-9]+)'/g)) {
    const service = m[2] === 'cloudformation' ? 'cloudformation' : m[2];
    for (const name of m[1].split(',').map((s) => s.trim().split(/\s+as\s+/)[0])) {
      const used = (pattern: string) => new RegExp(pattern).test(text.replace(m[0], ''));
      let op: string | undefined;
      if (/Command$/.test(name) && used(`new ${name}\\(`)) op = name.replace(/Command$/, '');
      else if (/^paginate/.test(name) && used(`${name}\\(`)) op = name.replace(/^paginate/, '');
      else if (/^waitUntilStack/.test(name) && used(`${name}\\b`)) op = 'DescribeStacks';
      else if (/^waitUntilChangeSet/.test(name) && used(`${name}\\b`)) op = 'DescribeChangeSet';
      if (op) out.push({ service, operation: op });
    }
  }
  return out;
}

test('least privilege: the deployer role allows exactly the actions of the commands lib/platform/aws sends', () => {
  // GIVEN the commands of the SDK adapters
  const dir = path.join(REPO, 'lib', 'platform', 'aws');
  const sent = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.ts'))
    .flatMap((f) => operationsSent(path.join(dir, f)));
  const needed = new Set(
    sent
      .map(({ service, operation }) =>
        service === 's3' ? (IAM_ACTION[operation] ?? `s3:${operation}`) : `${service}:${operation}`,
      )
      .filter((a) => !NOT_THE_DEPLOYERS.has(a)),
  );
  // a sanity floor: the adapter really was read
  expect([...needed]).toEqual(
    expect.arrayContaining(['cloudformation:CreateChangeSet', 'cloudformation:DescribeStacks', 's3:PutObject']),
  );

  // WHEN the deployer role is synthesized
  const { template } = bootstrap();
  const granted = actionsOf(template, deployerRoleName(REGION)).filter((a) => a !== 'iam:PassRole');

  // THEN it grants every one of them and nothing more (iam:PassRole is for the execution role, asserted above)
  expect(granted).toEqual([...needed].sort());
});
