import type { ChannelStore } from '../../engines/channels';
import type { LeaderElector } from '../../platform/kube/leader-election';
import type { RolloutPolicySource } from '../../engines/rollout';
import { ClusterStore } from '../../model/ports/cluster-store';
import { EventSink } from '../../model/ports/event-sink';
import { FILE_STORE } from './file-store-provider';
import { KUBERNETES_STORE } from './kubernetes-store-provider';
import {
  ElectionLogger,
  LeaderSettings,
  StatusHistory,
  StoreCapability,
  StoreContext,
  StoreDirs,
  StoreFlagValues,
  StoreProvider,
} from './store-provider';

/**
 * The stores, by `--store` kind: a new store is one file (its StoreProvider) plus one entry here. Every kind's flags
 * reach every store command (lib/adapters/cli/store-flags.ts), its capabilities are wired where they are used (leader election
 * in lib/adapters/cli/leadership.ts, events in lib/adapters/cli/wiring.ts), and test/adapters/stores/store-contracts.test.ts runs
 * the contract suites of every entry: the base one, and one per capability it declares.
 */
const PROVIDERS = {
  file: FILE_STORE,
  kubernetes: KUBERNETES_STORE,
};

type Providers = typeof PROVIDERS;
/** `--store <kind>`: the registry's keys. */
export type StoreKind = keyof Providers;
type OptionsMap = { [K in StoreKind]: ReturnType<Providers[K]['parseOptions']> };
type StoreMap = { [K in StoreKind]: ReturnType<Providers[K]['createStore']> };
/** The options of one kind of store. */
export type OptionsOf<K extends StoreKind> = OptionsMap[K];

/** Typed as a record over every kind: an entry whose options or store do not match its provider does not compile. */
export const STORES: { readonly [K in StoreKind]: StoreProvider<OptionsMap[K], StoreMap[K]> } = PROVIDERS;

/** Every kind, in registration order. */
export const STORE_KINDS = Object.keys(STORES) as StoreKind[];

/** The default store. */
export const DEFAULT_STORE: StoreKind = 'file';

export function isStoreKind(kind: string): kind is StoreKind {
  return Object.hasOwn(STORES, kind);
}

/** The kinds that declare a capability, in registration order. */
export function kindsWith(capability: StoreCapability): StoreKind[] {
  return STORE_KINDS.filter((k) => STORES[k][capability] !== undefined);
}

/** One kind of store and its options. */
export interface StoreSelection<K extends StoreKind> {
  readonly kind: K;
  readonly options: OptionsOf<K>;
}

/** Which store holds the cluster objects (`--store` and its flags), of any kind. */
export type StoreOptions = { [K in StoreKind]: StoreSelection<K> }[StoreKind];

/** A store as the registry opens it: the ClusterStore, and the capabilities its provider declares. */
export interface OpenedStore {
  readonly store: ClusterStore;
  /** Events on its objects. @default none */
  readonly events?: EventSink;
  /** Status of removed objects. @default none */
  readonly history?: StatusHistory;
  /** Releases connections and watches (a CLI command then exits at once). */
  close(): void;
}

/** The one place a store is constructed. */
export function createStore<K extends StoreKind>(choice: StoreSelection<K>, context: StoreContext = {}): OpenedStore {
  return open(STORES[choice.kind], choice.options, context);
}

/** The one place a rollout-policy source is constructed, from the store the flags name. */
export function createPolicySource<K extends StoreKind>(
  choice: StoreSelection<K>,
  context: StoreContext = {},
): RolloutPolicySource {
  return STORES[choice.kind].createPolicySource(choice.options, context);
}

/** The one place an image-channel store is constructed; undefined for a store without channels (yet). */
export function createChannelStore<K extends StoreKind>(
  choice: StoreSelection<K>,
  context: StoreContext = {},
): ChannelStore | undefined {
  const provider: StoreProvider<StoreSelection<K>['options'], ClusterStore> = STORES[choice.kind] as never;
  return provider.createChannelStore?.(choice.options, context);
}

/**
 * The options of `kind` from a command's flags. (TypeScript does not pair a kind with its options through an
 * indexed call on a union: the cast says what the generic call guarantees.)
 */
export function parseStoreOptions(kind: StoreKind, values: StoreFlagValues, dirs: StoreDirs): StoreOptions {
  const parse = <K extends StoreKind>(k: K): StoreSelection<K> => ({
    kind: k,
    options: STORES[k].parseOptions(values, dirs),
  });
  return parse(kind) as StoreOptions;
}

/** The store narrowed to `qualifier` (`namespace/name`), or undefined when its kind takes no qualified names. */
export function narrowStore(choice: StoreOptions, qualifier: string): StoreOptions | undefined {
  const narrow = <K extends StoreKind>(c: StoreSelection<K>): StoreSelection<K> | undefined => {
    const names = STORES[c.kind].qualifiedNames;
    return names ? { kind: c.kind, options: names.narrow(c.options, qualifier) } : undefined;
  };
  return narrow(choice) as StoreOptions | undefined;
}

/** This replica's leader elector for the store, or undefined when its kind has no leases. */
export function leaderElectorFor<K extends StoreKind>(
  choice: StoreSelection<K>,
  settings: LeaderSettings,
  log: ElectionLogger,
): LeaderElector | undefined {
  return STORES[choice.kind].leaderElection?.elector(choice.options, settings, log);
}

/** The file store on a directory (the default when no --store flag was parsed). */
export function fileStore(clustersDir: string, stateDir?: string): StoreOptions {
  return { kind: 'file', options: { clustersDir, stateDir } };
}

function open<O, S extends ClusterStore>(
  provider: StoreProvider<O, S>,
  options: O,
  context: StoreContext,
): OpenedStore {
  const store = provider.createStore(options, context);
  return {
    store,
    events: provider.events?.(store),
    history: provider.history?.(store),
    close: () => provider.close?.(store),
  };
}
