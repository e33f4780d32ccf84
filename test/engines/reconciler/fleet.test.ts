import { TASK } from '../../../lib/engines/reconciler/workflow/context';
import * as synthesis from '../../../lib/engines/synthesis/synthesize';
import { before } from '../../../lib/engines/reconciler/workflow/task';
import { fail } from '../../fakes/fake-cloudformation';
import { ASG_FAILURE, Harness } from '../../fakes/harness';

/** Fifty clusters through the Controller: one batched listing per pass, one failure that stops no one, a quiet second pass. */

const NAMES = Array.from({ length: 50 }, (_, i) => `cluster-${String(i).padStart(2, '0')}`);
const FAILING = 'cluster-13';
const synth = jest.spyOn(synthesis, 'synthesizeStack');

let h: Harness;
afterAll(() => h.cleanup());

test('49 clusters reach Ready while one fails; one listing per pass; an unchanged second pass synthesizes and writes nothing', async () => {
  // GIVEN 50 cluster objects, the stack of one of them failing to create
  h = new Harness({ clusters: NAMES });
  h.cfn.setDefault(h.stackName(FAILING), fail(ASG_FAILURE));
  // A long backoff keeps the failed cluster waiting through the second pass.
  const deps = () => h.deps({ backoff: { baseMs: 3_600_000, maxMs: 3_600_000, random: () => 0.5 } });

  // and a count of reconciles in flight each time one starts (the controller logs one line with the result when one
  // ends), and of the stacks in progress each time the controller sleeps until its next pass
  const started = new Set<string>();
  let starts = 0;
  let maxInFlight = 0;
  const ended = () => h.log.entries.filter((e) => 'result' in e.obj).length;
  const hooks = [
    before(TASK.validate, (ctx) => {
      started.add(ctx.record.name);
      maxInFlight = Math.max(maxInFlight, ++starts - ended());
    }),
  ];
  let maxInProgress = 0;
  const advance = h.cfn.advance.bind(h.cfn);
  h.cfn.advance = (ms) => {
    const inProgress = NAMES.filter((n) => h.cfn.peek(h.stackName(n))?.status.endsWith('_IN_PROGRESS'));
    maxInProgress = Math.max(maxInProgress, inProgress.length);
    advance(ms);
  };

  // WHEN the controller runs passes until the fleet settles, with concurrency 8 (stacks in progress, and workers)
  const first = await h.pass({ concurrency: 8, hooks }, deps());

  // THEN every other cluster was created and is Ready; the failing one is Degraded with its reason (a retried failure)
  const results = new Map([...first.outcomes].map(([name, o]) => [name, o.result]));
  expect([...results.keys()].sort()).toEqual(NAMES);
  expect(new Map(NAMES.map((n) => [n, n === FAILING ? 'failed' : 'applied']))).toEqual(results);
  for (const name of NAMES.filter((n) => n !== FAILING)) {
    expect(h.condition('Ready', name)?.status).toBe('True');
    expect(h.status(name).cloudConfigChecksum).toBe(h.cfn.peek(h.stackName(name))?.outputs.ConfigChecksum);
  }
  expect(h.problem(FAILING)).toMatchObject({ type: 'Degraded', status: 'True', reason: 'CreateRolledBack' });
  expect(h.problem(FAILING)?.message).toContain(ASG_FAILURE.reason);
  // at most 8 stacks in progress at once: 50 stacks take ceil(50 / 8) = 7 polls, and one more pass records the last
  // ones. At most one listing of every stack and one of the stacks in progress per poll, and a stack is described
  // alone only once, when its operation has ended: never a read per cluster per poll
  const polls = Math.ceil(50 / 8) + 1;
  expect(maxInProgress).toBe(8);
  expect(h.cfn.count('listStacks')).toBeLessThanOrEqual(polls);
  expect(h.cfn.count('listStacksInProgress')).toBeLessThanOrEqual(polls);
  expect(h.cfn.count('describeStack')).toBeLessThanOrEqual(50);
  expect(h.cfn.count('executeChangeSet')).toBe(50);
  expect(synth).toHaveBeenCalledTimes(50);
  expect(started.size).toBe(50);
  expect(maxInFlight).toBe(8);
  expect(first.controller.slots.size).toBe(0);

  // WHEN a second pass runs over the unchanged fleet
  h.cfn.resetCalls();
  synth.mockClear();
  h.statusWrites = 0;
  const publishes = h.publisher.calls;
  const second = await h.pass({ concurrency: 8 }, deps());

  // THEN nothing is synthesized or written: one listing, 49 unchanged, the failed one waiting for its backoff
  expect([...second.outcomes.values()].filter((o) => o.result === 'unchanged')).toHaveLength(49);
  expect(second.outcomes.get(FAILING)?.result).toBe('backoff');
  expect(synth).not.toHaveBeenCalled();
  expect(Object.fromEntries(h.cfn.calls)).toEqual({ listStacks: 1 });
  expect(h.publisher.calls).toBe(publishes);
  expect(h.statusWrites).toBe(0);
});
