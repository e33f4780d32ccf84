import { ReconcilerDeps } from '../../../lib/engines/reconciler/workflow/context';
import { Outcome } from '../../../lib/engines/reconciler/workflow/outcomes';
import { CrashSignal } from '../../../lib/engines/reconciler/compose/workflow';
import { complete, fail, rollbackFails } from '../../fakes/fake-cloudformation';
import { ASG_FAILURE, EXAMPLE, Harness, LAUNCH_TEMPLATE_FAILURE } from '../../fakes/harness';

/** The documented recovery of ROLLBACK_COMPLETE and UPDATE_ROLLBACK_FAILED, bounded by maxRecoveryAttempts. */

let h: Harness;
beforeEach(() => {
  h = new Harness();
});
afterEach(() => h.cleanup());

/**
 * Runs of `reconcile --once` (each requeues itself while a stack is in progress) a minute apart (past any backoff
 * here) until `done`, at most `max`.
 */
async function passesUntil(
  done: (o: Outcome) => boolean,
  max: number,
  deps: Partial<ReconcilerDeps> = {},
): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  while (outcomes.length < max) {
    h.clock.advance(60_000);
    const o = await h.reconcile(EXAMPLE, {}, h.deps(deps));
    outcomes.push(o);
    if (done(o)) break;
  }
  return outcomes;
}

const reason = () => h.problem()?.reason;
/** Enough executions of the same inputs that the recovery bound (maxRecoveryAttempts: 3), not --max-update-attempts, is what stops. */
const MANY_ATTEMPTS = { maxUpdateAttempts: 10 };

