import { Outcome } from '../../../lib/engines/reconciler/workflow/outcomes';
import { CrashSignal, taskNames } from '../../../lib/engines/reconciler/compose/workflow';
import { complete } from '../../fakes/fake-cloudformation';
import { EXAMPLE, Harness, settled } from '../../fakes/harness';

/** A process that dies anywhere in the workflow, then restarts: same end state, never a second apply. */

let h: Harness;
afterEach(() => h.cleanup());

type Scenario = 'create' | 'update';

/** The cluster ready for the scenario's change; each stack operation takes two polls. */
async function given(scenario: Scenario): Promise<Harness> {
  const x = new Harness();
  if (scenario === 'update') {
    expect((await x.reconcile()).result).toBe('applied');
    x.edit(EXAMPLE, (raw) => {
      raw.spec.cloudConfig.values.maxPods = 110;
    });
  }
  x.cfn.setDefault(x.stackName(), complete(2));
  x.cfn.resetCalls();
  x.cfn.started.length = 0;
  return x;
}

/** Restarted passes (fresh store and context each), a minute apart, until 'unchanged'. */
async function restartUntilUnchanged(max = 5): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  while (outcomes.length < max && outcomes.at(-1)?.result !== 'unchanged') {
    h.clock.advance(60_000);
    outcomes.push(await h.reconcile(EXAMPLE, {}, h.deps()));
  }
  return outcomes;
}

describe('restart safety', () => {
  test('a stack found in progress after a restart is waited on, never updated again, and its live checksum recorded', async () => {
    // GIVEN a process that executed the update and died while the stack was UPDATE_IN_PROGRESS
    h = await given('update');
    const before = h.status().cloudConfigChecksum;
    await expect(
      h.pass({ hooks: { after: (task) => (task === 'execute' ? Promise.reject(new CrashSignal(task)) : undefined) } }),
    ).rejects.toBeInstanceOf(CrashSignal);
    expect(h.cfn.peek(h.stackName())?.status).toBe('UPDATE_IN_PROGRESS');
    expect(h.status().cloudConfigChecksum).toBe(before);
    h.cfn.resetCalls();

    // WHEN a restarted controller runs a pass (its batched listing shows the stack in progress)
    const first = await h.pass();

    // THEN it only watched: no change set, no execution, one listing per look and no describe; once complete, the
    // checksum the stack reports is recorded for the inputs the dead process executed
    expect(first.outcomes.get(EXAMPLE)?.result).toBe('applied');
    expect(h.cfn.count('createChangeSet', 'executeChangeSet', 'deleteStack', 'continueUpdateRollback')).toBe(0);
    // (one listing of every stack for the pass, then per poll only the stacks in progress, and one describe of the
    // stack once it has left that list)
    expect(h.cfn.count('listStacks')).toBe(1);
    expect(h.cfn.count('listStacksInProgress')).toBeGreaterThanOrEqual(1);
    expect(h.cfn.count('describeStack')).toBe(1);
    expect(h.cfn.count('waitForStack')).toBe(0);
    const live = h.cfn.peek(h.stackName())!;
    expect(live.status).toBe('UPDATE_COMPLETE');
    expect(h.status()).toMatchObject({
      cloudConfigChecksum: live.outputs.ConfigChecksum,
      stackStatus: 'UPDATE_COMPLETE',
      stackId: live.id,
    });
    expect(h.status().cloudConfigChecksum).not.toBe(before);

    // WHEN the next passes run
    const next = [(await h.pass()).outcomes.get(EXAMPLE)?.result, (await h.pass()).outcomes.get(EXAMPLE)?.result];

    // THEN nothing is left to do
    expect(next).toEqual(['unchanged', 'unchanged']);
    expect(h.cfn.count('createChangeSet', 'executeChangeSet')).toBe(0);
    expect(h.cfn.started.filter((o) => o.kind === 'update')).toHaveLength(1);
    expect(h.status()).toMatchObject({ observedGeneration: 2, cloudConfigChecksum: live.outputs.ConfigChecksum });
    expect(h.condition('Ready')?.status).toBe('True');
  });
});

describe('crash injection after each task', () => {
  const baseline = new Map<Scenario, ReturnType<typeof settled>>();
  beforeAll(async () => {
    for (const scenario of ['create', 'update'] as const) {
      h = await given(scenario);
      expect((await h.reconcile()).result).toBe('applied');
      baseline.set(scenario, settled(h.status()));
      h.cleanup();
    }
  });

  const tasks: string[] = taskNames();
  const rows = (['create', 'update'] as const).flatMap((scenario) => tasks.map((task) => ({ scenario, task })));

  test.each(rows)(
    '$scenario: crash after $task, restart → same recorded state, at most one execution',
    async ({ scenario, task }) => {
      // GIVEN a pass that dies right after `task` (dry-run never runs outside a dry run; recover only when a stack exists;
      // skip-if-same-inputs only in a controller pass with a stack listing, and it writes nothing a crash could cut)
      h = await given(scenario);
      // (paused, report-drift, acquire-slot, check-version, wait-for-wave and clean-config-objects only run for a paused
      // cluster, --drift=report, a controller's slots, a daemon that knows its release, a rollout policy and a config
      // object store; the rollout tests crash those; finalize only with a store that holds deletions: deletion.test.ts)
      const runs =
        ![
          'finalize',
          'dry-run',
          'skip-if-same-inputs',
          'paused',
          'report-drift',
          'acquire-slot',
          'check-version',
          'wait-for-wave',
          'clean-config-objects',
        ].includes(task) && !(task === 'recover' && scenario === 'create');
      let crashed = false;
      const crashing = h.reconcile(EXAMPLE, {
        hooks: {
          after: (t) => {
            if (t !== task) return;
            crashed = true;
            throw new CrashSignal(`killed after ${t}`);
          },
        },
      });
      if (runs) await expect(crashing).rejects.toBeInstanceOf(CrashSignal);
      else await crashing;
      expect(crashed).toBe(runs);

      // WHEN the process restarts and reconciles until nothing is left to do
      const outcomes = await restartUntilUnchanged();

      // THEN the recorded state equals a run without the crash, and the change was applied exactly once
      expect(outcomes.at(-1)?.result).toBe('unchanged');
      expect(settled(h.status())).toEqual(baseline.get(scenario));
      expect(h.status().cloudConfigChecksum).toBe(h.cfn.peek(h.stackName())?.outputs.ConfigChecksum);
      expect(h.cfn.count('executeChangeSet')).toBeLessThanOrEqual(1);
      expect(h.cfn.started).toEqual([{ stackName: h.stackName(), kind: scenario }]);
    },
  );
});
