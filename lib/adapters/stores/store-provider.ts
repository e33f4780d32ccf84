import type { LeaderElector } from '../../platform/kube/leader-election';
import type { WatchLogger } from '../../platform/kube/watch';
import type { RolloutPolicySource } from '../../engines/rollout';
import type { ChannelStore } from '../../engines/channels';
import { ClusterStore } from '../../model/ports/cluster-store';
import { EventSink } from '../../model/ports/event-sink';

/** A flag a store adds to every command that reads or writes cluster objects (`--kubeconfig <file>`). */
export interface StoreFlag {
  /** Commander's flag syntax: `-n, --namespace <ns>`; its value is read under the camel-cased long name (`namespace`). */
  readonly flags: string;
  /** The help line; it starts with the store it is for (`--store kubernetes: ...`). */
  readonly description: string;
  /** @default none */
  readonly defaultValue?: string | boolean;
}

/** The parsed flags of a command, as commander gives them (values of any command's flags, by camel-cased name). */
export type StoreFlagValues = Readonly<Partial<Record<string, unknown>>>;

/** A flag's value when it is a string (commander gives `<value>` flags strings). @default undefined */
export function flagString(values: StoreFlagValues, key: string): string | undefined {
  const v = values[key];
  return typeof v === 'string' ? v : undefined;
}

/** The command's input directories (lib/adapters/cli/context.ts inputDirs). */
export interface StoreDirs {
  readonly clustersDir: string;
}

/** What every store is opened with, whatever its kind. */
export interface StoreContext {
  /** Where a store's watch logs its failures (the daemon's logger). @default JSON lines on stderr */
  readonly log?: WatchLogger;
}

/** The file store's extra: it keeps the status of an object whose file is gone, so `status` still shows its stack. */
export interface StatusHistory {
  /** Names of the clusters with a recorded status (their object may be gone); `get(name)` returns each with its status. */
  statusNames(): string[];
}

/** Names qualified by a scope (`namespace/name`, as kubectl writes them). */
export interface QualifiedNames<O> {
  /** The options narrowed to the scope `qualifier` (the part before the slash). */
  narrow(options: O, qualifier: string): O;
}

/** The leader election flags of `reconcile --watch` (lib/adapters/cli/leadership.ts), in milliseconds. */
export interface LeaderSettings {
  /** This shard's name: it names the Lease. @default named from the store's scope */
  readonly shard?: string;
  /** Where the Lease is. @default the pod's namespace, else the store's */
  readonly leaseNamespace?: string;
  /** The Lease's name. @default the shard's */
  readonly leaseName?: string;
  /** This candidate. @default `<pod name or hostname>_<pid>` */
  readonly identity?: string;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  /** While leading, how often to look for objects no shard (or two) selects. */
  readonly shardCheckMs: number;
}

/** The levels leader election logs at (pino's signature, as the reconciler's Logger has it). */
export interface ElectionLogger extends WatchLogger {
  error(obj: object, msg: string): void;
}

/** Leases: one replica of the daemon acts per shard of this store; the others wait to take over. */
export interface LeaderElection<O> {
  /** This replica's candidate for the shard the options select; the caller runs it and fences AWS writes with it. */
  elector(options: O, settings: LeaderSettings, log: ElectionLogger): LeaderElector;
}

/**
 * One kind of store (`--store <kind>`): everything the CLI, the daemon and the contract suites need to know of it.
 * Registered once in lib/adapters/stores/registry.ts; `O` is its options, `S` the store it opens.
 * Optional members are capabilities: absent, the feature is off for this store (and its contract suite is not run).
 */
export interface StoreProvider<O, S extends ClusterStore> {
  /** What `--store`'s help says of it: `WorkerCluster custom resources`. */
  readonly description: string;
  /** How the store names an object, for messages: `its file name`. */
  readonly naming: string;
  /** Its own flags (refused with another store). */
  readonly flags: readonly StoreFlag[];
  /** Its options from the command's flags; a bad combination is a UsageError naming the flag. */
  parseOptions(values: StoreFlagValues, dirs: StoreDirs): O;
  createStore(options: O, context: StoreContext): S;
  /** Where its WorkerRolloutPolicy objects are. */
  createPolicySource(options: O, context: StoreContext): RolloutPolicySource;
  /** Where its WorkerImageChannel objects and their statuses are. @default none: a pool that names a channel is refused */
  createChannelStore?(options: O, context: StoreContext): ChannelStore;
  /** Releases the store's connections and watches (a CLI command then exits at once). @default nothing to release */
  close?(store: S): void;
  /** Events on the objects. @default none: the daemon's JSON log has them */
  readonly events?: (store: S) => EventSink;
  /** Status kept for objects that are gone. @default none: status lives (and goes) with the object */
  readonly history?: (store: S) => StatusHistory;
  /** `scope/name` arguments. @default names only */
  readonly qualifiedNames?: QualifiedNames<O>;
  /** Leases for `reconcile --watch` replicas and shards. @default none: one daemon per store */
  readonly leaderElection?: LeaderElection<O>;
}

/** The capabilities a provider may declare; each has its contract suite (test/adapters/stores/). */
export const STORE_CAPABILITIES = ['events', 'history', 'qualifiedNames', 'leaderElection'] as const;
export type StoreCapability = (typeof STORE_CAPABILITIES)[number];
