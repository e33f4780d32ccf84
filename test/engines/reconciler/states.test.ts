import * as fs from 'node:fs';
import { ClusterStatus, getCondition } from '../../../lib/model/cluster/schema/status';
import { Result } from '../../../lib/engines/reconciler/workflow/outcomes';
import * as synthesis from '../../../lib/engines/synthesis/synthesize';
import { fail, Method, stuck } from '../../fakes/fake-cloudformation';
import { EXAMPLE, Harness, LAUNCH_TEMPLATE_FAILURE, problem } from '../../fakes/harness';
import { Json } from '../../helpers/json';

/** Starting state of one cluster → outcome, the calls made, and what the status records. */

const synth = jest.spyOn(synthesis, 'synthesizeStack');
let h: Harness;
beforeEach(() => synth.mockClear());
afterEach(() => h.cleanup());

const created = async (x: Harness) => {
  expect((await x.reconcile()).result).toBe('applied');
};
const maxPods = (n: number) => (raw: Json) => {
  raw.spec.cloudConfig.values.maxPods = n;
};

/**
 * Observe, create and execute; then (the stack in progress is never waited on) one more look after a poll, which
 * records once the change set itself says its execution completed (DescribeChangeSet: never from the stack alone).
 */
const READ_AND_CREATE = {
  describeStack: 2,
  createChangeSet: 1,
  waitForChangeSet: 1,
  executeChangeSet: 1,
  describeChangeSet: 1,
};
// An update reads the live template once (its roll key: lib/engines/reconciler/tasks/roll-key.ts).
const UPDATE = { ...READ_AND_CREATE, describeChangeSet: 2, getTemplate: 1 };

interface Row {
  readonly what: string;
  readonly account?: string;
  /** The code fingerprint of the reconciling process. @default the one the starting state was made with */
  readonly code?: string;
  /** Brings the cluster and its stack to the starting state; the calls it makes are not counted. */
  readonly given: (h: Harness) => Promise<void>;
  readonly result: Result;
  /** Exactly these calls (every other method: zero). */
  readonly calls: Partial<Record<Method, number>>;
  readonly synth: number;
  readonly uploads: number;
  readonly then: (s: ClusterStatus, h: Harness, before: ClusterStatus | undefined) => void;
}