describe('ROLLBACK_COMPLETE (a create that never completed)', () => {
  beforeEach(async () => {
    // GIVEN a first create that failed and rolled back
    h.cfn.script(h.stackName(), fail(ASG_FAILURE));
    expect((await h.reconcile()).result).toBe('failed');
    expect(h.cfn.peek(h.stackName())?.status).toBe('ROLLBACK_COMPLETE');
    expect(h.problem()).toMatchObject({ type: 'Degraded', status: 'True', reason: 'CreateRolledBack' });
    expect(h.problem()?.message).toContain(ASG_FAILURE.reason);
    expect(h.status().cloudConfigChecksum).toBeUndefined();
    h.cfn.resetCalls();
  });

  test('the next due pass deletes the stack and creates it again', async () => {
    // GIVEN the cause was fixed (the next create completes)
    const oldId = h.cfn.peek(h.stackName())!.id;

    // WHEN the next due pass runs
    h.clock.advance(1000);
    const outcome = await h.reconcile();

    // THEN it deleted the stack, created it again through a CREATE change set, and recorded it (the reconcile requeued itself while each ran)
    expect(outcome.result).toBe('applied');
    expect(h.cfn.started.map((o) => o.kind)).toEqual(['create', 'delete', 'create']);
    expect(h.cfn.count('deleteStack', 'createChangeSet', 'executeChangeSet')).toBe(3);
    expect(h.cfn.requests.map((r) => r.type)).toEqual(['CREATE', 'CREATE']);
    expect(h.cfn.peek(h.stackName())).toMatchObject({ status: 'CREATE_COMPLETE' });
    expect(h.cfn.peek(h.stackName())!.id).not.toBe(oldId);
    expect(h.status()).toMatchObject({
      stackStatus: 'CREATE_COMPLETE',
      observedGeneration: 1,
      controller: { recoveryAttempts: 0, failures: 0 },
    });
    expect(h.status().cloudConfigChecksum).toBe(h.cfn.peek(h.stackName())!.outputs.ConfigChecksum);
    expect(h.condition('Ready')?.status).toBe('True');
    expect(h.condition('Degraded')?.status).toBe('False');
  });

  test('a create that keeps failing is recreated maxRecoveryAttempts (3) times, then RecoveryExhausted (Stalled) and no further call', async () => {
    // GIVEN every create fails (each delete succeeds), and --max-update-attempts above the recovery bound
    h.cfn.script(
      h.stackName(),
      complete(),
      fail(ASG_FAILURE),
      complete(),
      fail(ASG_FAILURE),
      complete(),
      fail(ASG_FAILURE),
    );

    // WHEN passes run until recovery is given up
    const outcomes = await passesUntil(
      (o) => o.message?.includes('failed to create 3 times') ?? false,
      6,
      MANY_ATTEMPTS,
    );

    // THEN three delete-and-recreate rounds (each a retried failure), then RecoveryExhausted, Stalled, with no retry scheduled
    expect(outcomes.map((o) => o.result)).toEqual(['failed', 'failed', 'failed', 'stalled']);
    expect(h.cfn.count('deleteStack')).toBe(3);
    expect(h.cfn.started.filter((o) => o.kind === 'create')).toHaveLength(4);
    expect(h.problem()).toMatchObject({ type: 'Stalled', status: 'True', reason: 'RecoveryExhausted' });
    expect(h.status()).toMatchObject({ stackStatus: 'ROLLBACK_COMPLETE', controller: { recoveryAttempts: 3 } });
    expect(h.status().controller?.retryAfter).toBeUndefined();
    expect(outcomes.at(-1)?.requeueAfterMs).toBeUndefined();

    // WHEN more passes run
    h.cfn.resetCalls();
    expect((await passesUntil(() => false, 2, MANY_ATTEMPTS)).map((o) => o.result)).toEqual(['stalled', 'stalled']);

    // THEN nothing is changed any more: an operator must act
    expect(h.cfn.mutatingCalls()).toBe(0);
    expect(reason()).toBe('RecoveryExhausted');
  });

  test('with the default --max-update-attempts (2), a create that fails again after one recreation stops as UpdateFailed', async () => {
    // GIVEN the recreated stack fails to create too
    h.cfn.script(h.stackName(), complete(), fail(ASG_FAILURE));

    // WHEN passes run
    const outcomes = await passesUntil((o) => o.result === 'stalled', 3);

    // THEN one delete and one more create, then Stalled/UpdateFailed: the same inputs are not executed a third time
    expect(outcomes.map((o) => o.result)).toEqual(['stalled']);
    expect(h.cfn.started.map((o) => o.kind)).toEqual(['create', 'delete', 'create']);
    expect(h.problem()).toMatchObject({ type: 'Stalled', status: 'True', reason: 'UpdateFailed' });
    expect(h.problem()?.message).toContain(ASG_FAILURE.reason);
    expect(h.status().controller).toMatchObject({ failures: 2 });

    // WHEN more passes run
    h.cfn.resetCalls();
    await passesUntil(() => false, 2);

    // THEN nothing is changed any more
    expect(h.cfn.mutatingCalls()).toBe(0);
  });

  test('after RecoveryExhausted, the operator deletes the stack as told and the next pass creates it', async () => {
    // GIVEN recovery given up after three failed recreations
    h.cfn.script(
      h.stackName(),
      complete(),
      fail(ASG_FAILURE),
      complete(),
      fail(ASG_FAILURE),
      complete(),
      fail(ASG_FAILURE),
    );
    await passesUntil(() => reason() === 'RecoveryExhausted', 6, MANY_ATTEMPTS);
    expect(reason()).toBe('RecoveryExhausted');

    // WHEN the operator deletes the stack (what the RecoveryExhausted message says to do), and a pass runs
    await h.cfn.deleteStack(h.cfn.peek(h.stackName())!.id, 'operator');
    h.cfn.advance(60_000);
    expect(h.cfn.peek(h.stackName())).toBeUndefined();
    const outcomes = await passesUntil(() => true, 1, MANY_ATTEMPTS);

    // THEN the stack is created from nothing and the recovery counters are reset
    expect(outcomes.map((o) => o.result)).toEqual(['applied']);
    expect(h.status()).toMatchObject({
      stackStatus: 'CREATE_COMPLETE',
      controller: { recoveryAttempts: 0, failures: 0 },
    });
    expect(h.condition('Ready')?.status).toBe('True');
  });

  test('a delete that fails during recovery ends DELETE_FAILED, reported with its resource, without further change', async () => {
    // GIVEN the delete of the rolled-back stack fails on a resource
    const sg = {
      logicalId: 'PoolSecurityGroupB0350326',
      resourceType: 'AWS::EC2::SecurityGroup',
      reason: 'resource sg-0abc has a dependent object',
    };
    h.cfn.script(h.stackName(), fail(sg));

    // WHEN passes run
    const outcomes = await passesUntil((o) => o.result === 'stalled', 3);

    // THEN one pass: the delete (requeued while it ran), then Stalled/DeleteFailed naming the resource; nothing else was tried
    expect(outcomes.map((o) => o.result)).toEqual(['stalled']);
    expect(outcomes[0].requeueAfterMs).toBeUndefined();
    expect(h.cfn.mutatingCalls()).toBe(1);
    expect(h.cfn.peek(h.stackName())?.status).toBe('DELETE_FAILED');
    expect(h.problem()).toMatchObject({ type: 'Stalled', status: 'True', reason: 'DeleteFailed' });
    expect(h.problem()?.message).toContain(`${sg.logicalId} (${sg.resourceType}): ${sg.reason}`);
    expect(h.problem()?.message).not.toContain(ASG_FAILURE.logicalId);
  });
});

