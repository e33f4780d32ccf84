import {
  CloudFormationClient,
  ContinueUpdateRollbackCommand,
  CreateChangeSetCommand,
  DeleteStackCommand,
  DescribeStackEventsCommand,
  DescribeStacksCommand,
  ExecuteChangeSetCommand,
  ListStacksCommand,
} from '@aws-sdk/client-cloudformation';
import { mockClient } from 'aws-sdk-client-mock';
import { IN_PROGRESS_STATUSES, StackEvent } from '../../../lib/model/ports/cloudformation-port';
import { SdkCloudFormation } from '../../../lib/platform/aws/sdk-cloudformation';
import { fastSdkCloudFormation, sdkStack, stackNotFound } from '../../helpers/sdk-mocks';
import { Json } from '../../helpers/json';

// The CloudFormation adapter's requests, as the SDK would send them (no network).

const cfnMock = mockClient(CloudFormationClient);

beforeEach(() => cfnMock.reset());
afterAll(() => cfnMock.restore());

const REQUEST = {
  stackName: 'WorkerStack-a',
  changeSetName: 'ws-0123456789abcdef0123456789abcdef',
  templateBody: '{"Resources":{}}',
  capabilities: ['CAPABILITY_IAM'],
  tags: { team: 'platform', 'worker-stacks.io/cluster': 'a' },
  description: 'worker-stacks generation 3 config 0123456789ab',
  clientToken: 'ws-0123456789abcdef0123456789abcdef-create',
};

test.each(['CREATE', 'UPDATE'] as const)(
  'CreateChangeSet carries ChangeSetType %s, the capabilities, the tags (sorted) and the client token',
  async (type) => {
    // GIVEN a change set request
    cfnMock.on(CreateChangeSetCommand).resolves({ Id: 'arn:cs', StackId: 'arn:stack' });

    // WHEN it is created
    const id = await fastSdkCloudFormation().createChangeSet({ ...REQUEST, type });

    // THEN exactly one request, with every field as CloudFormation expects it
    expect(id).toBe('arn:cs');
    const calls = cfnMock.commandCalls(CreateChangeSetCommand);
    expect(calls).toHaveLength(1);
    expect(calls[0].args[0].input).toEqual({
      StackName: 'WorkerStack-a',
      ChangeSetName: REQUEST.changeSetName,
      ChangeSetType: type,
      TemplateBody: REQUEST.templateBody,
      TemplateURL: undefined,
      Capabilities: ['CAPABILITY_IAM'],
      Tags: [
        { Key: 'team', Value: 'platform' },
        { Key: 'worker-stacks.io/cluster', Value: 'a' },
      ],
      Description: REQUEST.description,
      ClientToken: REQUEST.clientToken,
      // no rollback alarms asked for: an empty list, which clears any the stack had (test/platform/aws/rollback-configuration.test.ts)
      RollbackConfiguration: { RollbackTriggers: [], MonitoringTimeInMinutes: 0 },
    });
  },
);

test('a template URL goes as TemplateURL, without TemplateBody', async () => {
  // GIVEN a request for a large template
  cfnMock.on(CreateChangeSetCommand).resolves({ Id: 'arn:cs' });

  // WHEN it is created
  await fastSdkCloudFormation().createChangeSet({
    ...REQUEST,
    type: 'UPDATE',
    templateBody: undefined,
    templateUrl: 'https://s3.eu-west-1.amazonaws.com/b/k.json',
  });

  // THEN only the URL is sent
  const input = cfnMock.commandCalls(CreateChangeSetCommand)[0].args[0].input;
  expect(input.TemplateURL).toBe('https://s3.eu-west-1.amazonaws.com/b/k.json');
  expect(input.TemplateBody).toBeUndefined();
});

test('ExecuteChangeSet, DeleteStack and ContinueUpdateRollback carry their ClientRequestToken', async () => {
  // GIVEN a CloudFormation that accepts everything
  cfnMock
    .on(ExecuteChangeSetCommand)
    .resolves({})
    .on(DeleteStackCommand)
    .resolves({})
    .on(ContinueUpdateRollbackCommand)
    .resolves({});
  const cfn = fastSdkCloudFormation();

  // WHEN each is called
  await cfn.executeChangeSet('WorkerStack-a', 'ws-1', 'ws-1-exec');
  await cfn.deleteStack('arn:stack', 'ws-delete-1');
  await cfn.continueUpdateRollback('arn:stack', 'ws-recover-0-1');

  // THEN each request names the stack and the token
  expect(cfnMock.commandCalls(ExecuteChangeSetCommand)[0].args[0].input).toEqual({
    StackName: 'WorkerStack-a',
    ChangeSetName: 'ws-1',
    ClientRequestToken: 'ws-1-exec',
  });
  expect(cfnMock.commandCalls(DeleteStackCommand)[0].args[0].input).toEqual({
    StackName: 'arn:stack',
    ClientRequestToken: 'ws-delete-1',
  });
  expect(cfnMock.commandCalls(ContinueUpdateRollbackCommand)[0].args[0].input).toEqual({
    StackName: 'arn:stack',
    ClientRequestToken: 'ws-recover-0-1',
  });
});

