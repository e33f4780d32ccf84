import { ClusterStatus } from '../../../lib/model/cluster/schema/status';
import { CapabilityFixture, required } from './capability-fixture';
import { recordSuite } from './contract-coverage';
import { objectNamed } from './store-contract';

const status = (reason: string): ClusterStatus => ({
  conditions: [
    {
      type: 'Ready',
      status: 'True',
      reason,
      message: `m ${reason}`,
      lastTransitionTime: '2024-01-02T03:04:05.000Z',
      observedGeneration: 1,
    },
  ],
  stackName: 'WorkerStack-alpha',
});

/** The history capability: a removed object's status stays (so `status` still shows its stack) until cleared. */
export function historyContract(kind: string, makeFixture: () => Promise<CapabilityFixture>): void {
  recordSuite(kind, 'history');
  describe(`${kind} store: history contract`, () => {
    let f: CapabilityFixture | undefined;
    afterEach(async () => {
      await f?.dispose();
      f = undefined;
    });

    test('a removed object keeps its status: named by statusNames, read by get, until clearStatus', async () => {
      // GIVEN an object with a status
      f = await makeFixture();
      const history = required(f.opened.history, "the store opened with its provider's history");
      const store = f.opened.store;
      await f.world.put(objectNamed('alpha'));
      await store.writeStatus('alpha', status('Live'), required(await store.get('alpha'), 'alpha').resourceVersion);

      // WHEN the object is removed
      await f.world.remove('alpha');

      // THEN it is not listed, but its status is named and read
      expect((await store.list()).map((r) => r.name)).not.toContain('alpha');
      expect(history.statusNames()).toEqual(['alpha']);
      const gone = required(await store.get('alpha'), "the removed object's record");
      expect(gone.raw).toBeUndefined();
      expect(gone.status).toEqual(status('Live'));

      // WHEN its status is cleared, THEN it is named no more
      await store.clearStatus('alpha', gone.resourceVersion);
      expect(history.statusNames()).toEqual([]);
    });

    test('an object that never had a status is not named', async () => {
      // GIVEN an object listed but never given a status
      f = await makeFixture();
      const history = required(f.opened.history, "the store opened with its provider's history");
      await f.world.put(objectNamed('alpha'));
      await f.opened.store.list();

      // WHEN it is removed, THEN no status is named
      await f.world.remove('alpha');
      expect(history.statusNames()).toEqual([]);
    });
  });
}
