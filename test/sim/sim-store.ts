import { sha256Hex } from '../../lib/model/cloudconfig/checksum';
import { ClusterStatus } from '../../lib/model/cluster/schema/status';
import { CrashSignal } from '../../lib/engines/reconciler/compose/workflow';
import { ClusterRecord, ClusterStore, ConflictError } from '../../lib/model/ports/cluster-store';

/** How pending watch events reach the daemons: Sieve's unobserved states are all but `deliver`. */
export type WatchMode = 'deliver' | 'drop' | 'duplicate' | 'reorder' | 'coalesce';

interface Entry {
  /** Frozen: every read hands out the same object (a reconcile that mutated it would throw). */
  raw: unknown;
  contentHash: string;
  generation: number;
  version: number;
  status?: ClusterStatus;
}

/**
 * The cluster objects of the simulator, in memory, with the store contract (generation bumped on a spec change,
 * status written only at the version read, ConflictError otherwise). A spec edit and a status write are each an
 * event (as a Kubernetes watch's MODIFIED). Events wait in each subscriber's buffer until the world delivers them:
 * at the next step by default, or as the schedule says (held back, some dropped, duplicated, reordered,
 * coalesced), so an event a daemon never sees is a state it never observed.
 */
export class SimStore {
  private readonly entries = new Map<string, Entry>();
  private readonly subscribers = new Map<number, { onChange: (name: string) => void; pending: string[] }>();
  private nextSubscriber = 0;
  /** Status writes, for the bench. */
  public statusWrites = 0;
  /**
   * The object as each process last got it (`get`: what its reconcile of that object rests on; a listing's records
   * are the fleet's, for other decisions), by process and name.
   */
  public readonly lastRead = new Map<number, Map<string, unknown>>();

  public put(name: string, raw: unknown): void {
    const e = this.entries.get(name);
    if (e && JSON.stringify(e.raw) === JSON.stringify(raw)) return;
    this.entries.set(name, {
      raw: deepFreeze(structuredClone(raw)),
      contentHash: sha256Hex(JSON.stringify(raw)),
      generation: (e?.generation ?? 0) + 1,
      version: (e?.version ?? 0) + 1,
      status: e?.status,
    });
    this.notify(name);
  }

  public delete(name: string): void {
    if (this.entries.delete(name)) this.notify(name);
  }

  public has(name: string): boolean {
    return this.entries.has(name);
  }

  public raw(name: string): unknown {
    return this.entries.get(name)?.raw;
  }

  public status(name: string): ClusterStatus | undefined {
    return this.entries.get(name)?.status;
  }

  public generation(name: string): number | undefined {
    return this.entries.get(name)?.generation;
  }

  /** Delivers every subscriber's pending events the way `mode` says. */
  public deliver(mode: WatchMode): void {
    for (const sub of this.subscribers.values()) {
      const pending = sub.pending.splice(0);
      const events =
        mode === 'drop'
          ? pending.slice(1)
          : mode === 'duplicate'
            ? pending.flatMap((n) => [n, n])
            : mode === 'reorder'
              ? [...pending].reverse()
              : mode === 'coalesce'
                ? [...new Set(pending)]
                : pending;
      for (const n of events) sub.onChange(n);
    }
  }

  /** The store contract, as one process sees it; every call first passes `gate` (the scheduler orders them). */
  public client(id: number, pass: (label: string) => Promise<void>, dead: () => boolean): ClusterStore {
    // A killed process makes no call: checked where the call lands (the gate's own check is a microtask earlier).
    const live = () => {
      if (dead()) throw new CrashSignal(`process ${id} is dead`);
    };
    return {
      list: async () => {
        await pass('store.list');
        live();
        return [...this.entries.keys()].sort().map((n) => this.record(n)!);
      },
      get: async (name) => {
        await pass(`store.get ${name}`);
        live();
        return this.read(id, name);
      },
      writeStatus: async (name, status, resourceVersion) => {
        await pass(`store.writeStatus ${name}`);
        live();
        const e = this.entries.get(name);
        if (!e) throw new ConflictError(name, resourceVersion, 'deleted');
        if (String(e.version) !== resourceVersion) throw new ConflictError(name, resourceVersion, String(e.version));
        this.statusWrites++;
        // Frozen, as the object is: every read hands out this one copy (a reconcile that mutated it would throw).
        e.status = deepFreeze(structuredClone(status));
        e.version++;
        this.onStatus?.(name, e.status, id);
        // A status write is a change of the object (Kubernetes' MODIFIED event): it brings the cluster back at once.
        this.notify(name);
        return String(e.version);
      },
      clearStatus: async (name) => {
        await pass(`store.clearStatus ${name}`);
        live();
        const e = this.entries.get(name);
        if (e) e.status = undefined;
      },
      requestRetry: async () => {
        throw new Error('sim: retry is not simulated');
      },
      setPaused: async () => {
        throw new Error('sim: pause is not simulated');
      },
      watch: (onChange) => {
        const id = this.nextSubscriber++;
        this.subscribers.set(id, { onChange, pending: [] });
        return () => this.subscribers.delete(id);
      },
    };
  }

  /** Called after each status write (the invariants look at what was written, when it was written). */
  public onStatus?: (name: string, status: ClusterStatus, process: number) => void;

  /** A record got by process `id` (noted as what it last got of the object). */
  private read(id: number, name: string): ClusterRecord | undefined {
    const r = this.record(name);
    const mine = this.lastRead.get(id) ?? new Map<string, unknown>();
    this.lastRead.set(id, mine);
    if (r) mine.set(name, r.raw);
    else mine.delete(name);
    return r;
  }

  private record(name: string): ClusterRecord | undefined {
    const e = this.entries.get(name);
    if (!e) return undefined;
    return {
      name,
      source: `clusters/${name}.yaml`,
      raw: e.raw,
      parseProblems: [],
      generation: e.generation,
      status: e.status,
      resourceVersion: String(e.version),
      contentHash: e.contentHash,
    };
  }

  private notify(name: string): void {
    for (const sub of this.subscribers.values()) sub.pending.push(name);
  }
}

function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object' && !Object.isFrozen(o)) {
    Object.freeze(o);
    for (const v of Object.values(o)) deepFreeze(v);
  }
  return o;
}
