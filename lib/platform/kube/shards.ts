import { createHash } from 'node:crypto';
import { KubeApiError, UsageError, WorkerStacksError } from '../../core/errors';
import { KubeClient } from './client';
import { postEvent } from './events';
import { kubeHealth } from './kube-health';
import { LabelSelector } from './label-selector';
import { Lease } from './leader-election';
import { collectionPath, KubeObjectMeta } from './resource';

/**
 * Shards: daemons that each reconcile the WorkerClusters one label selector (and namespace scope) selects.
 *
 * - Each shard elects its leader on its own Lease, named from its scope: `worker-stacks-<shard>` with `--shard`,
 *   `worker-stacks-<10 hex of SHA-256 of namespace|normal selector>` without; the whole fleet (every namespace, no
 *   selector) keeps `worker-stacks`. Replicas of one shard share its Lease; two shards never do.
 * - Every write of a shard's Lease carries its scope (annotations `worker-stacks.io/shard`, `shard-selector` in the
 *   selector's normal form, `shard-namespace`, empty for all), so the Leases in the daemon's namespace are the
 *   list of shards: a Lease whose holder renewed it within its duration is a live shard.
 * - A starting shard lists them and refuses to run (ShardOverlapError, exit) when its scope overlaps a live shard's:
 *   one object could match both selectors (decided per key, exactly: LabelSelector.overlaps). It checks again on
 *   acquiring its Lease, so two shards started at the same moment do not both run.
 * - While it leads, a shard looks at every WorkerCluster of its namespaces (a metadata-only list) every
 *   `checkIntervalMs`: those no live shard selects are unowned, those two select are multiply owned; both are
 *   counted (worker_stacks_unowned_clusters, worker_stacks_multiply_owned_clusters), logged when the set changes, and
 *   get a Warning event (`Unowned`, `MultiplyOwned`) from one shard (the live one whose Lease name sorts first; the
 *   event's name comes from the object's resourceVersion, so a second shard's post of it is refused).
 */
export const DEFAULT_LEASE = 'worker-stacks';
export const SHARD_ANNOTATION = 'worker-stacks.io/shard';
export const SELECTOR_ANNOTATION = 'worker-stacks.io/shard-selector';
export const NAMESPACE_ANNOTATION = 'worker-stacks.io/shard-namespace';
/** On every shard Lease: how a daemon finds them (list with this label). */
export const SHARD_LEASE_LABELS = {
  'app.kubernetes.io/part-of': 'worker-stacks',
  'app.kubernetes.io/component': 'shard-lease',
} as const;

export interface ShardScope {
  /** `--shard`: the shard's name (its Lease is `worker-stacks-<name>`). @default none: named from the selector */
  readonly shard?: string;
  /** One namespace; undefined for every namespace. */
  readonly namespace?: string;
  readonly selector: LabelSelector;
}

/** A shard name: a DNS label short enough for `worker-stacks-<name>` to be one (and a Deployment's name). */
export function checkShardName(name: string): string {
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(name) || name.length > 40) {
    throw new UsageError(
      `--shard ${JSON.stringify(name)}: a shard name is a DNS label of at most 40 characters (lower-case letters, digits, -)`,
    );
  }
  return name;
}

/** The Lease of a shard (deterministic: every replica of the shard computes the same name). */
export function shardLeaseName(scope: ShardScope): string {
  if (scope.shard) return `${DEFAULT_LEASE}-${checkShardName(scope.shard)}`;
  if (scope.selector.empty && scope.namespace === undefined) return DEFAULT_LEASE;
  const key = `${scope.namespace ?? '*'}|${scope.selector.toString()}`;
  return `${DEFAULT_LEASE}-${createHash('sha256').update(key).digest('hex').slice(0, 10)}`;
}

/** The labels and annotations a shard's Lease carries. */
export function shardLeaseMetadata(scope: ShardScope): {
  labels: Record<string, string>;
  annotations: Record<string, string>;
} {
  return {
    labels: { ...SHARD_LEASE_LABELS },
    annotations: {
      [SHARD_ANNOTATION]: scope.shard ?? '',
      [SELECTOR_ANNOTATION]: scope.selector.toString(),
      [NAMESPACE_ANNOTATION]: scope.namespace ?? '',
    },
  };
}

/** A shard's scope as its Lease says (a Lease of an older release, `worker-stacks` without annotations: the whole fleet). */
export function scopeOfLease(lease: Lease): ShardScope | undefined {
  const a = lease.metadata.annotations ?? {};
  if (!(SELECTOR_ANNOTATION in a))
    return lease.metadata.name === DEFAULT_LEASE ? { selector: LabelSelector.parse('') } : undefined;
  try {
    return {
      shard: a[SHARD_ANNOTATION] || undefined,
      namespace: a[NAMESPACE_ANNOTATION] || undefined,
      selector: LabelSelector.parse(a[SELECTOR_ANNOTATION]),
    };
  } catch {
    return undefined;
  }
}

function shardOfLease(lease: Lease): ShardOf | undefined {
  const scope = scopeOfLease(lease);
  return scope && { lease: lease.metadata.name, scope };
}

/** Could one object be in both scopes? */
export function scopesOverlap(a: ShardScope, b: ShardScope): boolean {
  const namespaces = a.namespace === undefined || b.namespace === undefined || a.namespace === b.namespace;
  return namespaces && a.selector.overlaps(b.selector);
}

/** Held: a holder that renewed it within its lease duration (on this machine's clock). */
export function isLive(lease: Lease, nowMs: number): boolean {
  const renewed = lease.spec.renewTime ? Date.parse(lease.spec.renewTime) : NaN;
  return (
    Boolean(lease.spec.holderIdentity) &&
    Number.isFinite(renewed) &&
    renewed + (lease.spec.leaseDurationSeconds ?? 15) * 1000 > nowMs
  );
}

