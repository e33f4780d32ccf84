import { fail } from '../../fakes/fake-cloudformation';
import { EXAMPLE, Harness, LAUNCH_TEMPLATE_FAILURE } from '../../fakes/harness';
import { Json } from '../../helpers/json';

/** The redesign's promises (issue 11): the live stack is the truth, failures stop, operators can pause and retry. */

let h: Harness;
afterEach(() => h.cleanup());

const maxPods = (n: number) => (raw: Json) => {
  raw.spec.cloudConfig.values.maxPods = n;
};

/** The live template with its ConfigChecksum output replaced, as a console edit of the stack would leave it. */
function withChecksum(template: string, checksum: string): string {
  const t = JSON.parse(template);
  t.Outputs.ConfigChecksum.Value = checksum;
  return JSON.stringify(t);
}

function liveTemplate(x: Harness): string {
  return x.cfn.requests.at(-1)!.templateBody!;
}

describe('the live stack is the truth', () => {
  test('an out-of-band change is detected (Drifted, both checksums logged) and the object re-applied', async () => {
    // GIVEN a settled cluster whose stack someone changes in the console
    h = new Harness();
    expect((await h.reconcile()).result).toBe('applied');
    const applied = h.status().cloudConfigChecksum!;
    const other = 'e'.repeat(64);
    h.cfn.changeOutOfBand(h.stackName(), withChecksum(liveTemplate(h), other));

    // WHEN the next pass runs
    const steps = [await h.step()];

    // THEN it says so, with both checksums, and executes the desired template again
    expect(steps[0].result).toBe('waiting');
    expect(h.condition('Progressing')).toMatchObject({ status: 'True', reason: 'Drifted' });
    const line = h.log.of(EXAMPLE).find((e) => (e.obj as { reason?: string }).reason === 'Drifted');
    expect(line?.obj).toMatchObject({ recordedChecksum: applied, stackChecksum: other, desiredChecksum: applied });
    expect(h.cfn.started.map((o) => o.kind)).toEqual(['create', 'update']);

    // WHEN it converges
    expect((await h.reconcile()).result).toBe('applied');

    // THEN the desired config is live again, read from the stack
    expect(h.cfn.peek(h.stackName())?.outputs.ConfigChecksum).toBe(applied);
    expect(h.status().cloudConfigChecksum).toBe(applied);
    expect(h.condition('Ready')?.status).toBe('True');
  });

  test('--drift=report reports the out-of-band change and writes nothing to AWS', async () => {
    // GIVEN a settled cluster changed out of band
    h = new Harness();
    await h.reconcile();
    h.cfn.changeOutOfBand(h.stackName(), withChecksum(liveTemplate(h), 'e'.repeat(64)));
    h.cfn.resetCalls();

    // WHEN a reconciler in report mode runs
    const outcome = await h.reconcile(EXAMPLE, {}, h.deps({ drift: 'report' }));

    // THEN Drifted is reported with the live checksum, and nothing was changed
    expect(outcome.result).toBe('drifted');
    expect(h.cfn.mutatingCalls()).toBe(0);
    expect(h.condition('Degraded')).toMatchObject({ status: 'True', reason: 'Drifted' });
    expect(h.status().cloudConfigChecksum).toBe('e'.repeat(64));
    expect(h.condition('Ready')?.status).toBe('False');
  });

  test('a vanished stack is reported as StackDeleted (live checksum cleared) before it is created again', async () => {
    // GIVEN a settled cluster whose stack was deleted behind the reconciler's back
    h = new Harness();
    await h.reconcile();
    h.cfn.deleteOutOfBand(h.stackName());

    // WHEN one reconcile runs
    const first = await h.step();

    // THEN it says the stack is gone (never "updating the stack") and starts a CREATE
    expect(first.result).toBe('waiting');
    const gone = h.log.of(EXAMPLE).find((e) => (e.obj as { reason?: string }).reason === 'StackDeleted');
    expect(gone?.msg).toMatch(/is gone: it was deleted outside worker-stacks/);
    expect(h.cfn.requests.map((r) => r.type)).toEqual(['CREATE', 'CREATE']);
    expect(h.condition('Progressing')?.message).not.toMatch(/node config .*is unchanged|no node is replaced/);

    // WHEN it converges
    expect((await h.reconcile()).result).toBe('applied');
    expect(h.status().stackId).toBe(h.cfn.peek(h.stackName())?.id);
  });

  test('the checksum recorded is the one the stack reports, read from its template when the listing has no outputs', async () => {
    // GIVEN a stack whose listing leaves the outputs out (as moto does for change-set stacks)
    h = new Harness();
    await h.reconcile();
    const peek = h.cfn.describeStack.bind(h.cfn);
    h.cfn.describeStack = async (name) => {
      const s = await peek(name);
      return s && { ...s, outputs: {} };
    };
    h.edit(EXAMPLE, maxPods(111));

    // WHEN the change is applied
    expect((await h.reconcile()).result).toBe('applied');

    // THEN the recorded checksum came from the live template (GetTemplate), and equals the stack's own output
    expect(h.cfn.count('getTemplate')).toBeGreaterThan(0);
    expect(h.status().cloudConfigChecksum).toBe(h.cfn.peek(h.stackName())?.outputs.ConfigChecksum);
  });
});

