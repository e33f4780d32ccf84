import { KubeApiError } from '../../core/errors';
import { postEvent } from './events';
import { kubeHealth } from './kube-health';
import { collectionPath, KubeObjectMeta } from './resource';
import { describeScope, isLive, listShardLeases, ShardOf, shardOfLease, ShardOptions, shardOwnership } from './shards';

// Kept apart from shards.ts, which decides who may run (scopes, Leases, the guard at start) from pure functions the
// simulator checks too: the monitor is the one part with a timer, state across looks and writes (events), and it runs
// only while its shard leads. It reports what shardOwnership decides; it decides nothing itself.

/** Counts, logs and reports (events) the WorkerClusters no live shard, or more than one, selects; while leading. */
export class ShardMonitor {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private lastUnowned = new Set<string>();
  private lastMultiple = new Set<string>();
  private readonly reported = new Set<string>();
  /** When each object was first seen unowned (or multiply owned) in the looks since: reported once it lasts. */
  private readonly seenSince = new Map<string, number>();

  constructor(private readonly o: ShardOptions) {}

  public start(): void {
    if (this.timer) return;
    const tick = () => {
      this.running = this.check().then(
        () => undefined,
        (e: unknown) =>
          this.o.log.warn(
            { err: String(e), next: `looked at again in ${this.interval} ms` },
            'could not look at shard ownership',
          ),
      );
    };
    tick();
    this.timer = setInterval(tick, this.interval);
    this.timer.unref();
  }

