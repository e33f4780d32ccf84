import { ClusterStatus, parseStatus } from '../../model/cluster/schema/status';
import { KubeApiError, WorkerStacksError } from '../../core/errors';
import { KubeClient } from '../../platform/kube/client';
import { LabelSelector } from '../../platform/kube/label-selector';
import {
  collectionPath,
  KubeWorkerCluster,
  namespaceOf,
  objectPath,
  RETRY_ANNOTATION,
} from '../../platform/kube/resource';
import { Informer, InformerOptions, WatchLogger } from '../../platform/kube/watch';
import { ClusterRecord, ClusterStore } from '../../model/ports/cluster-store';
import { EventSink, ObjectEvent } from '../../model/ports/event-sink';
import { objectOfKey, parseKey, recordsOfName, refusedKey } from './kubernetes-duplicates';
import { KubernetesEvents } from './kubernetes-store-events';
import { putStatus, StatusWriter } from './kubernetes-store-status';

export interface KubernetesStoreProps {
  readonly client: KubeClient;
  /** One namespace, or undefined for all namespaces. */
  readonly namespace?: string;
  /** Only objects with these labels (`tier=canary`): one daemon per shard. @default all */
  readonly labelSelector?: string;
  /** List + watch settings. @default see InformerOptions */
  readonly informer?: Omit<InformerOptions, 'labelSelector'>;
  /** Where the watch logs its failures. @default JSON lines on stderr */
  readonly log?: WatchLogger;
}

/**
 * Cluster objects as `workerclusters.worker-stacks.io` custom resources. Reads come from a list + watch cache once
 * `watch()` has started it (the daemon: an unchanged pass costs no request), and straight from the API server
 * otherwise (a CLI command). The generation and resourceVersion are the API server's; status is written only through
 * the status subresource, with the resourceVersion it was computed for (a 409 is a ConflictError); the spec is never
 * written, but for `pause` and `retry`, which are user commands.
 *
 * Names: a record is keyed by metadata.name, because the stack is `WorkerStack-<name>`. With all namespaces watched,
 * a name used in several namespaces is held by one of them (the one that has deployed its stack, else the oldest:
 * kubernetes-duplicates.ts); each other one is a record of its own, keyed `<namespace>/<name>`, refused with a
 * problem naming the holder, so a newcomer never stalls the object that holds the name.
 */
export class KubernetesStore implements ClusterStore, EventSink {
  private readonly client: KubeClient;
  private readonly namespace?: string;
  private readonly labelSelector?: string;
  private informer?: Informer<KubeWorkerCluster>;
  private readonly listeners = new Set<(name: string) => void>();
  private readonly selector: LabelSelector;
  private readonly events: KubernetesEvents;
  /** What the status writes and the events read and write through: this store's reads and cache. */
  private readonly io: StatusWriter;

  constructor(private readonly props: KubernetesStoreProps) {
    this.client = props.client;
    this.namespace = props.namespace;
    this.selector = LabelSelector.parse(props.labelSelector);
    this.labelSelector = props.labelSelector;
    this.io = {
      client: this.client,
      locate: (name) => this.locate(name),
      observe: (o) => this.informer?.observe(o),
    };
    this.events = new KubernetesEvents(this.io);
  }

  public async list(): Promise<ClusterRecord[]> {
    return this.toRecords(await this.objects());
  }

  public async get(key: string): Promise<ClusterRecord | undefined> {
    const objs = await this.objects(parseKey(key).name);
    return this.toRecords(objs).find((r) => r.name === key);
  }

  public async writeStatus(name: string, status: ClusterStatus, resourceVersion: string): Promise<string> {
    const checked = parseStatus(status);
    if ('problem' in checked)
      throw new WorkerStacksError(`refusing to write an invalid status for ${name}: ${checked.problem}`, {
        hint: 'this is a bug in the writer; the object is left as it was',
      });
    return putStatus(this.io, name, status, resourceVersion);
  }

