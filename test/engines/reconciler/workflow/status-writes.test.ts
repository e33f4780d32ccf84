import * as fs from 'node:fs';
import * as path from 'node:path';
import { STACK_FINALIZER } from '../../../../lib/platform/kube/resource';
import { ConfigObjectStore } from '../../../../lib/platform/aws/config-objects';
import { ReconcilerDeps, TASK } from '../../../../lib/engines/reconciler/workflow/context';
import { before } from '../../../../lib/engines/reconciler/workflow/task';
import { ReconcileOptions } from '../../../../lib/engines/reconciler/compose/reconcile-cluster';
import { ClusterStore } from '../../../../lib/model/ports/cluster-store';
import { fail, stuck } from '../../../fakes/fake-cloudformation';
import { EXAMPLE, Harness, LAUNCH_TEMPLATE_FAILURE } from '../../../fakes/harness';
import { SimPublisher, simSynthesizer } from '../../../sim/sim-synth';

/**
 * One status write per reconcile (plus the one before ExecuteChangeSet): the tasks stage what they change, the
 * workflow writes it once, on every exit. Each row brings one cluster to a state, then counts the store's writes of
 * exactly one reconcile of it.
 */

let h: Harness;
beforeEach(() => {
  h = new Harness();
});
afterEach(() => h.cleanup());

interface RawCluster {
  spec: { cloudConfig: { values: Record<string, unknown> }; paused?: boolean; deletionPolicy?: string };
}
const maxPods = (n: number) => (raw: RawCluster) => {
  raw.spec.cloudConfig.values.maxPods = n;
};

/** Config objects in memory: the settled workflow cleans them up (a second bookkeeping change after a success). */
function configObjects(): ConfigObjectStore {
  return { list: () => Promise.resolve([]), delete: () => Promise.resolve({ deleted: [], errors: [] }) };
}

/** A store that shows the object as deleted with the stack finalizer on it (as the API server holds it). */
function deleting(inner: ClusterStore): ClusterStore {
  return {
    list: () => inner.list(),
    get: async (n) => {
      const r = await inner.get(n);
      return r && { ...r, finalizers: [STACK_FINALIZER], deletionRequested: true };
    },
    writeStatus: (n, s, v) => inner.writeStatus(n, s, v),
    clearStatus: (n, v) => inner.clearStatus(n, v),
    requestRetry: (n, t) => inner.requestRetry(n, t),
    setPaused: (n, p) => inner.setPaused(n, p),
    setFinalizer: () => Promise.resolve(),
    watch: (f) => inner.watch(f),
  };
}

/** Brings the harness to a state; returns the deps of the one reconcile counted, and its options. */
type Setup = () => Promise<{ deps?: ReconcilerDeps; hooks?: ReconcileOptions['hooks'] }>;
const applied = async (): Promise<void> => {
  await h.reconcile();
};

const PATHS: [string, Setup, string, number][] = [
  ['unchanged', async () => (await applied(), {}), 'unchanged', 1],
  ['first create (executed)', () => Promise.resolve({}), 'waiting', 2],
  ['update executed', async () => (await applied(), h.edit(EXAMPLE, maxPods(110)), {}), 'waiting', 2],
  [
    'update in progress',
    async () => {
      await applied();
      h.edit(EXAMPLE, maxPods(110));
      h.cfn.script(h.stackName(), stuck());
      await h.step();
      return {};
    },
    'waiting',
    1,
  ],
  [
    'update complete, then old config objects cleaned up',
    async () => {
      await applied();
      h.edit(EXAMPLE, maxPods(110));
      const deps = h.deps({ aws: () => ({ cfn: h.cfn, publisher: h.publisher, configObjects: configObjects() }) });
      await h.step(EXAMPLE, {}, deps);
      h.cfn.advance(5000);
      return { deps };
    },
    'applied',
    1,
  ],
  [
    'update rolled back',
    async () => {
      await applied();
      h.edit(EXAMPLE, maxPods(110));
      h.cfn.script(h.stackName(), fail(LAUNCH_TEMPLATE_FAILURE));
      await h.step();
      h.cfn.advance(5000);
      return {};
    },
    'failed',
    1,
  ],
  [
    'rolled back with --max-update-attempts 1: stalled',
    async () => {
      await applied();
      h.edit(EXAMPLE, maxPods(110));
      h.cfn.script(h.stackName(), fail(LAUNCH_TEMPLATE_FAILURE));
      const deps = h.deps({ maxUpdateAttempts: 1 });
      await h.step(EXAMPLE, {}, deps);
      h.cfn.advance(5000);
      return { deps };
    },
    'stalled',
    1,
  ],
  ['invalid spec', async () => (await applied(), h.edit(EXAMPLE, maxPods(-1)), {}), 'invalid', 1],
  [
    'paused with a pending change',
    async () => (
      await applied(),
      h.edit(EXAMPLE, (raw: RawCluster) => {
        raw.spec.paused = true;
        maxPods(110)(raw);
      }),
      {}
    ),
    'paused',
    1,
  ],
  [
    'deleted with deletionPolicy Delete',
    async () => {
      await applied();
      h.edit(EXAMPLE, (raw: RawCluster) => {
        raw.spec.deletionPolicy = 'Delete';
      });
      return { deps: h.deps({ store: deleting(h.deps().store) }) };
    },
    'waiting',
    1,
  ],
  [
    'an error thrown mid-task, after a retry request was taken up',
    async () => {
      await applied();
      h.edit(EXAMPLE, maxPods(110));
      h.cfn.script(h.stackName(), fail(LAUNCH_TEMPLATE_FAILURE));
      await h.step();
      h.cfn.advance(5000);
      await h.step();
      await h.deps().store.requestRetry(EXAMPLE, 'retry-1');
      return { hooks: [before(TASK.publish, () => Promise.reject(new Error('the bucket is gone')))] };
    },
    'stalled',
    1,
  ],
  [
    'ExecuteChangeSet throttled after the write before it',
    async () => {
      await applied();
      h.edit(EXAMPLE, maxPods(110));
      h.cfn.throttle('executeChangeSet', 1);
      return {};
    },
    'transient',
    2,
  ],
];

