import { ChangeSetRequest, CloudFormationPort } from '../../../lib/model/ports/cloudformation-port';

/**
 * What the reconciler relies on from a CloudFormation port, as one suite: run against the deterministic fake (which
 * the reconciler's tests use) and against the SDK adapter on moto, so the fake cannot drift from what the adapter
 * does on an emulator. What moto cannot show (stacks that stay in progress, rollbacks) stays the fake's alone.
 */
export interface PortUnderTest {
  readonly port: CloudFormationPort;
  /** Lets running operations end (the fake's clock moves; moto has none to wait for). */
  settle(): Promise<void>;
  stop(): Promise<void>;
}

const CHECKSUM_A = 'a'.repeat(64);
const CHECKSUM_B = 'b'.repeat(64);

/** A small stack every emulator can create: one topic and the output the reconciler reads. */
export function template(checksum: string, topic = 'ws-contract'): string {
  return JSON.stringify({
    Resources: { Topic: { Type: 'AWS::SNS::Topic', Properties: { TopicName: topic } } },
    Outputs: { ConfigChecksum: { Value: checksum } },
  });
}

const request = (stackName: string, type: 'CREATE' | 'UPDATE', body: string, n: number): ChangeSetRequest => ({
  stackName,
  changeSetName: `ws-contract-${n}`,
  type,
  templateBody: body,
  capabilities: ['CAPABILITY_IAM'],
  tags: { 'worker-stacks.io/cluster': 'contract' },
  description: 'contract',
  clientToken: `ws-contract-${n}`,
});

/** What an implementation cannot show, said once and tested where it can be. */
export interface Gaps {
  /** moto renders no LastUpdatedTime for stacks: drift by update time is tested on the fake. */
  readonly lastUpdatedTime?: boolean;
}

export function cloudFormationPortContract(name: string, start: () => Promise<PortUnderTest>, gaps: Gaps = {}): void {
  describe(`CloudFormation port contract: ${name}`, () => {
    let t: PortUnderTest;
    beforeEach(async () => {
      t = await start();
    });
    afterEach(() => t.stop());

    async function apply(stackName: string, type: 'CREATE' | 'UPDATE', body: string, n: number): Promise<void> {
      await t.port.createChangeSet(request(stackName, type, body, n));
      const cs = await t.port.waitForChangeSet(stackName, `ws-contract-${n}`, 60_000);
      expect(cs.status).toBe('CREATE_COMPLETE');
      await t.port.executeChangeSet(stackName, `ws-contract-${n}`, `ws-contract-${n}-exec`);
      await t.settle();
    }

    test('a stack that does not exist is undefined, in a listing absent', async () => {
      expect(await t.port.describeStack('WorkerStack-nobody')).toBeUndefined();
      expect((await t.port.listStacks()).has('WorkerStack-nobody')).toBe(false);
      expect((await t.port.listStacksInProgress()).has('WorkerStack-nobody')).toBe(false);
    });

    test('created through a change set: listed and described complete with its output, its template readable, not in progress', async () => {
      // WHEN a stack is created from a change set and its operation has ended
      await apply('WorkerStack-c1', 'CREATE', template(CHECKSUM_A, 'ws-c1'), 1);

      // THEN the listing and describe agree: complete, with the ConfigChecksum output; the template carries it too
      const described = await t.port.describeStack('WorkerStack-c1');
      const listed = (await t.port.listStacks()).get('WorkerStack-c1');
      expect(described).toMatchObject({
        name: 'WorkerStack-c1',
        status: 'CREATE_COMPLETE',
        outputs: { ConfigChecksum: CHECKSUM_A },
      });
      expect(listed).toMatchObject({
        id: described!.id,
        status: 'CREATE_COMPLETE',
        outputs: { ConfigChecksum: CHECKSUM_A },
      });
      expect(described!.id).toMatch(/^arn:aws:cloudformation:[a-z0-9-]+:\d{12}:stack\/WorkerStack-c1\//);
      expect(JSON.parse((await t.port.getTemplate(described!.id))!).Outputs.ConfigChecksum.Value).toBe(CHECKSUM_A);
      expect((await t.port.listStacksInProgress()).has('WorkerStack-c1')).toBe(false);
    });

    test('while its operation is under way a stack is in the in-progress listing, without outputs; then it leaves it', async () => {
      // WHEN a change set is executed and its operation has not ended yet
      await t.port.createChangeSet(request('WorkerStack-c5', 'CREATE', template(CHECKSUM_A, 'ws-c5'), 1));
      await t.port.waitForChangeSet('WorkerStack-c5', 'ws-contract-1', 60_000);
      await t.port.executeChangeSet('WorkerStack-c5', 'ws-contract-1', 'ws-contract-1-exec');

      // THEN the in-progress listing has it (ListStacks carries no outputs), and describe agrees
      const inProgress = (await t.port.listStacksInProgress()).get('WorkerStack-c5');
      expect(inProgress).toMatchObject({ name: 'WorkerStack-c5', status: 'CREATE_IN_PROGRESS', outputs: {} });
      expect((await t.port.describeStack('WorkerStack-c5'))?.status).toBe('CREATE_IN_PROGRESS');

      // WHEN it has ended, THEN it is no longer there
      await t.settle();
      expect((await t.port.listStacksInProgress()).has('WorkerStack-c5')).toBe(false);
      expect((await t.port.describeStack('WorkerStack-c5'))?.status).toBe('CREATE_COMPLETE');
    });

    test('updated through a change set: the new output is live and LastUpdatedTime is set', async () => {
      // GIVEN a created stack
      await apply('WorkerStack-c2', 'CREATE', template(CHECKSUM_A, 'ws-c2'), 1);
      const before = await t.port.describeStack('WorkerStack-c2');

      // WHEN it is updated with a new checksum
      await apply('WorkerStack-c2', 'UPDATE', template(CHECKSUM_B, 'ws-c2'), 2);

      // THEN the stack reports the new checksum, complete, with the same id and an update time
      const after = await t.port.describeStack('WorkerStack-c2');
      expect(after).toMatchObject({
        id: before!.id,
        status: 'UPDATE_COMPLETE',
        outputs: { ConfigChecksum: CHECKSUM_B },
      });
      if (!gaps.lastUpdatedTime) expect(after!.lastUpdated).toEqual(expect.any(String));
    });

    test('the change sets of a stack are described by name; an unknown one is undefined', async () => {
      await apply('WorkerStack-c3', 'CREATE', template(CHECKSUM_A, 'ws-c3'), 1);
      expect(await t.port.describeChangeSet('WorkerStack-c3', 'ws-contract-1')).toMatchObject({
        name: 'ws-contract-1',
      });
      expect(await t.port.describeChangeSet('WorkerStack-c3', 'ws-contract-404')).toBeUndefined();
    });

    test('a deleted stack is gone from describe-by-name and from the listing', async () => {
      await apply('WorkerStack-c4', 'CREATE', template(CHECKSUM_A, 'ws-c4'), 1);
      await t.port.deleteStack('WorkerStack-c4', 'ws-contract-delete');
      await t.settle();
      expect(await t.port.describeStack('WorkerStack-c4')).toBeUndefined();
      expect((await t.port.listStacks()).has('WorkerStack-c4')).toBe(false);
    });
  });
}
