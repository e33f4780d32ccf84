import { KubeApiError, NotLeaderError } from '../../core/errors';
import { KubeClient } from './client';
import { sleep } from './sleep';

/**
 * Leader election on a coordination.k8s.io/v1 Lease, with client-go's semantics (tools/leaderelection), which
 * client-node does not have:
 *
 * - a candidate tries every `retryPeriod` to take the lease: it is free when nobody holds it, or when its record has
 *   not changed for `leaseDuration` as measured on the candidate's own clock since it last saw it change (no trust
 *   in another machine's clock); taking it sets holderIdentity, acquireTime and renewTime and counts a transition;
 * - the leader renews every `retryPeriod`; when no renewal has succeeded for `renewDeadline` (< leaseDuration) it
 *   stops leading, so it stops before any other candidate can take the lease;
 * - every write names the resourceVersion it read: two candidates never both win one round;
 * - on a clean stop the leader releases the lease (empty holder), so a successor need not wait it out.
 *
 * `canWrite()` is the fence for AWS writes: leading, and the last successful renewal started less than
 * `renewDeadline` ago (a process whose event loop stalled does not act on a lease it may have lost).
 */
export interface LeaderElectionOptions {
  /** This candidate (the pod name, by default). */
  readonly identity: string;
  readonly namespace: string;
  /** @default worker-stacks */
  readonly name?: string;
  /** @default 15000 */
  readonly leaseDurationMs?: number;
  /** @default 10000 */
  readonly renewDeadlineMs?: number;
  /** @default 2000 */
  readonly retryPeriodMs?: number;
  /** Release the lease on a clean stop. @default true */
  readonly releaseOnCancel?: boolean;
  readonly onStartedLeading?: () => void;
  readonly onStoppedLeading?: () => void;
  /** A new holder was seen (this candidate or another). */
  readonly onNewLeader?: (identity: string) => void;
  /** Told about failed attempts (logs). */
  readonly onError?: (err: unknown) => void;
  /** Labels and annotations every write of the Lease carries (a shard's scope: lib/platform/kube/shards.ts). @default none */
  readonly metadata?: { readonly labels?: Record<string, string>; readonly annotations?: Record<string, string> };
  /**
   * Checked before the first campaign and again on each acquisition, before leading: a throw ends `run()` with that
   * error (after releasing a lease just taken). Shards use it to refuse to run beside an overlapping shard.
   * @default none
   */
  readonly guard?: () => Promise<void>;
}

/** A Lease as the API server stores it (the fields election uses). */
export interface Lease {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec: {
    holderIdentity?: string | null;
    leaseDurationSeconds?: number;
    acquireTime?: string | null;
    renewTime?: string | null;
    leaseTransitions?: number;
  };
}

/** Where leases live: the API server, or a fake in unit tests. `update` throws a LeaseConflict on a stale version. */
export interface LeaseStore {
  get(): Promise<Lease | undefined>;
  create(lease: Lease): Promise<Lease>;
  update(lease: Lease): Promise<Lease>;
}

/** @internal exported for the lease-store tests */
export class LeaseConflict extends Error {}

/** Time, injectable: the state machine's unit tests run on a fake clock. */
export interface Clock {
  now(): number;
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

export const realClock: Clock = { now: () => Date.now(), sleep };

export class LeaderElector {
  private leading = false;
  /** When the last successful acquire/renew request was sent (the lease is ours from at most then). */
  private renewedAt = -Infinity;
  private observed?: string;
  private observedAt = -Infinity;
  private currentHolder = '';
  private readonly listeners = new Set<(leading: boolean) => void>();
  /** The last attempt reached the API server (readiness: a follower is ready too). */
  public reachable = false;
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly name: string;

  constructor(
    private readonly leases: LeaseStore,
    private readonly opts: LeaderElectionOptions,
    private readonly clock: Clock = realClock,
  ) {
    this.leaseDurationMs = opts.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = opts.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = opts.retryPeriodMs ?? 2_000;
    this.name = opts.name ?? 'worker-stacks';
    if (!(this.leaseDurationMs > this.renewDeadlineMs && this.renewDeadlineMs > this.retryPeriodMs)) {
      throw new Error(
        `leader election needs leaseDuration (${this.leaseDurationMs} ms) > renewDeadline (${this.renewDeadlineMs} ms) > retryPeriod (${this.retryPeriodMs} ms)`,
      );
    }
  }

  public isLeader(): boolean {
    return this.leading;
  }

