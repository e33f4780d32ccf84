import { createStore, narrowStore } from '../../../lib/adapters/stores/registry';
import { CapabilityFixture, required } from './capability-fixture';
import { recordSuite } from './contract-coverage';
import { objectNamed } from './store-contract';

/** The qualified-names capability: `scope/name` (kubectl's namespace/name) reaches the object in that scope. */
export function qualifiedNamesContract(kind: string, makeFixture: () => Promise<CapabilityFixture>): void {
  recordSuite(kind, 'qualifiedNames');
  describe(`${kind} store: qualified names contract`, () => {
    let f: CapabilityFixture | undefined;
    afterEach(async () => {
      await f?.dispose();
      f = undefined;
    });

    test('the store narrowed to a scope finds the object there; the store as opened does not', async () => {
      // GIVEN an object in another scope than the store's
      f = await makeFixture();
      const putElsewhere = required(
        f.world.putElsewhere?.bind(f.world),
        'StoreWorld.putElsewhere in test/adapters/stores/store-harnesses.ts',
      );
      const scope = await putElsewhere(objectNamed('elsewhere'));
      expect(await f.opened.store.get('elsewhere')).toBeUndefined();

      // WHEN the options are narrowed to that scope
      const narrowed = createStore(required(narrowStore(f.choice, scope), 'narrowed options'));

      // THEN that store gets it
      try {
        expect((await narrowed.store.get('elsewhere'))?.name).toBe('elsewhere');
      } finally {
        narrowed.close();
      }
    });
  });
}