  public async clearStatus(name: string, resourceVersion: string): Promise<void> {
    await putStatus(this.io, name, undefined, resourceVersion);
  }

  /** A new token in the `worker-stacks.io/retry` annotation (a merge patch: it never conflicts with a status write). */
  public async requestRetry(name: string, token: string): Promise<void> {
    await this.patchObject(name, { metadata: { annotations: { [RETRY_ANNOTATION]: token } } });
  }

  /** `spec.paused` by merge patch (resume removes the field, as the file store does). */
  public async setPaused(name: string, paused: boolean): Promise<void> {
    await this.patchObject(name, { spec: { paused: paused ? true : null } });
  }

  /**
   * Adds or removes one finalizer: a JSON patch that tests the list it read (another writer's finalizer is never
   * lost), retried on a 409/422 with a fresh read.
   */
  public async setFinalizer(name: string, finalizer: string, present: boolean): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      // After a lost race, read the object itself: the cache may be behind.
      const o = await this.locate(name, attempt > 0);
      const cur = o.metadata.finalizers ?? [];
      if (cur.includes(finalizer) === present) return;
      const next = present ? [...cur, finalizer] : cur.filter((f) => f !== finalizer);
      const patch = [
        o.metadata.finalizers
          ? { op: 'test', path: '/metadata/finalizers', value: cur }
          : { op: 'test', path: '/metadata/resourceVersion', value: o.metadata.resourceVersion },
        { op: 'add', path: '/metadata/finalizers', value: next },
      ];
      try {
        const { body } = await this.client.request<KubeWorkerCluster>(
          'PATCH',
          objectPath(namespaceOf(o), o.metadata.name),
          patch,
          'application/json-patch+json',
        );
        this.informer?.observe(body);
        return;
      } catch (e) {
        const stale = e instanceof KubeApiError && (e.statusCode === 409 || e.statusCode === 422);
        if (!stale || attempt >= 4) throw e;
      }
    }
  }

  public watch(onChange: (name: string) => void): () => void {
    this.listeners.add(onChange);
    this.startInformer();
    return () => {
      this.listeners.delete(onChange);
      if (this.listeners.size === 0) this.stopInformer();
    };
  }

  /** A core/v1 Event on the object (what `kubectl describe wc <name>` lists): see KubernetesEvents. */
  public emit(cluster: string, event: ObjectEvent): Promise<void> {
    return this.events.emit(cluster, event);
  }

  public flush(): Promise<void> {
    return this.events.flush();
  }

  /** The informer's request counts (tests, bench); undefined before watch(). */
  public get informerStats() {
    return this.informer?.stats;
  }

  /** Starts the list + watch cache (watch() does; the bench and tests may start it alone) and waits for its first list. */
  public async sync(): Promise<void> {
    await this.startInformer().synced();
  }

  public close(): void {
    this.stopInformer();
    this.client.close();
  }

  private startInformer(): Informer<KubeWorkerCluster> {
    if (this.informer) return this.informer;
    const informer = new Informer<KubeWorkerCluster>(
      this.client,
      collectionPath(this.namespace),
      (type, obj, prev) => {
        // A change of the status alone (the echo of the reconciler's own write) wakes nobody: the reconciler acts on
        // the spec, labels, annotations (retry), finalizers and deletion, as controller-runtime's predicates would.
        if (type === 'MODIFIED' && prev && !reconcilerRelevantChange(prev, obj)) return;
        // The name, and the object's own key: a change to any object of a shared name may move which one holds it.
        for (const l of this.listeners) for (const key of [obj.metadata.name, refusedKey(obj)]) l(key);
      },
      { ...this.props.informer, labelSelector: this.labelSelector, store: 'kubernetes', log: this.props.log },
    );
    this.informer = informer;
    informer.start();
    return informer;
  }

  private stopInformer(): void {
    this.informer?.stop();
    this.informer = undefined;
  }

  /** From the cache once it has listed; otherwise from the API server (one object by name when one is asked for). */
  private async objects(name?: string, fresh = false): Promise<KubeWorkerCluster[]> {
    // A daemon's first pass waits for the cache's first list rather than list everything a second time; an API
    // server that does not answer for a while is listed directly (and fails the pass, which is retried).
    if (this.informer && !this.informer.hasSynced && !fresh && name === undefined)
      await Promise.race([this.informer.synced(), delay(SYNC_WAIT_MS)]);
    if (this.informer?.hasSynced && !fresh) return [...this.informer.items.values()];
    if (name !== undefined && this.namespace) {
      try {
        const { body } = await this.client.request<KubeWorkerCluster>('GET', objectPath(this.namespace, name));
        return this.matchesSelector(body) ? [body] : [];
      } catch (e) {
        if (e instanceof KubeApiError && e.statusCode === 404) return [];
        throw e;
      }
    }
    const q = new URLSearchParams({ limit: '500' });
    if (this.labelSelector) q.set('labelSelector', this.labelSelector);
    // All namespaces and one name: the duplicates check needs every object of that name.
    if (name !== undefined) q.set('fieldSelector', `metadata.name=${name}`);
    const out: KubeWorkerCluster[] = [];
    for (let cont: string | undefined; ;) {
      if (cont) q.set('continue', cont);
      const { body } = await this.client.request<{
        metadata: { continue?: string };
        items: KubeWorkerCluster[] | null;
      }>('GET', `${collectionPath(this.namespace)}?${q.toString()}`);
      out.push(...(body.items ?? []));
      cont = body.metadata.continue || undefined;
      if (!cont) return out;
    }
  }

  /** A single GET does not take a label selector: a shard's store must not act on another shard's object. */
  private matchesSelector(o: KubeWorkerCluster): boolean {
    return this.selector.matches(o.metadata.labels);
  }

  private toRecords(objs: readonly KubeWorkerCluster[]): ClusterRecord[] {
    const byName = new Map<string, KubeWorkerCluster[]>();
    for (const o of objs) byName.set(o.metadata.name, [...(byName.get(o.metadata.name) ?? []), o]);
    return [...byName.values()].flatMap((same) => recordsOfName(same)).sort((a, b) => a.name.localeCompare(b.name));
  }

  /** The object a record key names: the holder of a name, or a refused object by `<namespace>/<name>`. */
  private async locate(key: string, fresh = false): Promise<KubeWorkerCluster> {
    const { name } = parseKey(key);
    const o = objectOfKey(key, await this.objects(name, fresh));
    if (!o) {
      throw new WorkerStacksError(
        `no WorkerCluster ${key} in ${this.namespace ? `namespace ${this.namespace}` : 'any namespace'}${this.labelSelector ? ` matching ${this.labelSelector}` : ''}`,
        {
          hint: 'run worker-stacks status --store kubernetes to see the names (kubectl get wc -A)',
        },
      );
    }
    return o;
  }

  private async patchObject(key: string, patch: unknown): Promise<void> {
    const o = await this.locate(key);
    const { body } = await this.client.request<KubeWorkerCluster>(
      'PATCH',
      objectPath(namespaceOf(o), o.metadata.name),
      patch,
      'application/merge-patch+json',
    );
    // A user command (pause, retry) wakes the watchers at once; its watch event is then the echo of a known version.
    this.informer?.observe(body);
    if (this.informer) for (const l of this.listeners) l(key);
  }
}

const SYNC_WAIT_MS = 30_000;

/** Anything but status, resourceVersion and managedFields changed. */
function reconcilerRelevantChange(a: KubeWorkerCluster, b: KubeWorkerCluster): boolean {
  const strip = (o: KubeWorkerCluster) => {
    const metadata: Record<string, unknown> = { ...o.metadata };
    delete metadata.resourceVersion;
    delete metadata.managedFields;
    return JSON.stringify([o.apiVersion, metadata, o.spec]);
  };
  return strip(a) !== strip(b);
}

function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms).unref());
}