  /** Called with true when this candidate starts leading, false when it stops. Returns an unsubscribe function. */
  public subscribe(fn: (leading: boolean) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** The holder last seen ('' when none). */
  public get holder(): string {
    return this.currentHolder;
  }

  /** May this process start an AWS write now? */
  public canWrite(): boolean {
    return this.leading && this.clock.now() - this.renewedAt < this.renewDeadlineMs;
  }

  /** Throws NotLeaderError unless canWrite(): the fence in front of every AWS write. */
  public check = (what: string): void => {
    if (!this.canWrite()) throw new NotLeaderError(this.opts.identity, what);
  };

  /**
   * Campaigns until `signal`: acquire, lead (renewing) until the renewal fails for renewDeadline, then campaign
   * again. Resolves after the stop, with the lease released when this candidate held it.
   */
  public async run(signal: AbortSignal): Promise<void> {
    // Read through a call: the signal is aborted while this awaits, so no narrowing of signal.aborted may outlive an await.
    const stopped = () => signal.aborted;
    await this.opts.guard?.();
    while (!stopped()) {
      // Acquire: one attempt per retry period (jittered, as client-go does, so candidates do not step in lockstep).
      while (!stopped() && !(await this.attempt()))
        await this.clock.sleep(this.retryPeriodMs * (1 + Math.random() * 0.2), signal);
      if (stopped()) break;
      // Two candidates that passed the first check at the same moment each see the other's lease now.
      try {
        await this.opts.guard?.();
      } catch (e) {
        await this.release();
        throw e;
      }
      this.setLeading(true);
      // Renew: every retry period; give up once no renewal succeeded for renewDeadline.
      while (!stopped()) {
        await this.clock.sleep(this.retryPeriodMs, signal);
        if (stopped()) break;
        const ok = await this.attempt();
        if (!ok && this.clock.now() - this.renewedAt >= this.renewDeadlineMs) break;
        if (!ok && this.currentHolder !== this.opts.identity && this.currentHolder !== '') break; // someone took it
      }
      this.setLeading(false);
    }
    if (this.renewedAt > -Infinity && this.currentHolder === this.opts.identity && this.opts.releaseOnCancel !== false)
      await this.release();
  }

  /** One try to acquire or renew (client-go's tryAcquireOrRenew). Public for the state machine's tests. */
  public async attempt(): Promise<boolean> {
    const now = this.clock.now();
    try {
      const cur = await this.leases.get();
      this.reachable = true;
      if (!cur) {
        const created = await this.leases.create(this.record(undefined, now, true));
        this.see(created, now);
        this.renewedAt = now;
        return true;
      }
      this.see(cur, now);
      const holder = cur.spec.holderIdentity ?? '';
      const mine = holder === this.opts.identity;
      const held =
        holder !== '' &&
        !mine &&
        this.observedAt + (cur.spec.leaseDurationSeconds ?? this.leaseDurationMs / 1000) * 1000 > now;
      if (held) return false;
      const updated = await this.leases.update(this.record(cur, now, !mine));
      this.see(updated, now);
      this.renewedAt = now;
      return true;
    } catch (e) {
      if (!(e instanceof LeaseConflict)) {
        this.reachable = false;
        this.opts.onError?.(e);
      }
      return false;
    }
  }

  private record(cur: Lease | undefined, now: number, takeover: boolean): Lease {
    const t = microTime(now);
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name: this.name,
        namespace: this.opts.namespace,
        ...(cur?.metadata.resourceVersion ? { resourceVersion: cur.metadata.resourceVersion } : {}),
        ...(this.opts.metadata?.labels ? { labels: this.opts.metadata.labels } : {}),
        ...(this.opts.metadata?.annotations ? { annotations: this.opts.metadata.annotations } : {}),
      },
      spec: {
        holderIdentity: this.opts.identity,
        leaseDurationSeconds: Math.ceil(this.leaseDurationMs / 1000),
        acquireTime: takeover ? t : (cur?.spec.acquireTime ?? t),
        renewTime: t,
        leaseTransitions: (cur?.spec.leaseTransitions ?? 0) + (cur && takeover ? 1 : 0),
      },
    };
  }

  /** Remembers when the record last changed, on this candidate's clock. */
  private see(lease: Lease, now: number): void {
    const key = JSON.stringify(lease.spec);
    if (key !== this.observed) {
      this.observed = key;
      this.observedAt = now;
    }
    const holder = lease.spec.holderIdentity ?? '';
    if (holder !== this.currentHolder) {
      this.currentHolder = holder;
      if (holder) this.opts.onNewLeader?.(holder);
    }
  }

  private setLeading(on: boolean): void {
    if (on === this.leading) return;
    this.leading = on;
    if (on) this.opts.onStartedLeading?.();
    else this.opts.onStoppedLeading?.();
    for (const l of this.listeners) l(on);
  }

  /** Empties the holder (leaseDuration 1 s) so that a successor takes over at its next try. */
  private async release(): Promise<void> {
    try {
      const cur = await this.leases.get();
      if (!cur || cur.spec.holderIdentity !== this.opts.identity) return;
      await this.leases.update({
        ...cur,
        spec: { ...cur.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: microTime(this.clock.now()) },
      });
      this.renewedAt = -Infinity;
    } catch (e) {
      this.opts.onError?.(e);
    }
  }
}

/** metav1.MicroTime: RFC 3339 with exactly six fractional digits. @internal exported for its tests */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** Leases in the API server (coordination.k8s.io/v1), a 409 being a LeaseConflict. */
export function apiLeaseStore(client: KubeClient, namespace: string, name = 'worker-stacks'): LeaseStore {
  const base = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/leases`;
  const conflict = (e: unknown) => {
    if (e instanceof KubeApiError && e.statusCode === 409) throw new LeaseConflict(e.message);
    throw e;
  };
  return {
    async get() {
      try {
        return (await client.request<Lease>('GET', `${base}/${name}`)).body;
      } catch (e) {
        if (e instanceof KubeApiError && e.statusCode === 404) return undefined;
        throw e;
      }
    },
    create: (lease) => client.request<Lease>('POST', base, lease).then((r) => r.body, conflict),
    update: (lease) => client.request<Lease>('PUT', `${base}/${name}`, lease).then((r) => r.body, conflict),
  };
}