describe('UPDATE_ROLLBACK_FAILED', () => {
  beforeEach(async () => {
    // GIVEN a live stack whose update failed and whose rollback failed too
    expect((await h.reconcile()).result).toBe('applied');
    h.edit(EXAMPLE, (raw) => {
      raw.spec.cloudConfig.values.maxPods = 110;
    });
    h.cfn.script(h.stackName(), rollbackFails(LAUNCH_TEMPLATE_FAILURE));
    expect((await h.reconcile()).result).toBe('failed');
    expect(h.cfn.peek(h.stackName())?.status).toBe('UPDATE_ROLLBACK_FAILED');
    expect(h.problem()).toMatchObject({ type: 'Degraded', status: 'True', reason: 'UpdateRollbackFailed' });
    h.cfn.resetCalls();
  });

  test('ContinueUpdateRollback at most 3 times, then RecoveryExhausted and no further call', async () => {
    // GIVEN every ContinueUpdateRollback fails again
    h.cfn.setDefault(h.stackName(), fail(LAUNCH_TEMPLATE_FAILURE));

    // WHEN passes run until recovery is given up
    const outcomes = await passesUntil(
      (o) => o.message?.includes('after 3 ContinueUpdateRollback attempts') ?? false,
      10,
    );

    // THEN exactly three ContinueUpdateRollback calls, no update, RecoveryExhausted (Stalled) naming the command to run
    expect(h.cfn.count('continueUpdateRollback')).toBe(3);
    expect(h.cfn.count('createChangeSet', 'executeChangeSet', 'deleteStack')).toBe(0);
    expect(outcomes.at(-1)).toMatchObject({ result: 'stalled' });
    expect(outcomes.at(-1)?.requeueAfterMs).toBeUndefined();
    expect(h.problem()).toMatchObject({ type: 'Stalled', status: 'True', reason: 'RecoveryExhausted' });
    expect(h.problem()?.message).toMatch(/continue-update-rollback/);
    expect(h.status().controller?.retryAfter).toBeUndefined();

    // WHEN more passes run
    h.cfn.resetCalls();
    await passesUntil(() => false, 2);

    // THEN nothing is changed any more
    expect(h.cfn.mutatingCalls()).toBe(0);
  });

  test('a crash right after each ContinueUpdateRollback still counts it: at most 3 calls across restarts', async () => {
    // GIVEN every ContinueUpdateRollback fails again
    h.cfn.setDefault(h.stackName(), fail(LAUNCH_TEMPLATE_FAILURE));

    // WHEN the process is killed right after every recover task (after its AWS call, before the reconcile's end),
    // and restarted, six times
    for (let i = 0; i < 6; i++) {
      h.clock.advance(60_000);
      await h
        .reconcile(EXAMPLE, {
          hooks: {
            after: (task) => {
              if (task === 'recover') throw new CrashSignal('killed after recover');
            },
          },
        })
        .catch((e: unknown) => {
          if (!(e instanceof CrashSignal)) throw e;
        });
    }

    // THEN each call was counted before it was made: the bound holds across the crashes
    expect(h.cfn.count('continueUpdateRollback')).toBe(3);
    expect(h.status().controller?.recoveryAttempts).toBe(3);
  });

  test('after RecoveryExhausted, the operator continues the rollback as told and the update is tried again', async () => {
    // GIVEN recovery given up after three failed ContinueUpdateRollback calls
    h.cfn.script(h.stackName(), ...Array.from({ length: 3 }, () => fail(LAUNCH_TEMPLATE_FAILURE)));
    await passesUntil(() => reason() === 'RecoveryExhausted', 10);
    expect(h.cfn.count('continueUpdateRollback')).toBe(3);

    // WHEN the operator fixes the resource and runs continue-update-rollback, and passes run
    await h.cfn.continueUpdateRollback(h.stackName(), 'operator');
    h.cfn.advance(60_000);
    expect(h.cfn.peek(h.stackName())?.status).toBe('UPDATE_ROLLBACK_COMPLETE');
    const outcomes = await passesUntil((o) => o.result === 'applied', 1);

    // THEN the update is retried and recorded; no further ContinueUpdateRollback from the reconciler
    expect(outcomes.map((o) => o.result)).toEqual(['applied']);
    expect(h.cfn.count('continueUpdateRollback')).toBe(4); // the operator's included
    expect(h.status()).toMatchObject({
      stackStatus: 'UPDATE_COMPLETE',
      observedGeneration: 2,
      controller: { recoveryAttempts: 0 },
    });
    expect(h.condition('Ready')?.status).toBe('True');
  });

  test('a ContinueUpdateRollback that succeeds leads to a new attempt of the update, which converges', async () => {
    // GIVEN the rollback can now complete, and so can the update
    const old = h.status().cloudConfigChecksum;

    // WHEN passes run until Ready
    const outcomes = await passesUntil((o) => o.result === 'applied', 5);

    // THEN one pass: continue (requeued while it ran) → UPDATE_ROLLBACK_COMPLETE, the old config live → the update again → recorded
    expect(outcomes.map((o) => o.result)).toEqual(['applied']);
    expect(h.cfn.started.map((o) => o.kind)).toEqual(['create', 'update', 'continue', 'update']);
    expect(h.cfn.count('continueUpdateRollback')).toBe(1);
    expect(h.cfn.count('executeChangeSet')).toBe(1);
    expect(h.status()).toMatchObject({
      stackStatus: 'UPDATE_COMPLETE',
      observedGeneration: 2,
      controller: { recoveryAttempts: 0, failures: 0 },
    });
    expect(h.status().cloudConfigChecksum).not.toBe(old);
    expect(h.condition('Ready')?.status).toBe('True');
  });
});