test('listStacks follows NextToken through every page, one DescribeStacks call per page and none per stack', async () => {
  // GIVEN three pages of stacks
  cfnMock
    .on(DescribeStacksCommand, { NextToken: undefined })
    .resolves({ Stacks: [sdkStack('WorkerStack-a'), sdkStack('WorkerStack-b', 'UPDATE_IN_PROGRESS')], NextToken: 't1' })
    .on(DescribeStacksCommand, { NextToken: 't1' })
    .resolves({ Stacks: [sdkStack('WorkerStack-c', 'ROLLBACK_COMPLETE')], NextToken: 't2' })
    .on(DescribeStacksCommand, { NextToken: 't2' })
    .resolves({
      Stacks: [{ ...sdkStack('WorkerStack-d'), Outputs: [{ OutputKey: 'ConfigChecksum', OutputValue: 'abc' }] }],
    });

  // (the SDK's paginator reuses one input object, so the token is read when each call is sent)
  const sent: unknown[] = [];
  const client = fastSdkCloudFormation();
  // eslint-disable-next-line @typescript-eslint/unbound-method -- called below with the client as `this`
  const send = CloudFormationClient.prototype.send;
  const spy = jest.spyOn(CloudFormationClient.prototype, 'send').mockImplementation(function (
    this: CloudFormationClient,
    command: Json,
    ...rest: Json[]
  ) {
    if (command instanceof DescribeStacksCommand) sent.push({ ...command.input });
    return (send as Json).call(this, command, ...rest);
  });

  // WHEN the stacks are listed
  const listed = await client.listStacks();
  spy.mockRestore();

  // THEN every page was read, in order, without a stack name
  expect(sent).toEqual([{}, { NextToken: 't1' }, { NextToken: 't2' }]);
  expect(cfnMock.commandCalls(DescribeStacksCommand)).toHaveLength(3);
  expect([...listed.keys()]).toEqual(['WorkerStack-a', 'WorkerStack-b', 'WorkerStack-c', 'WorkerStack-d']);
  expect(listed.get('WorkerStack-b')?.status).toBe('UPDATE_IN_PROGRESS');
  expect(listed.get('WorkerStack-d')?.outputs).toEqual({ ConfigChecksum: 'abc' });
});

test('listStacksInProgress asks ListStacks for the in-progress statuses only, through every page, without outputs', async () => {
  // GIVEN two pages of stack summaries
  const at = new Date('2026-11-23T06:00:00Z');
  cfnMock
    .on(ListStacksCommand, { NextToken: undefined })
    .resolves({
      StackSummaries: [
        {
          StackName: 'WorkerStack-a',
          StackId: 'arn:a',
          StackStatus: 'UPDATE_IN_PROGRESS',
          CreationTime: at,
          LastUpdatedTime: at,
        },
      ],
      NextToken: 't1',
    })
    .on(ListStacksCommand, { NextToken: 't1' })
    .resolves({
      StackSummaries: [
        { StackName: 'WorkerStack-b', StackId: 'arn:b', StackStatus: 'CREATE_IN_PROGRESS', CreationTime: at },
      ],
    });

  // WHEN the stacks in progress are listed
  const listed = await fastSdkCloudFormation().listStacksInProgress();

  // THEN both pages were read with the status filter, and each summary has no outputs (ListStacks has none)
  const calls = cfnMock.commandCalls(ListStacksCommand);
  expect(calls).toHaveLength(2);
  for (const c of calls)
    expect([...(c.args[0].input.StackStatusFilter ?? [])].sort()).toEqual([...IN_PROGRESS_STATUSES].sort());
  expect([...listed.values()]).toEqual([
    {
      name: 'WorkerStack-a',
      id: 'arn:a',
      status: 'UPDATE_IN_PROGRESS',
      statusReason: undefined,
      outputs: {},
      lastUpdated: at.toISOString(),
    },
    {
      name: 'WorkerStack-b',
      id: 'arn:b',
      status: 'CREATE_IN_PROGRESS',
      statusReason: undefined,
      outputs: {},
      lastUpdated: undefined,
    },
  ]);
  expect(IN_PROGRESS_STATUSES.every((st) => st.endsWith('_IN_PROGRESS'))).toBe(true);
});

test('describeStack: a missing stack is undefined, any other error is thrown', async () => {
  // GIVEN one stack that does not exist and one call that is denied
  cfnMock
    .on(DescribeStacksCommand, { StackName: 'WorkerStack-gone' })
    .rejects(stackNotFound('WorkerStack-gone'))
    .on(DescribeStacksCommand, { StackName: 'WorkerStack-denied' })
    .rejects(
      Object.assign(new Error('User is not authorized to perform: cloudformation:DescribeStacks'), {
        name: 'AccessDenied',
      }),
    );

  // WHEN each is described
  // THEN the missing one is undefined and the denial surfaces
  await expect(fastSdkCloudFormation().describeStack('WorkerStack-gone')).resolves.toBeUndefined();
  await expect(fastSdkCloudFormation().describeStack('WorkerStack-denied')).rejects.toThrow(/not authorized/);
});

