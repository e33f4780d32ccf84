import { Readable } from 'node:stream';
import {
  CloudFormationClient,
  CreateChangeSetCommand,
  DeleteStackCommand,
  DescribeStacksCommand,
} from '@aws-sdk/client-cloudformation';
import { AssumeRoleCommand, GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { mockClient } from 'aws-sdk-client-mock';
import { awsClients } from '../../../lib/platform/aws/clients';
import { DeployerCredentials, sessionName } from '../../../lib/platform/aws/assume-role';
import { AssumeRoleError } from '../../../lib/core/errors';
import { createDeps } from '../../../lib/adapters/cli/wiring';
import { tempDir } from '../../helpers/clusters';
import { Json } from '../../helpers/json';
import { DEFAULT_TEMPLATES_DIR } from '../../../lib/platform/files/template-directory';

const sts = mockClient(STSClient);
const cfn = mockClient(CloudFormationClient);
const T0 = Date.parse('2026-01-01T00:00:00Z');

/** STS's answer: credentials numbered by call, expiring an hour after the (fake) clock. */
function answerAssumeRole(clock: { now: number }) {
  let n = 0;
  sts.on(AssumeRoleCommand).callsFake(async (input: { RoleArn: string }) => {
    n++;
    return {
      Credentials: {
        AccessKeyId: `ASIA${n}`,
        SecretAccessKey: `secret-${n}`,
        SessionToken: `token-${n}`,
        Expiration: new Date(clock.now + 3600_000),
      },
      AssumedRoleUser: { Arn: input.RoleArn, AssumedRoleId: 'x' },
    };
  });
}

beforeEach(() => {
  sts.reset();
  cfn.reset();
});

afterAll(() => {
  sts.restore();
  cfn.restore();
});

test("AssumeRole names the account and region's deployer role, a session name STS accepts, the external id and an hour", async () => {
  // GIVEN
  const clock = { now: T0 };
  answerAssumeRole(clock);
  const creds = new DeployerCredentials({
    daemon: 'worker-stacks ops/host:1',
    externalId: 'fleet-7',
    sts: (region) => new STSClient({ region }),
    now: () => clock.now,
  });

  // WHEN
  const got = await creds.provider('333333333333', 'eu-west-1')();

  // THEN
  expect(sts.commandCalls(AssumeRoleCommand).map((c) => c.args[0].input)).toEqual([
    {
      RoleArn: 'arn:aws:iam::333333333333:role/worker-stacks-deployer-eu-west-1',
      RoleSessionName: 'worker-stacks-ops-host-1',
      ExternalId: 'fleet-7',
      DurationSeconds: 3600,
    },
  ]);
  expect(got).toMatchObject({
    accessKeyId: 'ASIA1',
    secretAccessKey: 'secret-1',
    sessionToken: 'token-1',
    accountId: '333333333333',
  });
});

test.each([
  { parts: ['worker-stacks-host'], want: 'worker-stacks-host' },
  { parts: ['worker stacks', 'prod/eu 1'], want: 'worker-stacks.prod-eu-1' },
  { parts: ['x'], want: 'ws-x' },
  { parts: ['a'.repeat(80)], want: 'a'.repeat(64) },
])('session name $parts → $want (2-64 of [\\w+=,.@-])', ({ parts, want }) => {
  expect(sessionName(...parts)).toBe(want);
  expect(sessionName(...parts)).toMatch(/^[\w+=,.@-]{2,64}$/);
});

test('one session per account and region, shared, and assumed again before it expires (fake clock)', async () => {
  // GIVEN credentials that expire an hour after they are issued, refreshed 10 minutes before
  const clock = { now: T0 };
  answerAssumeRole(clock);
  const creds = new DeployerCredentials({
    sts: (region) => new STSClient({ region }),
    now: () => clock.now,
    refreshBeforeMs: 10 * 60_000,
  });
  const a = creds.provider('333333333333', 'eu-west-1');

  // WHEN it is asked many times, at once and over 49 minutes
  const first = await Promise.all([a(), a(), creds.provider('333333333333', 'eu-west-1')()]);
  clock.now = T0 + 49 * 60_000;
  const later = await a();
  // THEN one AssumeRole served them all
  expect(first.map((c) => c.accessKeyId)).toEqual(['ASIA1', 'ASIA1', 'ASIA1']);
  expect(later.accessKeyId).toBe('ASIA1');
  expect(sts.commandCalls(AssumeRoleCommand)).toHaveLength(1);

  // WHEN less than 10 minutes are left
  clock.now = T0 + 51 * 60_000;
  const refreshed = await a();
  // THEN the role is assumed again, before the old credentials expire
  expect(refreshed.accessKeyId).toBe('ASIA2');
  expect(sts.commandCalls(AssumeRoleCommand)).toHaveLength(2);

  // and another account (or region) is its own session
  await creds.provider('444444444444', 'eu-west-1')();
  await creds.provider('333333333333', 'us-east-1')();
  expect(sts.commandCalls(AssumeRoleCommand).map((c) => c.args[0].input.RoleArn)).toEqual([
    'arn:aws:iam::333333333333:role/worker-stacks-deployer-eu-west-1',
    'arn:aws:iam::333333333333:role/worker-stacks-deployer-eu-west-1',
    'arn:aws:iam::444444444444:role/worker-stacks-deployer-eu-west-1',
    'arn:aws:iam::333333333333:role/worker-stacks-deployer-us-east-1',
  ]);
});

test('the provider is marked memoized, so the SDK keeps no second cache on its own clock', () => {
  const creds = new DeployerCredentials({ sts: (region) => new STSClient({ region }) });
  expect((creds.provider('333333333333', 'eu-west-1') as unknown as { memoized?: boolean }).memoized).toBe(true);
});

test('a refused AssumeRole is an AssumeRoleError naming the role and the bootstrap fix, and is not remembered', async () => {
  // GIVEN STS refuses once (no such role, or no trust), then answers
  const clock = { now: T0 };
  const denied = Object.assign(
    new Error('User: arn:aws:iam::111111111111:role/daemon is not authorized to perform: sts:AssumeRole'),
    { name: 'AccessDenied', $metadata: { httpStatusCode: 403 } },
  );
  sts.on(AssumeRoleCommand).rejectsOnce(denied);
  const creds = new DeployerCredentials({ sts: (region) => new STSClient({ region }), now: () => clock.now });

  // WHEN
  const error = await creds
    .provider('333333333333', 'eu-west-1')()
    .catch((e: unknown) => e as Json);

  // THEN
  expect(error).toBeInstanceOf(AssumeRoleError);
  expect(error.message).toContain(
    'could not assume arn:aws:iam::333333333333:role/worker-stacks-deployer-eu-west-1 (account 333333333333, eu-west-1): User: arn:aws:iam::111111111111:role/daemon is not authorized',
  );
  expect(error.message).toContain(
    'fix: with credentials of account 333333333333, run worker-stacks bootstrap --account 333333333333 --region eu-west-1 --trust',
  );
  expect(error.cause).toBe(denied);
  // and the next call asks STS again
  answerAssumeRole(clock);
  await expect(creds.provider('333333333333', 'eu-west-1')()).resolves.toMatchObject({ accessKeyId: 'ASIA1' });
});

test("wiring: each account gets its own clients with its deployer's credentials, and CreateChangeSet carries the execution role", async () => {
  // GIVEN the reconciler's wiring with assumed roles
  const clock = { now: Date.now() };
  answerAssumeRole(clock);
  cfn.on(CreateChangeSetCommand).resolves({ Id: 'arn:cs' });
  cfn.on(DeleteStackCommand).resolves({});
  const { deps } = createDeps({
    clustersDir: tempDir('wiring-clusters'),
    templatesDir: DEFAULT_TEMPLATES_DIR,
    assumeRole: { roleName: 'fleet-deployer', externalId: 'e1', daemon: 'd1' },
    logDestination: { write: () => true } as never,
  });

  // WHEN one change set is created in each of two accounts
  const req = {
    changeSetName: 'ws-1',
    type: 'CREATE' as const,
    templateBody: '{}',
    capabilities: ['CAPABILITY_IAM'],
    tags: {},
    description: 'd',
    clientToken: 't',
  };
  await deps.aws('eu-west-1', '333333333333').cfn.createChangeSet({ ...req, stackName: 'WorkerStack-a' });
  await deps.aws('eu-west-1', '444444444444').cfn.createChangeSet({ ...req, stackName: 'WorkerStack-b' });
  await deps.aws('eu-west-1', '444444444444').cfn.deleteStack('WorkerStack-b', 'tok');

  // THEN every change set (and the delete) runs as that account's execution role
  expect(
    cfn.commandCalls(CreateChangeSetCommand).map((c) => [c.args[0].input.StackName, c.args[0].input.RoleARN]),
  ).toEqual([
    ['WorkerStack-a', 'arn:aws:iam::333333333333:role/worker-stacks-cfn-exec-eu-west-1'],
    ['WorkerStack-b', 'arn:aws:iam::444444444444:role/worker-stacks-cfn-exec-eu-west-1'],
  ]);
  expect(cfn.commandCalls(DeleteStackCommand)[0].args[0].input.RoleARN).toBe(
    'arn:aws:iam::444444444444:role/worker-stacks-cfn-exec-eu-west-1',
  );
  // and each client signs with its own account's assumed credentials
  const clients = cfn.commandCalls(CreateChangeSetCommand).map((c) => c.thisValue as CloudFormationClient);
  const keys = await Promise.all(clients.map(async (c) => (await c.config.credentials()).accessKeyId));
  expect(keys).toEqual(['ASIA1', 'ASIA2']);
  expect(
    sts
      .commandCalls(AssumeRoleCommand)
      .map((c) => [c.args[0].input.RoleArn, c.args[0].input.ExternalId, c.args[0].input.RoleSessionName]),
  ).toEqual([
    ['arn:aws:iam::333333333333:role/fleet-deployer-eu-west-1', 'e1', 'd1'],
    ['arn:aws:iam::444444444444:role/fleet-deployer-eu-west-1', 'e1', 'd1'],
  ]);
  // and the same account and region reuse one client set
  expect(deps.aws('eu-west-1', '444444444444')).toBe(deps.aws('eu-west-1', '444444444444'));
});

test("wiring --no-assume-role: no AssumeRole, no RoleARN, the account check is the usual credentials' own", async () => {
  // GIVEN
  cfn.on(CreateChangeSetCommand).resolves({ Id: 'arn:cs' });
  sts.on(GetCallerIdentityCommand).resolves({ Account: '111111111111' });
  const { deps } = createDeps({
    clustersDir: tempDir('wiring-clusters'),
    templatesDir: DEFAULT_TEMPLATES_DIR,
    assumeRole: false,
    logDestination: { write: () => true } as never,
  });
  // WHEN
  await deps.aws('eu-west-1', '333333333333').cfn.createChangeSet({
    stackName: 'WorkerStack-a',
    changeSetName: 'ws-1',
    type: 'CREATE',
    templateBody: '{}',
    capabilities: [],
    tags: {},
    description: 'd',
    clientToken: 't',
  });
  const account = await deps.identity.account({ account: '333333333333', region: 'eu-west-1' });
  // THEN
  expect(cfn.commandCalls(CreateChangeSetCommand)[0].args[0].input.RoleARN).toBeUndefined();
  expect(sts.commandCalls(AssumeRoleCommand)).toHaveLength(0);
  expect(account).toBe('111111111111');
});

test('an ExpiredToken answer drops the session, so the next call assumes the role again', async () => {
  // GIVEN a real client (not mocked: the middleware must run) whose endpoint answers ExpiredToken
  cfn.restore();
  const clock = { now: T0 };
  answerAssumeRole(clock);
  const creds = new DeployerCredentials({ sts: (region) => new STSClient({ region }), now: () => clock.now });
  let expired = 0;
  const xml =
    '<ErrorResponse><Error><Type>Sender</Type><Code>ExpiredToken</Code><Message>The security token included in the request is expired</Message></Error><RequestId>r1</RequestId></ErrorResponse>';
  const requestHandler = {
    handle: async () => ({
      response: { statusCode: 400, headers: { 'content-type': 'text/xml' }, body: Readable.from([Buffer.from(xml)]) },
    }),
  };
  const clients = awsClients({
    region: 'eu-west-1',
    maxAttempts: 1,
    credentials: creds.provider('333333333333', 'eu-west-1'),
    onExpiredSession: () => {
      expired++;
      creds.invalidate('333333333333', 'eu-west-1');
    },
  });
  (clients.cloudFormation.config as { requestHandler: unknown }).requestHandler = requestHandler;

  // WHEN
  const error = await clients.cloudFormation.send(new DescribeStacksCommand({})).catch((e: unknown) => e as Json);

  // THEN the caller still sees the error, and the session is dropped: the next call assumes the role again
  expect(error.name).toBe('ExpiredToken');
  expect(expired).toBe(1);
  expect(sts.commandCalls(AssumeRoleCommand)).toHaveLength(1);
  await expect(creds.provider('333333333333', 'eu-west-1')()).resolves.toMatchObject({ accessKeyId: 'ASIA2' });
  expect(sts.commandCalls(AssumeRoleCommand)).toHaveLength(2);
});