export function describeScope(scope: ShardScope): string {
  return `${scope.shard ? `shard ${scope.shard}, ` : ''}selector ${scope.selector.empty ? '(everything)' : JSON.stringify(scope.selector.toString())}, ${scope.namespace ? `namespace ${scope.namespace}` : 'every namespace'}`;
}

/** A shard as the others see it: its Lease's name and its scope. */
export interface ShardOf {
  readonly lease: string;
  readonly scope: ShardScope;
}

/** The first of `live` (other than `self`'s own Lease) whose scope overlaps `self`'s: this shard must not start. */
export function overlappingShard(self: ShardOf, live: readonly ShardOf[]): ShardOf | undefined {
  return live.find((s) => s.lease !== self.lease && scopesOverlap(self.scope, s.scope));
}

/**
 * Which shards select each object, without the API server: those no shard selects (unowned) and those two or more
 * select (with their Leases). The monitor counts and reports these; the simulator checks them.
 */
export function shardOwnership<M extends Pick<KubeObjectMeta, 'namespace' | 'labels'>>(
  shards: readonly ShardOf[],
  objects: readonly M[],
): { unowned: M[]; multiple: [M, string[]][] } {
  const unowned: M[] = [];
  const multiple: [M, string[]][] = [];
  for (const m of objects) {
    const owners = shards
      .filter(
        ({ scope }) =>
          (scope.namespace === undefined || scope.namespace === m.namespace) && scope.selector.matches(m.labels),
      )
      .map((s) => s.lease);
    if (owners.length === 0) unowned.push(m);
    else if (owners.length > 1) multiple.push([m, owners]);
  }
  return { unowned, multiple };
}

/** Two live shards whose scopes overlap: this one does not start. */
export class ShardOverlapError extends WorkerStacksError {
  constructor(self: ShardScope, lease: string, other: Lease, otherScope: ShardScope) {
    super(
      `this daemon (${describeScope(self)}, Lease ${lease}) overlaps the live shard of Lease ${other.metadata.name} (${describeScope(otherScope)}, held by ${other.spec.holderIdentity}): an object matching both would be reconciled by both; refusing to start`,
      {
        hint: 'make the shards disjoint (for example -l tier=canary and -l tier!=canary), or stop the other shard first (its Lease is free once its holder stops renewing it)',
      },
    );
  }
}

/** The Leases of the daemon's namespace that carry a shard scope (plus a legacy `worker-stacks`). */
export async function listShardLeases(client: KubeClient, namespace: string): Promise<Lease[]> {
  const { body } = await client.request<{ items: Lease[] }>(
    'GET',
    `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/leases`,
  );
  return body.items.filter((l) => scopeOfLease(l) !== undefined);
}

export interface ShardOptions {
  readonly client: KubeClient;
  /** Where the Leases are (the daemon's namespace). */
  readonly leaseNamespace: string;
  readonly leaseName: string;
  readonly scope: ShardScope;
  readonly log: {
    info(o: object, m: string): void;
    warn(o: object, m: string): void;
    error(o: object, m: string): void;
  };
  /** @default Date.now */
  readonly now?: () => number;
  /** Between two looks at ownership while leading. @default 60 s */
  readonly checkIntervalMs?: number;
}

/** The leader election guard of a shard: throws ShardOverlapError when a live shard's scope overlaps this one. */
export function shardGuard(o: ShardOptions): () => Promise<void> {
  return async () => {
    let leases: Lease[];
    try {
      leases = await listShardLeases(o.client, o.leaseNamespace);
    } catch (e) {
      // Not knowing the other shards is not proof of an overlap: the look at ownership while leading says more.
      o.log.warn(
        {
          lease: `${o.leaseNamespace}/${o.leaseName}`,
          err: String(e),
          next: 'campaign anyway; ownership is looked at again while leading',
        },
        'could not list the shard Leases',
      );
      return;
    }
    const now = (o.now ?? Date.now)();
    const live = leases.filter((l) => isLive(l, now)).flatMap((l) => shardOfLease(l) ?? []);
    const other = overlappingShard({ lease: o.leaseName, scope: o.scope }, live);
    const lease = other && leases.find((l) => l.metadata.name === other.lease);
    if (other && lease) throw new ShardOverlapError(o.scope, o.leaseName, lease, other.scope);
  };
}

/** Counts, logs and reports (events) the WorkerClusters no live shard, or more than one, selects; while leading. */
export class ShardMonitor {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private lastUnowned = new Set<string>();
  private lastMultiple = new Set<string>();
  private readonly reported = new Set<string>();

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
    // One shard reports on the objects (the first live one by Lease name): one event each, not one per shard.
    if (scopes.map((s) => s.lease).sort()[0] === this.o.leaseName) {
      for (const m of unowned)
        await this.report(
          m,
          'Unowned',
          `no live shard selects this object (shards: ${shards.join('; ')}): nothing reconciles it, and its status is as last written; label it so that a shard selects it`,
        );
      for (const [m, owners] of multiple)
        await this.report(
          m,
          'MultiplyOwned',
          `the live shards of Leases ${owners.join(', ')} all select this object: both reconcile it; make their selectors disjoint`,
        );
    }
    // An object that is owned again, then loses its shard again, is reported again.
    const current = new Set([
      ...unowned.map((m) => reportKey('Unowned', m)),
      ...multiple.map(([m]) => reportKey('MultiplyOwned', m)),
    ]);
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
        items: { metadata: KubeObjectMeta }[];
      }>('GET', `${collectionPath(this.o.scope.namespace)}?${q.toString()}`, undefined, undefined, METADATA_ONLY);
      out.push(...body.items.map((i) => i.metadata));
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
