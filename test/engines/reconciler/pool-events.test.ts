import { ClusterEvent } from '../../../lib/engines/reconciler/workflow/events';
import { ReconcilerDeps } from '../../../lib/engines/reconciler/workflow/context';
import { Harness } from '../../fakes/harness';
import { defaultAndSpot } from '../../helpers/named-pools';
import { SimPublisher, simSynthesizer } from '../../sim/sim-synth';

// The events of a cluster with pools in stacks of their own (issue 32, item 15): `kubectl describe wc` must show the
// cluster's roll ending, as it does for a single-pool cluster, and each pool's.

const CLUSTER = 'pools-eu1';
let h: Harness;
let deps: ReconcilerDeps;
let events: ClusterEvent[];
beforeEach(() => {
  h = new Harness({ clusters: [] });
  h.addCluster(CLUSTER, defaultAndSpot);
  events = [];
  const publisher = new SimPublisher();
  deps = h.deps({
    synthesizer: simSynthesizer,
    aws: () => ({ cfn: h.cfn, publisher }),
    events: { emit: async (_c, e) => void events.push(e) },
  });
});
afterEach(() => h.cleanup());

test('a pooled cluster created: each stack says it is complete, and so does the cluster once every pool is', async () => {
  // WHEN the cluster is created and settles
  expect((await h.reconcile(CLUSTER, {}, deps)).result).toBe('applied');

  // THEN StackComplete for the shared stack, the pool's stack, and the cluster as a whole
  const complete = events.filter((e) => e.reason === 'StackComplete').map((e) => e.message);
  expect(complete).toEqual(
    expect.arrayContaining([expect.stringMatching(/^pool spot \(WorkerStack-pools-eu1-Pool-spot\): /)]),
  );
  expect(complete.filter((m) => !m.startsWith('pool '))).toEqual([expect.stringMatching(/^every pool is Ready; /)]);

  // AND an unchanged pass says nothing again
  const before = events.length;
  await h.reconcile(CLUSTER, {}, deps);
  expect(events.length).toBe(before);
});
