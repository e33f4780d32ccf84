import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  ChangeSetNotFoundException,
  CloudFormationClient,
  CreateChangeSetCommand,
  DescribeChangeSetCommand,
  DescribeStackEventsCommand,
  DescribeStacksCommand,
  ExecuteChangeSetCommand,
} from '@aws-sdk/client-cloudformation';
import { HeadObjectCommand, NotFound, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { stringify } from 'yaml';
import { S3Publisher } from '../../../lib/platform/aws/s3-publisher';
import { ReconcilerDeps } from '../../../lib/engines/reconciler/workflow/context';
import { Logger } from '../../../lib/core/logger';
import { TEMPLATE_BODY_LIMIT } from '../../../lib/engines/synthesis/synthesize';
import { reconcileCluster } from '../../../lib/engines/reconciler/compose/reconcile-cluster';
import { CLUSTER_TAG, configBucketName, OWNER_TAG } from '../../../lib/core/naming';
import { FileStore } from '../../../lib/adapters/stores/file-store';
import { rawExample, tempDir } from '../../helpers/clusters';
import { fastSdkCloudFormation, sdkStack, stackNotFound } from '../../helpers/sdk-mocks';
import { DEFAULT_TEMPLATES_DIR } from '../../../lib/platform/files/template-directory';

// The change set the reconcile workflow asks for, through the real SDK adapters with mocked clients (no network).

const cfnMock = mockClient(CloudFormationClient);
const s3Mock = mockClient(S3Client);
const silent: Logger = { info: () => undefined, warn: () => undefined, error: () => undefined, child: () => silent };
/** CloudFormation's own constraints on names and idempotency tokens. */
const CHANGE_SET_NAME = /^[a-zA-Z][-a-zA-Z0-9]{0,127}$/;
const CLIENT_TOKEN = /^[a-zA-Z0-9][-a-zA-Z0-9]{0,127}$/;

beforeEach(() => {
  cfnMock.reset();
  s3Mock.reset();
  s3Mock.on(HeadObjectCommand).rejects(new NotFound({ message: 'Not Found', $metadata: { httpStatusCode: 404 } }));
  s3Mock.on(PutObjectCommand).resolves({});
  cfnMock
    .on(CreateChangeSetCommand)
    .resolves({ Id: 'arn:aws:cloudformation:eu-west-1:1:changeSet/ws/1', StackId: 'arn:stack' });
  // As CloudFormation answers: the change set asked for, by its name.
  cfnMock.on(DescribeChangeSetCommand).callsFake((input: { ChangeSetName?: string }) => ({
    ChangeSetId: `arn:aws:cloudformation:eu-west-1:1:changeSet/${input.ChangeSetName}/1`,
    ChangeSetName: input.ChangeSetName,
    Status: 'CREATE_COMPLETE',
    ExecutionStatus: 'AVAILABLE',
    Changes: [{ Type: 'Resource' }],
  }));
  cfnMock.on(ExecuteChangeSetCommand).resolves({});
  cfnMock.on(DescribeStackEventsCommand).resolves({ StackEvents: [] });
});
afterAll(() => {
  cfnMock.restore();
  s3Mock.restore();
});

/** A clusters directory with one example object, and deps as wiring.ts builds them, the SDK clients mocked. */
function setup(example: string) {
  const raw = rawExample(example);
  const dir = tempDir('shape');
  fs.writeFileSync(path.join(dir, `${raw.metadata.name}.yaml`), stringify(raw));
  const { account, region } = raw.spec;
  const deps: ReconcilerDeps = {
    store: new FileStore({ clustersDir: dir }),
    aws: (r) => ({ cfn: fastSdkCloudFormation(r, 10), publisher: new S3Publisher(new S3Client({ region: r }), r) }),
    identity: { account: async () => account },
    templatesDir: DEFAULT_TEMPLATES_DIR,
    workDir: path.join(dir, 'cdk.out'),
    code: 'test-code',
    log: silent,
    now: () => new Date(),
    backoff: { baseMs: 1000, maxMs: 60_000, random: () => 0.5 },
    changeSetTimeoutMs: 30_000,
    dryRun: false,
    nag: false,
    maxRecoveryAttempts: 3,
  };
  const run = async () => reconcileCluster((await deps.store.get(raw.metadata.name))!, deps);
  return {
    name: raw.metadata.name as string,
    stackName: `WorkerStack-${raw.metadata.name}`,
    bucket: configBucketName(account, region),
    region: region as string,
    run,
  };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any command's input
const inputs = (command: any): any[] => cfnMock.commandCalls(command).map((x) => x.args[0].input);

test('a new stack gets ChangeSetType CREATE, CAPABILITY_IAM, the cluster and owner tags, an inline template and deterministic tokens', async () => {
  // GIVEN a cluster whose stack does not exist yet
  const c = setup('staging-us1');
  cfnMock
    .on(DescribeStacksCommand)
    .callsFake((input) =>
      cfnMock.commandCalls(ExecuteChangeSetCommand).length
        ? { Stacks: [sdkStack(c.stackName, 'CREATE_COMPLETE')] }
        : Promise.reject(stackNotFound(input.StackName)),
    );

  // WHEN it is reconciled, twice from scratch (as after a crash before anything was recorded)
  const outcome = await c.run();
  const first = {
    creates: inputs(CreateChangeSetCommand),
    execs: inputs(ExecuteChangeSetCommand),
    puts: s3Mock.commandCalls(PutObjectCommand).map((x) => x.args[0].input),
  };
  cfnMock.resetHistory();
  const again = await setup('staging-us1').run();
  const second = { creates: inputs(CreateChangeSetCommand), execs: inputs(ExecuteChangeSetCommand) };

  // THEN the change set creates the stack, with every field CloudFormation needs (and the reconcile requeues to watch it)
  expect(outcome.result).toBe('waiting');
  expect(again.result).toBe('waiting');
  expect(first.creates).toHaveLength(1);
  const input = first.creates[0];
  expect(input).toMatchObject({
    StackName: c.stackName,
    ChangeSetType: 'CREATE',
    Capabilities: ['CAPABILITY_IAM'],
    Tags: [
      { Key: CLUSTER_TAG, Value: c.name },
      { Key: OWNER_TAG, Value: `file:${c.name}` },
    ],
  });
  expect(input.ChangeSetName).toMatch(CHANGE_SET_NAME);
  expect(input.ClientToken).toMatch(CLIENT_TOKEN);
  expect(input.Description!.length).toBeLessThanOrEqual(1024);

  // AND the template goes inline (it is under the limit) and is the synthesized stack
  expect(input.TemplateURL).toBeUndefined();
  expect(Buffer.byteLength(input.TemplateBody)).toBeLessThan(TEMPLATE_BODY_LIMIT);
  expect(JSON.parse(input.TemplateBody).Resources).toBeDefined();

  // AND it is executed by name with a token
  expect(first.execs).toHaveLength(1);
  expect(first.execs[0]).toMatchObject({ StackName: c.stackName, ChangeSetName: input.ChangeSetName });
  expect(first.execs[0].ClientRequestToken).toMatch(CLIENT_TOKEN);

  // AND the same inputs give the same change set name and tokens: a retried step is idempotent
  expect(second.creates).toEqual([input]);
  expect(second.execs).toEqual(first.execs);

  // AND only the config object was uploaded (the template went inline)
  expect(first.puts.map((p) => p.Key)).toEqual([
    expect.stringMatching(new RegExp(`^clusters/${c.name}/[0-9a-f]{64}\\.yaml$`)),
  ]);
});

test('an existing stack gets ChangeSetType UPDATE, after looking for a change set of the same name', async () => {
  // GIVEN a cluster whose stack exists, complete, and no change set of that name yet
  const c = setup('staging-us1');
  cfnMock.on(DescribeStacksCommand).callsFake(() => ({
    Stacks: [
      sdkStack(
        c.stackName,
        cfnMock.commandCalls(ExecuteChangeSetCommand).length ? 'UPDATE_COMPLETE' : 'CREATE_COMPLETE',
      ),
    ],
  }));
  cfnMock
    .on(DescribeChangeSetCommand)
    .rejectsOnce(new ChangeSetNotFoundException({ message: 'ChangeSet [ws] does not exist', $metadata: {} }))
    .resolves({
      ChangeSetId: 'arn:cs',
      ChangeSetName: 'ws',
      Status: 'CREATE_COMPLETE',
      ExecutionStatus: 'AVAILABLE',
      Changes: [{ Type: 'Resource' }],
    });

  // WHEN it is reconciled
  const outcome = await c.run();

  // THEN one UPDATE change set, executed by name with a token (then requeued: the stack is watched, not waited on)
  expect(outcome.result).toBe('waiting');
  const creates = cfnMock.commandCalls(CreateChangeSetCommand).map((x) => x.args[0].input);
  expect(creates).toHaveLength(1);
  expect(creates[0]).toMatchObject({
    StackName: c.stackName,
    ChangeSetType: 'UPDATE',
    Capabilities: ['CAPABILITY_IAM'],
    Tags: [
      { Key: CLUSTER_TAG, Value: c.name },
      { Key: OWNER_TAG, Value: `file:${c.name}` },
    ],
  });
  expect(cfnMock.commandCalls(DescribeChangeSetCommand)[0].args[0].input).toEqual({
    StackName: c.stackName,
    ChangeSetName: creates[0].ChangeSetName,
  });
  const exec = cfnMock.commandCalls(ExecuteChangeSetCommand);
  expect(exec).toHaveLength(1);
  expect(exec[0].args[0].input.ClientRequestToken).toMatch(CLIENT_TOKEN);
});

test('a template over 51,200 bytes is uploaded to S3 and goes as TemplateURL, not TemplateBody', async () => {
  // GIVEN edge-ap1 (many listeners and rules), whose stack does not exist yet
  const c = setup('edge-ap1');
  cfnMock
    .on(DescribeStacksCommand)
    .callsFake((input) =>
      cfnMock.commandCalls(ExecuteChangeSetCommand).length
        ? { Stacks: [sdkStack(c.stackName, 'CREATE_COMPLETE')] }
        : Promise.reject(stackNotFound(input.StackName)),
    );

  // WHEN it is reconciled
  const outcome = await c.run();

  // THEN the template was put in the config bucket, and is over the inline limit (else this test proves nothing)
  expect(outcome.result).toBe('waiting');
  const puts = s3Mock.commandCalls(PutObjectCommand).map((x) => x.args[0].input);
  const template = puts.find((p) => p.Key!.endsWith('.json'));
  expect(template).toMatchObject({
    Bucket: c.bucket,
    Key: expect.stringMatching(new RegExp(`^clusters/${c.name}/[0-9a-f]{64}\\.json$`)),
    ChecksumAlgorithm: 'SHA256',
  });
  expect(Buffer.from(template!.Body as Uint8Array).length).toBeGreaterThan(TEMPLATE_BODY_LIMIT);
  expect(puts.map((p) => p.Key!.split('.').pop()).sort()).toEqual(['ign', 'json']);

  // AND the change set reads it from there
  const input = cfnMock.commandCalls(CreateChangeSetCommand)[0].args[0].input;
  expect(input.TemplateBody).toBeUndefined();
  expect(input.TemplateURL).toBe(`https://s3.${c.region}.amazonaws.com/${c.bucket}/${template!.Key}`);
  expect(input.ChangeSetType).toBe('CREATE');
});
