import pino from 'pino';
import { KubeApiError, messageOf } from '../../core/errors';
import { isRecord } from '../../core/json';
import { KubeClient } from './client';
import { kubeHealth, watchErrorReason } from './kube-health';
import { sleep } from './sleep';

// One concept, the informer (list + watch kept as a cache): its options, events and the class that runs it.

/**
 * List + watch of one collection, kept as a cache (client-go's reflector and informer, without their code):
 *
 * - one paginated LIST gives the objects and a resourceVersion; a WATCH from that version (with bookmarks, so the
 *   version moves on even when nothing of ours changes) keeps the cache current;
 * - a watch the server ends (its timeout) is started again from the last version, without a list;
 * - a 410 Gone (the version was compacted, or the server's watch cache no longer has it) lists again;
 * - any other failure (a restarted API server, a network error, a 5xx, a 429) retries with backoff, and the next
 *   attempt lists again only when the watch answers 410; client-node's informer stops on errors, this one never does;
 * - every failure is logged (one JSON line: the store, the reason, what happens next) and counted
 *   (worker_stacks_watch_errors_total{store,reason}, worker_stacks_watch_relists_total{store}: lib/platform/kube/kube-health.ts);
 * - every `resyncMs` every cached object is delivered again (level-based consumers use it as a safety net).
 */
export interface InformerOptions {
  /** `labelSelector` of the list and the watch (a shard). @default all objects */
  readonly labelSelector?: string;
  /** Page size of the list. @default 500 */
  readonly pageSize?: number;
  /** Every cached object is delivered again this often. @default 10 min */
  readonly resyncMs?: number;
  /** Server-side timeout of one watch request. @default 300 s */
  readonly watchTimeoutSeconds?: number;
  /** Backoff between failed attempts: from this, doubling… @default 200 ms */
  readonly backoffBaseMs?: number;
  /** …up to this. @default 30 s */
  readonly backoffMaxMs?: number;
  /** Told about failures (after they are logged and counted). @default ignored */
  readonly onError?: (err: unknown, what: string) => void;
  /** The `store` label of the watch metrics and logs. @default kubernetes */
  readonly store?: string;
  /** Where failures are logged. @default JSON lines on stderr */
  readonly log?: WatchLogger;
}

/** The two levels the informer logs at (pino's signature, as the reconciler's Logger has it). */
export interface WatchLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

let fallbackLog: WatchLogger | undefined;
/** The daemon's log format (lib/adapters/cli/wiring.ts createLogger) for an informer made without a logger. */
function defaultLog(): WatchLogger {
  return (fallbackLog ??= pino(
    { base: { app: 'worker-stacks' }, timestamp: pino.stdTimeFunctions.isoTime },
    process.stderr as pino.DestinationStream,
  ));
}

export type InformerEvent = 'ADDED' | 'MODIFIED' | 'DELETED' | 'RESYNC';

export interface KubeObject {
  metadata: { name: string; namespace?: string; resourceVersion?: string };
}

interface WatchEvent<T> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: T & { code?: number; reason?: string; message?: string };
}

/** Counts of what the informer asked the API server, for tests and the bench (one list + the watch). */
export interface InformerStats {
  lists: number;
  watches: number;
  relistsAfterGone: number;
  watchErrors: number;
}

export class Informer<T extends KubeObject> {
  private readonly cache = new Map<string, T>();
  private resourceVersion = '';
  private abort = new AbortController();
  private running = false;
  private syncedResolve!: () => void;
  private syncedPromise: Promise<void>;
  private resync?: NodeJS.Timeout;
  public readonly stats: InformerStats = { lists: 0, watches: 0, relistsAfterGone: 0, watchErrors: 0 };
  public hasSynced = false;
  private readonly storeLabel: string;
  private readonly log: WatchLogger;

  constructor(
    private readonly client: KubeClient,
    private readonly path: string,
    /** Each change; `prev` is the object as the cache had it before (undefined for an addition). */
    private readonly onEvent: (type: InformerEvent, obj: T, prev?: T) => void,
    private readonly opts: InformerOptions = {},
  ) {
    this.syncedPromise = new Promise((r) => (this.syncedResolve = r));
    this.storeLabel = opts.store ?? 'kubernetes';
    this.log = opts.log ?? defaultLog();
  }

  /** `namespace/name` → object, as last seen. */
  public get items(): ReadonlyMap<string, T> {
    return this.cache;
  }

  /** Resolves after the first complete list. */
  public synced(): Promise<void> {
    return this.syncedPromise;
  }

  public start(): void {
    if (this.running) return;
    this.running = true;
    this.abort = new AbortController();
    void this.run();
    const every = this.opts.resyncMs ?? 10 * 60_000;
    if (every > 0) {
      this.resync = setInterval(() => {
        for (const o of this.cache.values()) this.onEvent('RESYNC', o);
      }, every);
      this.resync.unref();
    }
  }

  public stop(): void {
    this.running = false;
    this.abort.abort();
    if (this.resync) clearInterval(this.resync);
  }

  /** A write of ours the API server answered: cached at once (if newer), so our next read does not conflict with ourselves. */
  public observe(obj: T): void {
    const key = keyOf(obj);
    const cur = this.cache.get(key);
    if (!cur || newer(obj.metadata.resourceVersion, cur.metadata.resourceVersion)) this.cache.set(key, obj);
  }

  /** Read through a call, not as a field: stop() clears it while run() awaits, so no narrowing may outlive an await. */
  private isRunning(): boolean {
    return this.running;
  }

