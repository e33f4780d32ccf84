import * as fs from 'node:fs';
import { ReconcilerDeps } from '../../../../lib/engines/reconciler/workflow/context';
import { stackVersion } from '../../../../lib/engines/reconciler/tasks/roll-key';
import { Harness } from '../../../fakes/harness';
import { SimPublisher, simSynthesizer } from '../../../sim/sim-synth';

/*
 * Issue 33: the roll key's recipe changed (rk1 → rk2) between releases. status.controller.rollKeys keeps the keys an
 * older daemon read; a key of the old recipe compared with one of the new always differs, so the roll-key task must
 * read the live template again rather than say "rolls" for a change that replaces no node.
 */

const CLUSTER = 'recipe-eu1';
let h: Harness;
let deps: ReconcilerDeps;
beforeEach(() => {
  h = new Harness({ clusters: [] });
  h.addCluster(CLUSTER);
  const publisher = new SimPublisher();
  deps = h.deps({ synthesizer: simSynthesizer, aws: () => ({ cfn: h.cfn, publisher }) });
});
afterEach(() => h.cleanup());

/** Writes the cached keys as a release of the rk1 recipe left them: for the live stack as it is now. */
async function cacheOfOlderRecipe(): Promise<void> {
  const file = h.stateFilePath(CLUSTER);
  const state = JSON.parse(fs.readFileSync(file, 'utf8'));
  const stack = await h.cfn.describeStack(h.stackName(CLUSTER));
  state.status.controller.rollKeys = {
    inputs: 'inputs-an-older-release-read',
    stack: stackVersion(stack!),
    desired: { key: 'rk1:00112233445566aa', parts: {} },
    live: { key: 'rk1:00112233445566bb', parts: {} },
  };
  fs.writeFileSync(file, JSON.stringify(state));
}

test('GIVEN keys of the older recipe cached for the live stack WHEN a change that replaces no node is looked at THEN the keys are read again and nothing rolls', async () => {
  // GIVEN the cluster created, its keys cached, then rewritten as an rk1 release cached them
  expect((await h.reconcile(CLUSTER, {}, deps)).result).toBe('applied');
  expect(h.status(CLUSTER).rollKey ?? 'rk2:').toMatch(/^rk2:/);
  h.edit(CLUSTER, (raw) => (raw.spec.pool.maxSize = Number(raw.spec.pool.maxSize) + 4));
  await cacheOfOlderRecipe();
  // WHEN a dry run looks at the bigger group
  const outcome = await h.step(CLUSTER, {}, { ...deps, dryRun: true });
  // THEN it says no node is replaced, from keys of this recipe
  expect(outcome.message).toMatch(/no node is replaced \(the roll key is unchanged\)$/);
});