  public async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
    // A replica that no longer leads no longer looks: its counts would only grow stale.
    kubeHealth.unowned = undefined;
    kubeHealth.multiplyOwned = undefined;
    this.seenSince.clear();
    this.lastUnowned = new Set();
    this.lastMultiple = new Set();
  }

  private get interval(): number {
    return this.o.checkIntervalMs ?? 60_000;
  }

  /** One look: live shards from the Leases, every WorkerCluster of this daemon's namespaces (metadata only). */
  public async check(): Promise<{ unowned: string[]; multiple: string[] }> {
    const now = (this.o.now ?? Date.now)();
    const live = (await listShardLeases(this.o.client, this.o.leaseNamespace)).filter(
      (l) => l.metadata.name === this.o.leaseName || isLive(l, now),
    );
    const scopes: ShardOf[] = live.flatMap((l) => shardOfLease(l) ?? []);
    if (!scopes.some((s) => s.lease === this.o.leaseName))
      scopes.push({ lease: this.o.leaseName, scope: this.o.scope });
    const { unowned, multiple } = shardOwnership(scopes, await this.objects());
    kubeHealth.unowned = unowned.length;
    kubeHealth.multiplyOwned = multiple.length;
    const names = (ms: readonly KubeObjectMeta[]) => ms.map((m) => `${m.namespace}/${m.name}`).sort();
    const shards = scopes.map((s) => `${s.lease}: ${describeScope(s.scope)}`).sort();
    if (changed(this.lastUnowned, names(unowned))) {
      const list = names(unowned);
      this.o.log[list.length ? 'warn' : 'info'](
        {
          unowned: list.slice(0, 50),
          count: list.length,
          shards,
          next: list.length
            ? 'nothing reconciles them until a shard selects them (label them, or widen a shard)'
            : 'none',
        },
        list.length ? 'WorkerClusters no live shard selects' : 'every WorkerCluster has a shard',
      );
      this.lastUnowned = new Set(list);
    }
    if (changed(this.lastMultiple, names(multiple.map(([m]) => m)))) {
      const list = multiple.map(([m, owners]) => `${m.namespace}/${m.name} (${owners.join(', ')})`);
      if (list.length)
        this.o.log.error(
          {
            multiplyOwned: list.slice(0, 50),
            count: list.length,
            shards,
            next: 'stop one of the overlapping shards and make the selectors disjoint',
          },
          'WorkerClusters that two live shards select',
        );
      this.lastMultiple = new Set(names(multiple.map(([m]) => m)));
    }
    // Reported once it lasts (reportAfterMs): shards starting a few seconds apart, or Leases that lapsed in an
    // API-server outage, leave objects unowned for a moment only.
    const current = new Set([
      ...unowned.map((m) => reportKey('Unowned', m)),
      ...multiple.map(([m]) => reportKey('MultiplyOwned', m)),
    ]);
    for (const k of [...this.seenSince.keys()]) if (!current.has(k)) this.seenSince.delete(k);
    for (const k of current) if (!this.seenSince.has(k)) this.seenSince.set(k, now);
    const lasting = (reason: string, m: KubeObjectMeta) =>
      now - (this.seenSince.get(reportKey(reason, m)) ?? now) >= (this.o.reportAfterMs ?? 30_000);
    // One shard reports on the objects (the first live one by Lease name): one event each, not one per shard.
    if (scopes.map((s) => s.lease).sort()[0] === this.o.leaseName) {
      for (const m of unowned.filter((x) => lasting('Unowned', x)))
        await this.report(
          m,
          'Unowned',
          `no live shard selects this object (shards: ${shards.join('; ')}): nothing reconciles it, and its status is as last written; label it so that a shard selects it`,
        );
      for (const [m, owners] of multiple.filter(([x]) => lasting('MultiplyOwned', x)))
        await this.report(
          m,
          'MultiplyOwned',
          `the live shards of Leases ${owners.join(', ')} all select this object: both reconcile it; make their selectors disjoint`,
        );
    }
    // An object that is owned again, then loses its shard again, is reported again.
    for (const k of [...this.reported]) if (!current.has(k)) this.reported.delete(k);
    return { unowned: names(unowned), multiple: names(multiple.map(([m]) => m)) };
  }

  private async report(m: KubeObjectMeta, reason: string, message: string): Promise<void> {
    const key = reportKey(reason, m);
    if (this.reported.has(key)) return;
    this.reported.add(key);
    try {
      // Named from the object's version: every shard that looks at this version posts the same event, and only the
      // first post is taken (two shards starting together may each think it reports).
      const name = `${m.name}.${reason.toLowerCase()}.${m.resourceVersion ?? '0'}`;
      await postEvent(
        this.o.client,
        {
          apiVersion: 'worker-stacks.io/v1alpha1',
          kind: 'WorkerCluster',
          name: m.name,
          namespace: m.namespace ?? 'default',
          uid: m.uid,
          resourceVersion: m.resourceVersion,
        },
        { type: 'Warning', reason, message },
        name,
      );
    } catch (e) {
      if (e instanceof KubeApiError && e.statusCode === 409) return; // posted already (by another shard)
      this.reported.delete(key);
      this.o.log.warn(
        { cluster: `${m.namespace}/${m.name}`, event: reason, err: String(e) },
        'could not record the event',
      );
    }
  }

  /** Every WorkerCluster of the scope's namespaces, metadata only (labels are all ownership needs), 500 a page. */
  private async objects(): Promise<KubeObjectMeta[]> {
    const out: KubeObjectMeta[] = [];
    const q = new URLSearchParams({ limit: '500' });
    for (;;) {
      const { body } = await this.o.client.request<{
        metadata: { continue?: string };
        items: { metadata: KubeObjectMeta }[] | null; // null when there is none (a metadata-only list)
      }>('GET', `${collectionPath(this.o.scope.namespace)}?${q.toString()}`, undefined, undefined, METADATA_ONLY);
      out.push(...(body.items ?? []).map((i) => i.metadata));
      if (!body.metadata.continue) return out;
      q.set('continue', body.metadata.continue);
    }
  }
}

/** The API server's metadata-only answer to a list (what `kubectl get` asks for with --output=name). */
export const METADATA_ONLY = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';

function reportKey(reason: string, m: KubeObjectMeta): string {
  return `${reason} ${m.uid ?? `${m.namespace}/${m.name}`}`;
}

function changed(before: ReadonlySet<string>, now: readonly string[]): boolean {
  return before.size !== now.length || now.some((n) => !before.has(n));
}