test.each(PATHS)(
  '%s: at most one status write (two when a change set is executed)',
  async (_what, setup, result, max) => {
    // GIVEN a cluster brought to the state of the row
    const { deps = h.deps(), hooks } = await setup();
    const writes = h.statusWrites;

    // WHEN it is reconciled once
    const outcome = await h.step(EXAMPLE, { hooks }, deps);

    // THEN the reconcile ends as the row says, with at most `max` writes of its status (and the last one is what it staged)
    expect(outcome.result).toBe(result);
    expect(h.statusWrites - writes).toBeLessThanOrEqual(max);
    expect(h.statusWrites - writes).toBeGreaterThanOrEqual(result === 'unchanged' ? 0 : 1);
  },
);

test('no task can write the status: only the execute task asks for the one write before ExecuteChangeSet', () => {
  // GIVEN the task sources
  const dir = path.resolve(__dirname, '..', '..', '..', '..', 'lib', 'engines', 'reconciler', 'tasks');
  const sources = fs.readdirSync(dir).map((f) => [f, fs.readFileSync(path.join(dir, f), 'utf8')] as const);

  // THEN none writes the status or flushes the recorder, and only apply.ts (the execute task) writes before executing
  for (const [file, text] of sources) {
    expect({ file, writes: /\.(writeStatus|flush|write)\(/.test(text) }).toEqual({ file, writes: false });
  }
  expect(sources.filter(([, text]) => text.includes('writeBeforeMutation(')).map(([f]) => f)).toEqual(['apply.ts']);
});

test('a failed write before ExecuteChangeSet: nothing is executed, and no execution is recorded', async () => {
  // GIVEN a live stack, an edit, and a store whose next status write fails (not a conflict)
  await applied();
  h.edit(EXAMPLE, maxPods(110));
  h.cfn.resetCalls();
  const deps = h.deps();
  const write = deps.store.writeStatus.bind(deps.store);
  let writes = 0;
  deps.store.writeStatus = (...args) =>
    writes++ === 0 ? Promise.reject(new Error('EIO: the disk went away')) : write(...args);

  // WHEN it is reconciled once
  const outcome = await h.step(EXAMPLE, {}, deps);

  // THEN the change set was not executed, and the failure recorded says nothing of an execution
  expect(outcome.result).toBe('failed');
  expect(h.cfn.count('executeChangeSet')).toBe(0);
  expect(h.status().controller?.executing).toBeUndefined();
  expect(h.condition('Degraded')).toMatchObject({ status: 'True', reason: 'ReconcileFailed' });
});

test.each([
  // pools the edit rolls, maxConcurrentPools, stacks executed in the one reconcile
  ['every stack (a cluster-wide value)', 3, 3],
  ['every stack, one pool at a time', 1, 2],
] as const)(
  'a cluster with pools, %s: at most one status write per stack executed, plus one at the end',
  async (_what, maxConcurrentPools, executed) => {
    // GIVEN a settled cluster with two pools in stacks of their own (system, spot), synthesized per stack
    const name = 'pools-us1';
    h.addCluster(name, (raw) => {
      raw.spec.pools = [
        { ...raw.spec.pool, name: 'system' },
        { ...raw.spec.pool, name: 'spot' },
      ];
      delete raw.spec.pool;
      raw.spec.rollout = { ...raw.spec.rollout, maxConcurrentPools };
    });
    const publisher = new SimPublisher();
    const deps = h.deps({ synthesizer: simSynthesizer, aws: () => ({ cfn: h.cfn, publisher }) });
    await h.reconcile(name, {}, deps);
    h.cfn.resetCalls();
    const writes = h.statusWrites;

    // WHEN a value every pool's config reads changes, and the cluster is reconciled once
    h.edit(name, maxPods(110));
    const outcome = await h.step(name, {}, deps);

    // THEN each stack it may roll is executed, with one write before each execute and at most one more at the end
    expect(outcome.result).toBe('waiting');
    expect(h.cfn.count('executeChangeSet')).toBe(executed);
    expect(h.statusWrites - writes).toBeGreaterThanOrEqual(executed);
    expect(h.statusWrites - writes).toBeLessThanOrEqual(executed + 1);
  },
);
