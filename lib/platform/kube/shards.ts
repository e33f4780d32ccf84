import { createHash } from 'node:crypto';
import { UsageError, WorkerStacksError } from '../../core/errors';
import { KubeClient } from './client';
import { LabelSelector } from './label-selector';
import { Lease } from './leader-election';
import { KubeObjectMeta } from './resource';

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
 * - While it leads, a shard (its ShardMonitor, shard-monitor.ts) looks at every WorkerCluster of its namespaces (a
 *   metadata-only list) every `checkIntervalMs`: those no live shard selects are unowned, those two select are
 *   multiply owned; both are counted (worker_stacks_unowned_clusters, worker_stacks_multiply_owned_clusters), logged
 *   when the set changes, and get a Warning event (`Unowned`, `MultiplyOwned`) from one shard (the live one whose
 *   Lease name sorts first; the event's name comes from the object's resourceVersion, so a second shard's post of it
 *   is refused).
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

/** A Lease as a shard, when it carries a scope. */
export function shardOfLease(lease: Lease): ShardOf | undefined {
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
  const { body } = await client.request<{ items: Lease[] | null }>(
    'GET',
    `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/leases`,
  );
  return (body.items ?? []).filter((l) => scopeOfLease(l) !== undefined);
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
  /**
   * How long an object must have been seen with no live shard (or with two) before it gets an event: shards that
   * start a few seconds apart, or whose Leases lapsed in an API-server outage, hold their Leases again within this.
   * The counts and the log follow every look. @default twice the lease duration, 30 s
   */
  readonly reportAfterMs?: number;
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
