import { Controller } from '../../../lib/engines/reconciler/runtime/controller';
import { complete, fail } from '../../fakes/fake-cloudformation';
import { EXAMPLE, Harness, LAUNCH_TEMPLATE_FAILURE } from '../../fakes/harness';
import { Json } from '../../helpers/json';

/**
 * Never a decision from a read older than the reconciler's own last write (issue 25, items 1, 8, 13): after an
 * ExecuteChangeSet, a listing taken before it (the pass's cached one, or one that lags) or a stack that has not shown
 * the operation yet must not be recorded as the operation's end.
 */

let h: Harness;
afterEach(() => h.cleanup());

const maxSize = (n: number) => (raw: Json) => {
  raw.spec.pool.maxSize = n;
};
const image = (id: string) => (raw: Json) => {
  raw.spec.pool.machineImage = id;
};
const updates = () => h.cfn.started.filter((s) => s.kind === 'update').length;

async function applied(): Promise<void> {
  h = new Harness();
  const { outcomes } = await h.pass();
  expect(outcomes.get(EXAMPLE)?.result).toBe('applied');
  h.cfn.setDefault(h.stackName(), complete(6));
  // Long enough ago that even a lagging listing shows it settled.
  h.cfn.advance(60_000);
}

describe('a spec change that keeps the node config (the live checksum stays the same)', () => {
  test.each([
    ['the pass listing, cached for a poll interval, taken before the execute', { lag: 0, delay: 0, restart: false }],
    ['a new listing (a restarted daemon) that lags the truth by 10 s', { lag: 10_000, delay: 0, restart: true }],
    ['a stack that shows the update only 2 s after ExecuteChangeSet answered', { lag: 0, delay: 2000, restart: true }],
  ])('is not Ready from %s', async (_, { lag, delay, restart }) => {
    // GIVEN a live stack, and an edit of pool.maxSize executed by a pass
    await applied();
    h.cfn.listingLagMs = lag;
    h.cfn.startDelayMs = delay;
    h.edit(EXAMPLE, maxSize(5));
    const controller = new Controller(h.deps());
    expect((await controller.runPass()).outcomes.get(EXAMPLE)?.result).toBe('waiting');

    // WHEN our own status write brings the cluster back 100 ms later (the file store's watch)
    h.clock.advance(100);
    const outcome = restart
      ? (await new Controller(h.deps()).runPass()).outcomes.get(EXAMPLE)
      : await controller.reconcileKey(EXAMPLE);

    // THEN it keeps watching: nothing recorded, not Ready on this generation, the change set still ours
    expect(outcome?.result).toBe('waiting');
    expect(h.status().controller?.executing).toBeDefined();
    expect(h.condition('Ready')?.reason).not.toBe('StackUpdated');
    expect(h.condition('Progressing')?.status).toBe('True');

    // AND once the update really ends, it is recorded from the stack, after one execution
    h.cfn.advance(60_000);
    await controller.runPass();
    expect(h.condition('Ready')).toMatchObject({ status: 'True', reason: 'StackUpdated' });
    expect(updates()).toBe(1);
  });
});

test('two quick edits: the second is executed only after the first ended, and nothing is counted as a failure', async () => {
  // GIVEN a live stack, and an edit (pool.maxSize) executed by a pass
  await applied();
  h.edit(EXAMPLE, maxSize(5));
  const controller = new Controller(h.deps({ maxUpdateAttempts: 1 }));
  expect((await controller.runPass()).outcomes.get(EXAMPLE)?.result).toBe('waiting');

  // WHEN a second edit comes 300 ms later, and the daemon looks at each event and requeue as it comes
  h.clock.advance(300);
  h.edit(EXAMPLE, maxSize(6));
  let outcome = await controller.reconcileKey(EXAMPLE);
  for (let i = 0; i < 20 && outcome?.requeueAfterMs !== undefined; i++) {
    h.cfn.advance(outcome.requeueAfterMs);
    outcome = await controller.reconcileKey(EXAMPLE);
  }

  // THEN no change set was made while the stack was in progress, nothing failed, and the second edit is live
  expect(outcome?.result).toBe('applied');
  expect(h.problem()?.status).not.toBe('True');
  expect(h.status().controller?.failures ?? 0).toBe(0);
  expect(updates()).toBe(2);
  expect(h.condition('Ready')?.status).toBe('True');
});

test('a failing image change executes at most --max-update-attempts times, whatever the listings say', async () => {
  // GIVEN a live stack, and an image change (the node config stays the same) whose every update rolls back
  await applied();
  h.cfn.setDefault(h.stackName(), fail(LAUNCH_TEMPLATE_FAILURE, 2));
  h.edit(EXAMPLE, image('ami-0123456789abcdef0'));
  const controller = new Controller(
    h.deps({ maxUpdateAttempts: 2, backoff: { baseMs: 1000, maxMs: 1000, random: () => 0.5 } }),
  );

  // WHEN the daemon reconciles it, its own writes bringing it back 100 ms later, until it settles
  await controller.runPass();
  for (let i = 0; i < 40; i++) {
    h.clock.advance(100);
    await controller.reconcileKey(EXAMPLE);
    h.cfn.advance(2000);
  }

  // THEN two executions, then Stalled; never Ready on the failed inputs
  expect(updates()).toBe(2);
  expect(h.condition('Stalled')?.status).toBe('True');
  expect(h.condition('Ready')?.reason).not.toBe('StackUpdated');
});

test("CloudFormation's refusal of a change set on a stack in progress our read did not show is a wait, not a failure", async () => {
  // GIVEN a live stack that someone else starts updating, a listing that does not show it yet, and an edit
  await applied();
  h.cfn.listingLagMs = 10_000;
  h.cfn.updateOutOfBand(
    h.stackName(),
    JSON.stringify({ ...JSON.parse((await h.cfn.getTemplate(h.stackName()))!), Description: 'by hand' }),
  );
  h.edit(EXAMPLE, maxSize(5));
  const before = updates();

  // WHEN a pass reconciles it
  const outcome = (await new Controller(h.deps({ maxUpdateAttempts: 1 })).runPass()).outcomes.get(EXAMPLE);

  // THEN it waits for the stack: nothing counted, not Stalled, no execution
  expect(outcome?.result).toBe('waiting');
  expect(h.status().controller?.failures ?? 0).toBe(0);
  expect(h.condition('Stalled')?.status).not.toBe('True');
  expect(h.condition('Progressing')).toMatchObject({ status: 'True', reason: 'WaitingForStack' });
  expect(updates()).toBe(before);
});
