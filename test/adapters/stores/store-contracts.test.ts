import { createStore, STORE_KINDS, StoreKind, StoreOptions, STORES } from '../../../lib/adapters/stores/registry';
import { CapabilityFixture } from './capability-fixture';
import { missingSuites, registeredSuites } from './contract-coverage';
import { eventsContract } from './events-contract';
import { historyContract } from './history-contract';
import { leaseContract } from './lease-contract';
import { qualifiedNamesContract } from './qualified-names-contract';
import { storeContract } from './store-contract';
import { STORE_HARNESSES } from './store-harnesses';

/**
 * Every store of the registry (lib/adapters/stores/registry.ts) under the store contract, and under the contract of each
 * capability its provider declares, each store opened as the CLI and the daemon open it (createStore from options).
 * A store added to the registry runs here once it has a harness (test/adapters/stores/store-harnesses.ts): no new test file.
 * The Kubernetes store runs against a real kube-apiserver and etcd (one for its block, a namespace per test).
 */
function contractsOf(kind: StoreKind): void {
  const newWorld = STORE_HARNESSES[kind].prepare();
  const fixture = async (): Promise<CapabilityFixture> => {
    const world = await newWorld();
    // The harness of `kind` gives options of that kind: StoreOptions pairs them (the compiler cannot, through a union).
    const choice = { kind, options: world.options } as StoreOptions;
    const opened = createStore(choice);
    return {
      world,
      choice,
      opened,
      async dispose() {
        opened.close();
        await world.dispose();
      },
    };
  };
  storeContract(kind, async () => {
    const f = await fixture();
    return {
      store: f.opened.store,
      put: (raw) => f.world.put(raw),
      remove: (name) => f.world.remove(name),
      dispose: () => f.dispose(),
    };
  });
  const provider = STORES[kind];
  if (provider.events) eventsContract(kind, fixture);
  if (provider.history) historyContract(kind, fixture);
  if (provider.qualifiedNames) qualifiedNamesContract(kind, fixture);
  if (provider.leaderElection) leaseContract(kind, fixture);
}

for (const kind of STORE_KINDS)
  describe(`${kind} store`, () => {
    contractsOf(kind);
  });

describe('coverage of the registry', () => {
  test('every registered store runs the base contract and the contract of each capability it declares', () => {
    // GIVEN the registry and the suites this file registered, WHEN compared, THEN nothing is missing
    expect(missingSuites(STORES, registeredSuites())).toEqual([]);
    expect([...registeredSuites().keys()].sort()).toEqual(Object.keys(STORES).sort());
  });

  test('a store added to the registry without its suites is reported, suite by suite', () => {
    // GIVEN the registry with one more store declaring events, and no suite registered for it
    const grown = { ...STORES, etcd: { ...STORES.file, events: () => undefined } };

    // WHEN compared with the suites registered, THEN its base, history (from the file store) and events suites are missing
    expect(missingSuites(grown, registeredSuites())).toEqual(['etcd: base', 'etcd: events', 'etcd: history']);
  });
});