const ROWS: Row[] = [
  {
    what: 'no stack: CREATE change set, executed, Ready with checksum, generation and fingerprint',
    given: async () => undefined,
    result: 'applied',
    calls: READ_AND_CREATE,
    synth: 1,
    uploads: 1,
    then: (s, x) => {
      expect(x.cfn.requests.map((r) => r.type)).toEqual(['CREATE']);
      expect(x.cfn.peek(x.stackName())?.status).toBe('CREATE_COMPLETE');
      expect(s.cloudConfigChecksum).toMatch(/^[0-9a-f]{64}$/);
      expect(s.cloudConfigChecksum).toBe(x.cfn.peek(x.stackName())?.outputs.ConfigChecksum);
      expect(x.publisher.uploads).toEqual([`clusters/${EXAMPLE}/${s.cloudConfigChecksum}.yaml`]);
      expect(s).toMatchObject({
        observedGeneration: 1,
        stackStatus: 'CREATE_COMPLETE',
        controller: { inputsFingerprint: expect.stringMatching(/^[0-9a-f]{64}$/), failures: 0 },
      });
      expect(getCondition(s, 'Ready')).toMatchObject({ status: 'True', reason: 'StackCreated', observedGeneration: 1 });
      expect(problem(s)?.status).toBe('False');
      expect(getCondition(s, 'Progressing')?.status).toBe('False');
    },
  },
  {
    what: 'complete stack, fingerprint recorded: unchanged, no synthesis, no write anywhere',
    given: created,
    result: 'unchanged',
    calls: { describeStack: 1 },
    synth: 0,
    uploads: 0,
    then: (s, x, before) => {
      expect(s).toEqual(before);
      expect(x.statusWrites).toBe(0);
    },
  },
  {
    what: 'config change: UPDATE change set, executed, new checksum and generation recorded',
    given: async (x) => {
      await created(x);
      x.edit(EXAMPLE, maxPods(110));
    },
    result: 'applied',
    calls: UPDATE,
    synth: 1,
    uploads: 1,
    then: (s, x, before) => {
      expect(x.cfn.requests.map((r) => r.type)).toEqual(['CREATE', 'UPDATE']);
      expect(s.cloudConfigChecksum).not.toBe(before?.cloudConfigChecksum);
      expect(s.cloudConfigChecksum).toBe(x.cfn.peek(x.stackName())?.outputs.ConfigChecksum);
      expect(s.controller?.inputsFingerprint).not.toBe(before?.controller?.inputsFingerprint);
      expect(s).toMatchObject({ observedGeneration: 2, stackStatus: 'UPDATE_COMPLETE' });
      expect(getCondition(s, 'Ready')).toMatchObject({ status: 'True', reason: 'StackUpdated', observedGeneration: 2 });
    },
  },
  {
    what: 'new code, same template: the change set has no changes, nothing executed, new fingerprint recorded',
    code: 'test-code-2',
    given: created,
    result: 'no-changes',
    calls: {
      describeStack: 1,
      describeChangeSet: 1,
      createChangeSet: 1,
      waitForChangeSet: 1,
      deleteChangeSet: 1,
      getTemplate: 1,
    },
    synth: 1,
    uploads: 0, // the config object is already at its checksum key
    then: (s, x, before) => {
      expect(x.cfn.started.map((o) => o.kind)).toEqual(['create']);
      expect(s.controller?.inputsFingerprint).not.toBe(before?.controller?.inputsFingerprint);
      expect(s).toMatchObject({
        cloudConfigChecksum: before?.cloudConfigChecksum,
        observedGeneration: 1,
        stackStatus: 'CREATE_COMPLETE',
      });
      expect(getCondition(s, 'Ready')).toMatchObject({ status: 'True', reason: 'UpToDate' });
    },
  },
  {
    what: 'update that rolls back: Failed/UpdateRolledBack with the resource reason, old checksum kept, retry scheduled',
    given: async (x) => {
      await created(x);
      x.edit(EXAMPLE, maxPods(110));
      x.cfn.script(x.stackName(), fail(LAUNCH_TEMPLATE_FAILURE));
    },
    result: 'failed',
    calls: { ...UPDATE, describeChangeSet: 2, operationEvents: 1 },
    synth: 1,
    uploads: 1,
    then: (s, x, before) => {
      expect(x.cfn.peek(x.stackName())?.status).toBe('UPDATE_ROLLBACK_COMPLETE');
      // observedGeneration is the object's (the status was computed for it); the fingerprint stays the one applied
      expect(s).toMatchObject({
        cloudConfigChecksum: before?.cloudConfigChecksum,
        observedGeneration: 2,
        stackStatus: 'UPDATE_ROLLBACK_COMPLETE',
        controller: { inputsFingerprint: before?.controller?.inputsFingerprint, failures: 1 },
      });
      expect(s.controller?.retryAfter).toBe(new Date(x.clock.ms + 1000).toISOString());
      expect(problem(s)).toMatchObject({ status: 'True', reason: 'UpdateRolledBack' });
      expect(problem(s)?.message).toContain(LAUNCH_TEMPLATE_FAILURE.logicalId);
      expect(problem(s)?.message).toContain(LAUNCH_TEMPLATE_FAILURE.reason);
      expect(getCondition(s, 'Ready')).toMatchObject({ status: 'False', reason: 'UpdateRolledBack' });
    },
  },
  {
    what: 'stack stuck in progress past waitTimeoutMs: waiting, Progressing (our change set executing), old checksum',
    given: async (x) => {
      await created(x);
      x.edit(EXAMPLE, maxPods(110));
      x.cfn.script(x.stackName(), stuck());
    },
    result: 'waiting',
    // one look per poll interval (5 s) for the 60 s wait: no waiter, no events
    calls: { ...UPDATE, describeStack: 1 + 60_000 / 5000, describeChangeSet: 1 },
    synth: 1,
    uploads: 1,
    then: (s, x, before) => {
      expect(x.cfn.peek(x.stackName())?.status).toBe('UPDATE_IN_PROGRESS');
      expect(s).toMatchObject({
        cloudConfigChecksum: before?.cloudConfigChecksum,
        stackStatus: 'UPDATE_IN_PROGRESS',
        controller: { inputsFingerprint: before?.controller?.inputsFingerprint },
      });
      expect(getCondition(s, 'Progressing')).toMatchObject({ status: 'True', reason: 'ChangeSetExecuting' });
    },
  },
  {
    what: 'DELETE_FAILED: Failed with the resources that could not be deleted, nothing changed',
    given: async (x) => {
      x.cfn.seed(x.stackName(), {
        status: 'DELETE_FAILED',
        failed: [
          {
            logicalId: 'PoolSecurityGroupB0350326',
            resourceType: 'AWS::EC2::SecurityGroup',
            reason: 'resource sg-0abc has a dependent object',
          },
        ],
      });
    },
    result: 'stalled',
    calls: { describeStack: 1, operationEvents: 1 },
    synth: 0,
    uploads: 0,
    then: (s) => {
      expect(problem(s)).toMatchObject({ status: 'True', reason: 'DeleteFailed' });
      expect(problem(s)?.message).toMatch(
        /PoolSecurityGroupB0350326 \(AWS::EC2::SecurityGroup\): resource sg-0abc has a dependent object/,
      );
      expect(s.controller?.retryAfter).toBeUndefined();
    },
  },
  {
    what: 'credentials of another account: AccountMismatch, nothing changed',
    account: '333333333333',
    given: async () => undefined,
    result: 'failed',
    calls: { describeStack: 1 },
    synth: 0,
    uploads: 0,
    then: (s, x) => {
      expect(x.identity.calls).toBe(1);
      expect(problem(s)).toMatchObject({ status: 'True', reason: 'AccountMismatch' });
      expect(problem(s)?.message).toMatch(/333333333333.*222222222222/);
      expect(s.cloudConfigChecksum).toBeUndefined();
    },
  },
  {
    what: 'invalid object: InvalidSpec, zero AWS calls',
    given: async (x) => {
      x.edit(EXAMPLE, (raw) => {
        raw.spec.pool.minSize = 10; // above maxSize 4
      });
    },
    result: 'invalid',
    calls: {},
    synth: 0,
    uploads: 0,
    then: (s, x) => {
      expect(x.identity.calls).toBe(0);
      expect(getCondition(s, 'Ready')).toMatchObject({ status: 'False', reason: 'InvalidSpec' });
      expect(problem(s)?.message).toMatch(/minSize/);
    },
  },
];