describe('failures that stop', () => {
  test('a rolled-back update is executed at most --max-update-attempts (2) times, then Stalled/UpdateFailed; retry resumes it', async () => {
    // GIVEN a settled cluster and a config whose update always rolls back
    h = new Harness();
    await h.reconcile();
    h.edit(EXAMPLE, maxPods(120));
    h.cfn.setDefault(h.stackName(), fail(LAUNCH_TEMPLATE_FAILURE));

    // WHEN it is reconciled again and again, past every backoff
    const results: string[] = [];
    for (let i = 0; i < 5; i++) {
      results.push((await h.reconcile()).result);
      h.clock.advance(60 * 60_000);
    }

    // THEN two executions, then it stops (no requeue, no further execution)
    expect(h.cfn.started.filter((o) => o.kind === 'update')).toHaveLength(2);
    expect(results).toEqual(['failed', 'stalled', 'stalled', 'stalled', 'stalled']);
    expect(h.condition('Stalled')).toMatchObject({ status: 'True', reason: 'UpdateFailed' });
    expect(h.condition('Stalled')?.message).toMatch(/failed 2 times.*worker-stacks retry staging-us1/);
    expect(h.condition('Stalled')?.message).toContain(LAUNCH_TEMPLATE_FAILURE.logicalId);

    // WHEN an operator fixes the cause and asks for a retry
    h.cfn.setDefault(h.stackName(), { kind: 'complete', polls: 1 });
    await h.deps().store.requestRetry(EXAMPLE, 'retry-1');

    // THEN the same inputs are tried again and converge
    expect((await h.reconcile()).result).toBe('applied');
    expect(h.cfn.started.filter((o) => o.kind === 'update')).toHaveLength(3);
    expect(h.condition('Stalled')?.status).toBe('False');
    expect(h.status().controller?.retryHandled).toBe('retry-1');
  });

  test('changed inputs are tried at once after a stall', async () => {
    // GIVEN a stalled cluster
    h = new Harness();
    await h.reconcile();
    h.edit(EXAMPLE, maxPods(120));
    h.cfn.script(h.stackName(), fail(LAUNCH_TEMPLATE_FAILURE), fail(LAUNCH_TEMPLATE_FAILURE));
    await h.reconcile();
    h.clock.advance(60 * 60_000);
    expect((await h.reconcile()).result).toBe('stalled');

    // WHEN the object changes
    h.edit(EXAMPLE, maxPods(100));

    // THEN it is applied without a retry command
    expect((await h.reconcile()).result).toBe('applied');
  });

  test('throttling while watching a stack is transient: nothing counted, Ready untouched, then it converges', async () => {
    // GIVEN a settled cluster, a change in progress, and CloudFormation throttling the next look
    h = new Harness();
    await h.reconcile();
    h.edit(EXAMPLE, maxPods(121));
    expect((await h.step()).result).toBe('waiting');
    h.cfn.throttle('describeStack', 1);
    h.cfn.advance(5000);

    // WHEN the next look is throttled
    const outcome = await h.step();

    // THEN it is transient: no failure counted, Degraded says why, and the next look records the roll
    expect(outcome.result).toBe('transient');
    expect(h.status().controller?.failures ?? 0).toBe(0);
    expect(h.condition('Degraded')).toMatchObject({ status: 'True', reason: 'Throttled' });
    expect((await h.reconcile()).result).toBe('applied');
    expect(h.condition('Degraded')?.status).toBe('False');
  });
});

describe('operator controls', () => {
  test('a paused cluster gets no AWS write; resume applies what changed meanwhile', async () => {
    // GIVEN a settled cluster, paused, then edited
    h = new Harness();
    await h.reconcile();
    await h.deps().store.setPaused(EXAMPLE, true);
    h.edit(EXAMPLE, maxPods(122));
    h.cfn.resetCalls();

    // WHEN it is reconciled
    const paused = await h.reconcile();

    // THEN nothing was written to AWS, and the status says it is paused with both checksums
    expect(paused.result).toBe('paused');
    expect(h.cfn.mutatingCalls()).toBe(0);
    expect(h.condition('Progressing')).toMatchObject({ status: 'False', reason: 'Paused' });
    expect(h.status().paused).toBe(true);

    // WHEN it is resumed
    await h.deps().store.setPaused(EXAMPLE, false);

    // THEN the change is applied (pausing itself was never a change to deploy)
    expect((await h.reconcile()).result).toBe('applied');
    expect(h.cfn.started.filter((o) => o.kind === 'update')).toHaveLength(1);
    expect(h.status().paused).toBeUndefined();
  });
});
