import * as synthesis from '../../lib/reconciler/synthesize';
import { fail } from '../fakes/fake-cloudformation';
import { ASG_FAILURE, Harness } from '../fakes/harness';

/** Fifty clusters through the Controller: one batched listing, one failure that stops no one, a quiet second pass. */

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

  // and a count of clusters in flight each time one starts (the controller logs one line with the result when one ends)
  let started = 0;
  let maxInFlight = 0;
  const ended = () => h.log.entries.filter((e) => 'result' in e.obj).length;
  const hooks = {
    before: (task: string) => {
      if (task === 'validate') maxInFlight = Math.max(maxInFlight, ++started - ended());
    },
  };

  // WHEN the controller runs one pass with concurrency 8
  const first = await h.pass({ concurrency: 8, hooks }, deps());

  // THEN every other cluster was created and is Ready; the failing one is Failed with its reason
  const results = new Map([...first.outcomes].map(([name, o]) => [name, o.result]));
  expect([...results.keys()].sort()).toEqual(NAMES);
  expect(new Map(NAMES.map((n) => [n, n === FAILING ? 'failed' : 'applied']))).toEqual(results);
  for (const name of NAMES.filter((n) => n !== FAILING)) {
    expect(h.condition('Ready', name)?.status).toBe('True');
    expect(h.status(name).cloudConfigChecksum).toBe(h.cfn.peek(h.stackName(name))?.outputs.ConfigChecksum);
  }
  expect(h.condition('Failed', FAILING)).toMatchObject({ status: 'True', reason: 'CreateRolledBack' });
  expect(h.condition('Failed', FAILING)?.message).toContain(ASG_FAILURE.reason);
  // one batched read of the stacks for the whole pass, no describe per cluster
  expect(first.regionsListed).toBe(1);
  expect(h.cfn.count('listStacks')).toBe(1);
  expect(h.cfn.count('describeStack')).toBe(0);
  expect(h.cfn.count('executeChangeSet')).toBe(50);
  expect(synth).toHaveBeenCalledTimes(50);
  expect(started).toBe(50);
  expect(maxInFlight).toBe(8);

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