test.each(ROWS)('$what', async (row) => {
  // GIVEN the starting state
  h = new Harness({ account: row.account });
  await row.given(h);
  const before = h.state()?.status;
  const mtime = fs.existsSync(h.stateFilePath()) ? fs.statSync(h.stateFilePath()).mtimeMs : undefined;
  const version = h.state()?.resourceVersion;
  h.cfn.resetCalls();
  h.statusWrites = 0;
  synth.mockClear();
  const uploadsBefore = h.publisher.uploads.length;
  const publishesBefore = h.publisher.calls;

  // WHEN one reconcile runs
  const outcome = await h.reconcile(EXAMPLE, {}, h.deps(row.code ? { code: row.code } : {}));

  // THEN the outcome, exactly the calls expected, and the recorded status
  expect(outcome.result).toBe(row.result);
  expect(Object.fromEntries(h.cfn.calls)).toEqual(row.calls);
  expect(synth).toHaveBeenCalledTimes(row.synth);
  expect(h.publisher.uploads.length - uploadsBefore).toBe(row.uploads);
  expect(h.publisher.calls - publishesBefore).toBe(row.synth); // published exactly when synthesized
  if (row.result === 'unchanged') {
    expect(fs.statSync(h.stateFilePath()).mtimeMs).toBe(mtime);
    expect(h.state()?.resourceVersion).toBe(version);
  }
  row.then(h.status(), h, before);
});
