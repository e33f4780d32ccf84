import { complete, FakeCloudFormation, fail, NO_CHANGES_REASON, stuck } from '../../fakes/fake-cloudformation';
import { FakeClock } from '../../fakes/fake-ports';

/** The fake behaves like CloudFormation where the reconciler depends on it (so that the other tests mean something). */

const template = (checksum: string, extra = {}) =>
  JSON.stringify({
    Resources: { Topic: { Type: 'AWS::SNS::Topic', Properties: { DisplayName: checksum } }, ...extra },
    Outputs: { ConfigChecksum: { Value: checksum }, TopicArn: { Value: { Ref: 'Topic' } } },
  });
const request = (name: string, type: 'CREATE' | 'UPDATE', body: string) => ({
  stackName: 'S',
  changeSetName: name,
  type,
  templateBody: body,
  capabilities: [],
  tags: {},
  description: '',
  clientToken: `${name}-create`,
});
const WAIT = { timeoutMs: 60_000 };

let clock: FakeClock;
let cfn: FakeCloudFormation;
beforeEach(() => {
  clock = new FakeClock();
  cfn = new FakeCloudFormation({ clock });
});

test('a CREATE change set on a missing stack makes it REVIEW_IN_PROGRESS until executed; outputs come from the template', async () => {
  // GIVEN no stack WHEN a CREATE change set is made
  await cfn.createChangeSet(request('c1', 'CREATE', template('aaa')));
  // THEN the stack exists, under review, and the change set is ready
  expect(cfn.peek('S')?.status).toBe('REVIEW_IN_PROGRESS');
  expect(await cfn.waitForChangeSet('S', 'c1')).toMatchObject({
    status: 'CREATE_COMPLETE',
    executionStatus: 'AVAILABLE',
  });
  await expect(cfn.createChangeSet(request('c2', 'UPDATE', template('aaa')))).rejects.toThrow(/does not exist/);

  // WHEN it is executed and waited on
  await cfn.executeChangeSet('S', 'c1', 't1');
  const final = await cfn.waitForStack('S', WAIT);

  // THEN complete, the literal output resolved, the change set EXECUTE_COMPLETE, one poll of the clock gone
  expect(final).toMatchObject({ status: 'CREATE_COMPLETE', outputs: { ConfigChecksum: 'aaa' } });
  expect((await cfn.describeChangeSet('S', 'c1'))?.executionStatus).toBe('EXECUTE_COMPLETE');
  expect(clock.now().getTime()).toBe(new FakeClock().ms + 5000);
});

test("a change set equal to the live template FAILs with CloudFormation's no-changes reason", async () => {
  // GIVEN a live stack
  await cfn.createChangeSet(request('c1', 'CREATE', template('aaa')));
  await cfn.executeChangeSet('S', 'c1', 't1');
  await cfn.waitForStack('S', WAIT);
  // WHEN a change set of the same template is made
  await cfn.createChangeSet(request('c2', 'UPDATE', template('aaa')));
  // THEN it failed with the reason the reconciler recognizes, and cannot be executed
  expect(await cfn.describeChangeSet('S', 'c2')).toMatchObject({
    status: 'FAILED',
    executionStatus: 'UNAVAILABLE',
    statusReason: NO_CHANGES_REASON,
  });
  await expect(cfn.executeChangeSet('S', 'c2', 't2')).rejects.toMatchObject({
    name: 'InvalidChangeSetStatusException',
  });
});

test('a failed update rolls back to the old outputs, with the failing resource in the events; the change set is EXECUTE_FAILED', async () => {
  // GIVEN a live stack and an update scripted to fail on a resource
  await cfn.createChangeSet(request('c1', 'CREATE', template('aaa')));
  await cfn.executeChangeSet('S', 'c1', 't1');
  await cfn.waitForStack('S', WAIT);
  cfn.script('S', fail({ logicalId: 'Topic', resourceType: 'AWS::SNS::Topic', reason: 'boom' }, 2));
  await cfn.createChangeSet(request('c2', 'UPDATE', template('bbb')));
  await cfn.executeChangeSet('S', 'c2', 't2');
  // WHEN waited on, collecting events
  const events: string[] = [];
  const final = await cfn.waitForStack('S', { ...WAIT, onEvent: (e) => events.push(`${e.logicalId} ${e.status}`) });
  // THEN
  expect(final).toMatchObject({ status: 'UPDATE_ROLLBACK_COMPLETE', outputs: { ConfigChecksum: 'aaa' } });
  expect(events).toEqual(['Topic UPDATE_FAILED', 'S UPDATE_ROLLBACK_IN_PROGRESS', 'S UPDATE_ROLLBACK_COMPLETE']);
  expect((await cfn.describeChangeSet('S', 'c2'))?.executionStatus).toBe('EXECUTE_FAILED');
  await expect(cfn.executeChangeSet('S', 'c2', 't3')).rejects.toMatchObject({
    name: 'InvalidChangeSetStatusException',
  });
});

test('a stuck operation outlives the wait timeout and refuses another update until released', async () => {
  // GIVEN a create that never finishes by itself
  await cfn.createChangeSet(request('c1', 'CREATE', template('aaa')));
  cfn.script('S', stuck());
  await cfn.executeChangeSet('S', 'c1', 't1');
  // WHEN waited on for 20 s THEN still in progress after exactly 20 s of clock; no update accepted; release ends it
  expect(await cfn.waitForStack('S', { timeoutMs: 20_000 })).toMatchObject({ status: 'CREATE_IN_PROGRESS' });
  expect(cfn.count('waitForStack')).toBe(1);
  expect(clock.now().getTime()).toBe(new FakeClock().ms + 20_000);
  await expect(cfn.createChangeSet(request('c2', 'UPDATE', template('bbb')))).rejects.toThrow(
    /CREATE_IN_PROGRESS state and can not be updated/,
  );
  cfn.release('S');
  expect(cfn.peek('S')?.status).toBe('CREATE_COMPLETE');
});

test('throttling hits the first N calls of one method, counted like every other call; a deleted stack is found by id only', async () => {
  // GIVEN two throttled listings WHEN listing three times THEN two ThrottlingExceptions, then the answer; three calls counted
  cfn.throttle('listStacks', 2);
  await expect(cfn.listStacks()).rejects.toMatchObject({ name: 'ThrottlingException' });
  await expect(cfn.listStacks()).rejects.toMatchObject({ name: 'ThrottlingException' });
  expect((await cfn.listStacks()).size).toBe(0);
  expect(cfn.count('listStacks')).toBe(3);

  // GIVEN a rolled-back stack WHEN deleted THEN gone by name and from the listing, DELETE_COMPLETE by id
  cfn.script('S', complete(0));
  const id = cfn.seed('S', { status: 'ROLLBACK_COMPLETE' });
  await cfn.deleteStack(id, 'd1');
  expect(await cfn.describeStack('S')).toBeUndefined();
  expect(await cfn.describeStack(id)).toMatchObject({ status: 'DELETE_COMPLETE' });
  expect((await cfn.listStacks()).size).toBe(0);
  expect(cfn.mutatingCalls()).toBe(1);
});
