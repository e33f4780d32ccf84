import { UsageError } from '../../core/errors';
import {
  DEFAULT_STORE,
  isStoreKind,
  kindsWith,
  narrowStore,
  parseStoreOptions,
  STORE_KINDS,
  StoreOptions,
  STORES,
} from '../stores/registry';
import { flagString, StoreFlag, StoreFlagValues } from '../stores/store-provider';
import { InputDirs } from './context';

/**
 * The flags that choose the store, on every command that reads or writes cluster objects: `--store <kind>` (the file
 * store by default) and every registered store's own flags (lib/adapters/stores/registry.ts).
 */
export function storeFlags<
  C extends { option: (flags: string, description: string, defaultValue?: string | boolean) => C },
>(c: C): C {
  const kinds = STORE_KINDS.map((k) => `${k} (${STORES[k].description})`).join(' or ');
  let out = c.option(
    '--store <kind>',
    `where the cluster objects are: ${kinds} (env WORKER_STACKS_STORE, default ${DEFAULT_STORE})`,
  );
  for (const kind of STORE_KINDS)
    for (const f of STORES[kind].flags)
      out =
        f.defaultValue === undefined
          ? out.option(f.flags, f.description)
          : out.option(f.flags, f.description, f.defaultValue);
  return out;
}

/** The store the flags name; a bad combination is a usage error (exit 2) naming the flag. */
export function storeOptions(flags: object, dirs: InputDirs, env: NodeJS.ProcessEnv = process.env): StoreOptions {
  // Each command types its own flags; the store flags among them are read by name, as the registry declares them.
  const opts = flags as StoreFlagValues;
  const kind = flagString(opts, 'store') ?? env.WORKER_STACKS_STORE ?? DEFAULT_STORE;
  if (!isStoreKind(kind)) throw new UsageError(`--store ${kind}: give ${STORE_KINDS.join(' or ')}`);
  // Another store's flag is refused rather than ignored: the user meant that store.
  for (const other of STORE_KINDS.filter((k) => k !== kind)) {
    const given = STORES[other].flags.find((f) => opts[flagKey(f)] !== undefined);
    if (given) throw new UsageError(`${longFlag(given)} is for --store ${other}`);
  }
  return parseStoreOptions(kind, opts, dirs);
}

/**
 * A cluster argument: `name`, or kubectl's `namespace/name` with a store that takes qualified names (which then looks
 * in that namespace). Stack names come from metadata.name alone, so the name is what the store and the reconciler key on.
 */
export function clusterArgument(
  arg: string,
  store: StoreOptions,
  what = 'a cluster',
): { name: string; store: StoreOptions } {
  const slash = arg.indexOf('/');
  if (slash < 0) return { name: arg, store };
  const narrowed = narrowStore(store, arg.slice(0, slash));
  if (!narrowed)
    throw new UsageError(
      `${arg}: namespace/name is for --store ${kindsWith('qualifiedNames').join(' or ')}; the ${store.kind} store names ${what} by ${STORES[store.kind].naming}`,
    );
  return { name: arg.slice(slash + 1), store: narrowed };
}

/** `--all-namespaces` → `allNamespaces`: where commander puts a flag's value. */
function flagKey(f: StoreFlag): string {
  return longFlag(f)
    .slice(2)
    .replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

function longFlag(f: StoreFlag): string {
  const long = /--[a-z][a-z0-9-]*/.exec(f.flags);
  if (!long) throw new Error(`store flag ${f.flags} has no long name`);
  return long[0];
}
