import { poolStackName } from '../../../lib/core/naming';
import { ReconcilerDeps } from '../../../lib/engines/reconciler/workflow/context';
import { Harness } from '../../fakes/harness';
import { Json } from '../../helpers/json';
import { SimPublisher, simSynthesizer } from '../../sim/sim-synth';

/**
 * Issue 33, finding 5: each pool's roll is described with its own settings (the daemon described the spot pool's roll
 * with the primary pool's batches), and says why it replaces nodes (its roll key's cause), one pool at a time.
 */

const CLUSTER = 'words-us1';
let h: Harness;
let deps: ReconcilerDeps;
beforeEach(() => {
  h = new Harness({ clusters: [] });
  h.addCluster(CLUSTER, (raw) => {
    const pool: Json = raw.spec.pool;
    delete raw.spec.pool;
    raw.spec.pools = [
      { ...pool, name: 'system', rollingUpdate: { ...pool.rollingUpdate, maxBatchSize: 1, minInstancesInService: 1 } },
      {
        ...pool,
        name: 'spot',
        minSize: 0,
        rollingUpdate: { ...pool.rollingUpdate, maxBatchSize: 3, minInstancesInService: 0 },
      },
    ];
  });
  const publisher = new SimPublisher();
  deps = h.deps({ synthesizer: simSynthesizer, aws: () => ({ cfn: h.cfn, publisher }) });
});
afterEach(() => h.cleanup());

test("a new image in both pools: each pool's roll line names its cause and its own batches", async () => {
  // GIVEN the cluster created
  expect((await h.reconcile(CLUSTER, {}, deps)).result).toBe('applied');
  const from = h.log.entries.length;

  // WHEN both pools get another machine image
  h.edit(CLUSTER, (raw) => {
    for (const p of raw.spec.pools as Json[]) p.machineImage = 'ami-0fedcba9876543210';
  });
  expect((await h.reconcile(CLUSTER, {}, deps)).result).toBe('applied');

  // THEN each pool's stack rolled, one after the other, each line with its own settings
  const lines = h.log.entries
    .slice(from)
    .filter((e) => e.msg?.startsWith('rolling the nodes (image)'))
    .map((e) => ({ pool: e.bindings.pool, msg: e.msg }));
  expect(lines).toEqual([
    { pool: 'system', msg: expect.stringMatching(/in batches of 1, at least 1 in service/) },
    { pool: 'spot', msg: expect.stringMatching(/in batches of 3, at least 0 in service/) },
  ]);
  expect(h.cfn.started.filter((s) => s.stackName === poolStackName(CLUSTER, 'spot')).length).toBe(2);
});

test.each<[string, (raw: Json) => void, RegExp]>([
  [
    'a new image',
    (raw) => ((raw.spec.pools as Json[])[1].machineImage = 'ami-0fedcba9876543210'),
    /^would update the stack and replace the nodes \(image\): the config [0-9a-f]{12} is unchanged$/,
  ],
  [
    'a bigger group',
    (raw) => ((raw.spec.pools as Json[])[1].maxSize = 9),
    /^would update the stack \(\w+\); the config [0-9a-f]{12} is unchanged, no node is replaced \(the roll key is unchanged\)$/,
  ],
])('a dry run says from the roll keys whether %s replaces nodes, and writes nothing', async (_what, edit, said) => {
  // GIVEN the cluster created, then edited
  expect((await h.reconcile(CLUSTER, {}, deps)).result).toBe('applied');
  h.edit(CLUSTER, edit);
  const writes = h.cfn.mutatingCalls();
  // WHEN a dry run looks at it
  const outcome = await h.step(CLUSTER, {}, { ...deps, dryRun: true });
  // THEN it says what the spot pool's change would do to its nodes, and nothing was written
  expect(outcome.pools?.find((p) => p.pool === 'spot')?.message).toMatch(said);
  expect(h.cfn.mutatingCalls()).toBe(writes);
});