  private async run(): Promise<void> {
    let failures = 0;
    // A restarted informer resumes its watch from where it was (a 410 then makes it list again).
    let needList = this.resourceVersion === '';
    while (this.isRunning()) {
      try {
        if (needList) {
          await this.list();
          needList = false;
        }
        const started = Date.now();
        await this.watchOnce();
        // The server ended the watch (its timeout): go on from the last version, no list, no backoff. A server that
        // ends every watch at once (shutting down) is a failure, or this loop would spin.
        if (Date.now() - started >= 1000) {
          failures = 0;
          continue;
        }
        throw new Error('the watch ended at once');
      } catch (e) {
        if (!this.isRunning()) return;
        const what = needList ? 'list' : 'watch';
        const reason = watchErrorReason(e);
        kubeHealth.watchError(this.storeLabel, reason);
        const status = e instanceof KubeApiError ? e.statusCode : undefined;
        const where = { store: this.storeLabel, path: this.path, what, reason, status, err: messageOf(e) };
        if (isGone(e)) {
          this.stats.relistsAfterGone++;
          this.log.info(
            { ...where, next: 'list again, then watch from the new resourceVersion' },
            'watch expired (410 Gone): listing again',
          );
          needList = true;
          continue;
        }
        this.stats.watchErrors++;
        failures++;
        const base = this.opts.backoffBaseMs ?? 200;
        const wait = Math.round(
          Math.min(this.opts.backoffMaxMs ?? 30_000, base * 2 ** Math.min(failures - 1, 16)) *
            (0.8 + Math.random() * 0.4),
        );
        const next = `retry the ${what} in ${wait} ms (attempt ${failures + 1}); the cache keeps serving the last state meanwhile`;
        this.log.warn({ ...where, failures, retryInMs: wait, next }, `${what} failed (${reason})`);
        this.opts.onError?.(e, what);
        await sleep(wait, this.abort.signal);
      }
    }
  }

  /** A full, paginated list: replaces the cache and delivers what changed (deletions included) since the last one. */
  private async list(): Promise<void> {
    if (this.stats.lists++ > 0) kubeHealth.relisted(this.storeLabel);
    const seen = new Map<string, T>();
    let cont: string | undefined;
    let rv: string;
    do {
      const q = new URLSearchParams({ limit: String(this.opts.pageSize ?? 500) });
      if (this.opts.labelSelector) q.set('labelSelector', this.opts.labelSelector);
      if (cont) q.set('continue', cont);
      const { body } = await this.client.request<{
        metadata: { resourceVersion: string; continue?: string };
        items: T[] | null; // null: an empty list, as the real API server answers some lists
      }>('GET', `${this.path}?${q.toString()}`);
      for (const o of body.items ?? []) seen.set(keyOf(o), o);
      cont = body.metadata.continue || undefined;
      rv = body.metadata.resourceVersion;
    } while (cont);
    const old = new Map(this.cache);
    this.cache.clear();
    for (const [k, o] of seen) this.cache.set(k, o);
    this.resourceVersion = rv;
    this.hasSynced = true;
    this.syncedResolve();
    for (const [k, o] of seen) {
      const prev = old.get(k);
      if (!prev) this.onEvent('ADDED', o);
      else if (prev.metadata.resourceVersion !== o.metadata.resourceVersion) this.onEvent('MODIFIED', o, prev);
    }
    for (const [k, o] of old) if (!seen.has(k)) this.onEvent('DELETED', o);
  }

  private async watchOnce(): Promise<void> {
    const q = new URLSearchParams({
      watch: 'true',
      allowWatchBookmarks: 'true',
      resourceVersion: this.resourceVersion,
      timeoutSeconds: String(this.opts.watchTimeoutSeconds ?? 300),
    });
    if (this.opts.labelSelector) q.set('labelSelector', this.opts.labelSelector);
    let gone: KubeApiError | undefined;
    this.stats.watches++;
    await this.client.stream(
      `${this.path}?${q.toString()}`,
      (line) => {
        if (gone || !isRecord(line) || !line.type) return;
        const ev = line as unknown as WatchEvent<T>;
        if (ev.type === 'ERROR') {
          // A watch that started, then learnt its version is too old: the server says so in the stream.
          const s = ev.object;
          if (s.code === 410)
            gone = new KubeApiError(
              410,
              s.reason ?? 'Expired',
              s.message ?? 'too old resource version',
              `watch ${this.path}`,
            );
          else
            gone = new KubeApiError(
              s.code ?? 500,
              s.reason ?? 'InternalError',
              s.message ?? 'watch error',
              `watch ${this.path}`,
            );
          return;
        }
        const rv = ev.object.metadata.resourceVersion;
        if (rv) this.resourceVersion = rv;
        if (ev.type === 'BOOKMARK') return;
        const key = keyOf(ev.object);
        // The echo of a write of ours already in the cache (observe): nothing new to tell.
        const prev = this.cache.get(key);
        const known = ev.type === 'MODIFIED' && rv !== undefined && prev?.metadata.resourceVersion === rv;
        if (ev.type === 'DELETED') this.cache.delete(key);
        else this.cache.set(key, ev.object);
        if (!known) this.onEvent(ev.type, ev.object, prev);
      },
      this.abort.signal,
    );
    if (gone) throw gone;
  }
}

function keyOf(o: KubeObject): string {
  return `${o.metadata.namespace ?? ''}/${o.metadata.name}`;
}

/** resourceVersions are opaque, but etcd's are integers; compare them as such when both are. */
function newer(a: string | undefined, b: string | undefined): boolean {
  if (!a || !b) return Boolean(a);
  return /^\d+$/.test(a) && /^\d+$/.test(b) ? BigInt(a) > BigInt(b) : a !== b;
}

function isGone(e: unknown): boolean {
  return e instanceof KubeApiError && e.statusCode === 410;
}
