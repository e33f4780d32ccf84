import { Counter, Gauge, Registry } from 'prom-client';
import { KubeApiError } from '../../core/errors';

/**
 * What the Kubernetes side of the daemon counts (watch health, shard ownership), process-wide: a store and a policy
 * source are made before the daemon's metrics registry (lib/engines/reconciler/runtime/metrics.ts), and one process runs one daemon,
 * so they count here and `registerKubeMetrics(registry)` exposes these counts on that registry at scrape time.
 */

/** Why a list or watch failed: the `reason` label of worker_stacks_watch_errors_total. */
export const WATCH_ERROR_REASONS = ['Expired', 'Throttled', 'Unavailable', 'Forbidden', 'Other'] as const;
export type WatchErrorReason = (typeof WATCH_ERROR_REASONS)[number];

/**
 * 410 Gone → Expired (the informer lists again); 429 → Throttled; 401/403 → Forbidden (RBAC or credentials: a
 * retry does not fix it, a human does); 5xx, a refused or reset connection, a timeout, a watch the server ends at
 * once → Unavailable; anything else → Other.
 */
export function watchErrorReason(err: unknown): WatchErrorReason {
  if (err instanceof KubeApiError) {
    if (err.statusCode === 410) return 'Expired';
    if (err.statusCode === 429) return 'Throttled';
    if (err.statusCode === 401 || err.statusCode === 403) return 'Forbidden';
    if (err.statusCode >= 500) return 'Unavailable';
    return 'Other';
  }
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (
    code &&
    /^(ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN|ENOTFOUND|UND_ERR_SOCKET)$/.test(code)
  )
    return 'Unavailable';
  if (
    /socket hang up|no answer from|ended at once|ECONNREFUSED|ECONNRESET/.test(
      String((err as Error | undefined)?.message ?? err),
    )
  )
    return 'Unavailable';
  return 'Other';
}

class KubeHealth {
  public readonly watchErrors = new Map<string, number>();
  public readonly relists = new Map<string, number>();
  /** WorkerClusters in this daemon's scope that no live shard selects; undefined while it does not lead (no look). */
  public unowned?: number;
  /** WorkerClusters that two or more live shards select. */
  public multiplyOwned?: number;

  public watchError(store: string, reason: WatchErrorReason): void {
    const key = `${store}\u0000${reason}`;
    this.watchErrors.set(key, (this.watchErrors.get(key) ?? 0) + 1);
  }

  public relisted(store: string): void {
    this.relists.set(store, (this.relists.get(store) ?? 0) + 1);
  }

  /** Count of errors of one store and reason (tests). */
  public errors(store: string, reason: WatchErrorReason): number {
    return this.watchErrors.get(`${store}\u0000${reason}`) ?? 0;
  }
}

/** The process's counts. */
export const kubeHealth = new KubeHealth();

/** Exposes the counts on a registry (the daemon's): read at each scrape. */
export function registerKubeMetrics(registry: Registry): void {
  const errors: Counter<'store' | 'reason'> = new Counter({
    name: 'worker_stacks_watch_errors_total',
    help: 'Failed lists and watches of the Kubernetes API, by store and reason (Expired: 410, relisted; Throttled: 429; Unavailable: network, 5xx, outage; Forbidden: 401/403; Other)',
    labelNames: ['store', 'reason'],
    registers: [registry],
    collect(): void {
      errors.reset();
      for (const [key, n] of kubeHealth.watchErrors) {
        const [store, reason] = key.split('\u0000');
        errors.inc({ store, reason }, n);
      }
    },
  });
  const relists: Counter<'store'> = new Counter({
    name: 'worker_stacks_watch_relists_total',
    help: 'Full lists after the first one (a 410 Gone: the watch expired), by store',
    labelNames: ['store'],
    registers: [registry],
    collect(): void {
      relists.reset();
      for (const [store, n] of kubeHealth.relists) relists.inc({ store }, n);
    },
  });
  const unowned: Gauge = new Gauge({
    name: 'worker_stacks_unowned_clusters',
    help: "WorkerClusters in this daemon's namespaces that no live shard's selector selects: nothing reconciles them",
    registers: [registry],
    collect(): void {
      // 0 on a replica that does not lead (it does not look): the leader's series is the one that counts.
      if (kubeHealth.unowned === undefined) unowned.reset();
      else unowned.set(kubeHealth.unowned);
    },
  });
  const multiple: Gauge = new Gauge({
    name: 'worker_stacks_multiply_owned_clusters',
    help: 'WorkerClusters that two or more live shards select (overlapping shards: a starting shard refuses that)',
    registers: [registry],
    collect(): void {
      if (kubeHealth.multiplyOwned === undefined) multiple.reset();
      else multiple.set(kubeHealth.multiplyOwned);
    },
  });
}