test('waitForStack waits with the SDK waiter on the stack id and reports each new stack event once, oldest first', async () => {
  // GIVEN a stack that is updating, then complete, with events appearing newest first
  const ev = (id: string, status: string) => ({
    EventId: id,
    StackId: 'arn:s',
    StackName: 'WorkerStack-a',
    LogicalResourceId: id,
    ResourceType: 'AWS::EC2::LaunchTemplate',
    ResourceStatus: status as never,
    Timestamp: new Date(0),
  });
  cfnMock
    .on(DescribeStacksCommand)
    .resolvesOnce({ Stacks: [sdkStack('WorkerStack-a', 'UPDATE_IN_PROGRESS')] })
    .resolvesOnce({ Stacks: [sdkStack('WorkerStack-a', 'UPDATE_IN_PROGRESS')] })
    .resolves({ Stacks: [sdkStack('WorkerStack-a', 'UPDATE_COMPLETE')] });
  cfnMock
    .on(DescribeStackEventsCommand)
    .resolvesOnce({ StackEvents: [ev('e1', 'UPDATE_IN_PROGRESS')] })
    .resolves({
      StackEvents: [ev('e3', 'UPDATE_COMPLETE'), ev('e2', 'UPDATE_IN_PROGRESS'), ev('e1', 'UPDATE_IN_PROGRESS')],
    });
  const seen: StackEvent[] = [];

  // WHEN it waits
  const final = await fastSdkCloudFormation().waitForStack('WorkerStack-a', {
    timeoutMs: 30_000,
    onEvent: (e) => seen.push(e),
  });

  // THEN it ends complete, saw e2 then e3 (e1 was there before the wait), and polled by stack id
  expect(final?.status).toBe('UPDATE_COMPLETE');
  expect(seen.map((e) => e.id)).toEqual(['e2', 'e3']);
  const polled = cfnMock.commandCalls(DescribeStacksCommand).map((c) => c.args[0].input.StackName);
  expect(polled[0]).toBe('WorkerStack-a');
  expect(polled.slice(1).every((n) => n === sdkStack('WorkerStack-a').StackId)).toBe(true);
});

test('a create rollback found in progress (after a restart) is waited on until ROLLBACK_COMPLETE, not until the timeout', async () => {
  // GIVEN a stack rolling back a failed create, which completes its rollback on the next poll
  cfnMock
    .on(DescribeStacksCommand)
    .resolvesOnce({ Stacks: [sdkStack('WorkerStack-a', 'ROLLBACK_IN_PROGRESS')] })
    .resolvesOnce({ Stacks: [sdkStack('WorkerStack-a', 'ROLLBACK_IN_PROGRESS')] })
    .resolves({ Stacks: [sdkStack('WorkerStack-a', 'ROLLBACK_COMPLETE')] });
  const started = Date.now();

  // WHEN it is waited on with a long timeout
  const final = await fastSdkCloudFormation().waitForStack('WorkerStack-a', { timeoutMs: 20_000 });

  // THEN the wait ends at ROLLBACK_COMPLETE, after a poll or two
  expect(final?.status).toBe('ROLLBACK_COMPLETE');
  expect(Date.now() - started).toBeLessThan(5_000);
});

test('a stack stuck in progress is polled at the waiter pace up to the timeout, never in a tight loop', async () => {
  // GIVEN a stack that stays UPDATE_IN_PROGRESS, and waiter delays of 2 s
  cfnMock.on(DescribeStacksCommand).resolves({ Stacks: [sdkStack('WorkerStack-a', 'UPDATE_IN_PROGRESS')] });
  cfnMock.on(DescribeStackEventsCommand).resolves({ StackEvents: [] });
  const cfn = new SdkCloudFormation({
    client: new CloudFormationClient({ region: 'eu-west-1' }),
    waiterDelaySeconds: { min: 2, max: 2 },
    eventPollMs: 500,
  });
  const started = Date.now();

  // WHEN it is waited on for 3.5 s
  const final = await cfn.waitForStack('WorkerStack-a', { timeoutMs: 3_500, onEvent: () => undefined });

  // THEN it gives up at the timeout, having asked a handful of times (a poll every 2 s, events every 0.5 s)
  expect(final?.status).toBe('UPDATE_IN_PROGRESS');
  expect(Date.now() - started).toBeGreaterThanOrEqual(3_400);
  expect(cfnMock.commandCalls(DescribeStacksCommand).length).toBeLessThanOrEqual(6);
  expect(cfnMock.commandCalls(DescribeStackEventsCommand).length).toBeLessThanOrEqual(12);
});
