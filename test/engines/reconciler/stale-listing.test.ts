import { Controller } from '../../../lib/engines/reconciler/runtime/controller';
import { EXAMPLE, Harness } from '../../fakes/harness';

let h: Harness;
afterEach(() => h.cleanup());

test('a listing taken before our own create never makes the new stack look deleted', async () => {
  // GIVEN a pass that created the stack (which takes 30 s), and a shared listing from before the create
  h = new Harness();
  h.cfn.setDefault(h.stackName(), { kind: 'complete', polls: 6 });
  const controller = new Controller(h.deps());
  expect((await controller.runPass()).outcomes.get(EXAMPLE)?.result).toBe('waiting');

  // WHEN an edit event reconciles the cluster 1 s later, within the listing's poll interval
  h.clock.advance(1000);
  const outcome = await controller.reconcileKey(EXAMPLE);

  // THEN it looks at the stack itself and keeps watching: no StackDeleted, nothing counted as a failure
  expect(outcome?.result).toBe('waiting');
  expect(h.problem()?.status).not.toBe('True');
  expect(h.status().controller?.failures ?? 0).toBe(0);
  expect(h.cfn.started).toHaveLength(1);
});
