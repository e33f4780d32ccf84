import { DEFAULT_POOL } from '../../lib/model/cluster/pools';
import { isComplete, isInProgress } from '../../lib/model/ports/cloudformation-port';
import { validateCluster } from '../../lib/model/cluster/validate';
import { renderCluster } from '../../lib/model/cluster/derive';
import { ClusterStatus, getCondition } from '../../lib/model/cluster/status';
import { DEFAULT_TEMPLATES_DIR, listTemplates } from '../../lib/model/cloudconfig/templates';
import { poolStackName, workerStackName } from '../../lib/core/naming';
import { queueState } from './sim-process';
import type { SimWorld } from './sim-world';

/** The pool with a stack of its own in a world with pools (sim-world.ts). */
export const SPOT = 'spot';

/** A broken promise of the reconciler's contract, with what the simulator saw. */
export class InvariantViolation extends Error {
  public override readonly name = 'InvariantViolation';
}

/** Reasons that say an operation is under way (README's words): never on a stack that has failed or rolled back. */
const IN_PROGRESS_REASONS = new Set(['ChangeSetExecuting', 'WaitingForStack']);
const FAILED_STACK = /ROLLBACK|FAILED/;

/**
 * The contract's invariants, written once. Call-time ones live where the call is seen (SimAws: no change set while
 * our own operation runs, executions per inputs, one leader writing); status-time ones are checked at each status
 * write (what the write claims must rest on what was read); state ones after every scheduler step, and those that
 * hold only between reconciles (slots, a deleted object's leftovers) when the leader has nothing in hand.
 */
export class Invariants {
  /** Invariant evaluations, for the bench and the soak's report. */
  public checks = 0;
  private readonly found: string[] = [];

  constructor(private readonly w: SimWorld) {}

  public fail(message: string): void {
    this.found.push(message);
    this.throwIfBroken();
  }

  /**
   * Throws the first violation seen (the one the shrinker then minimizes). SIM_IGNORE (the soak's --ignore, for
   * exploring what else breaks while a known bug is unfixed; never set by a test) names invariant ids to pass over.
   */
  public throwIfBroken(): void {
    const ignored = new Set((process.env.SIM_IGNORE ?? '').split(',').filter(Boolean));
    const v = [...this.found, ...this.w.aws.violations].find((x) => !ignored.has(/^\[([a-z-]+)\]/.exec(x)?.[1] ?? ''));
    if (v) throw new InvariantViolation(v);
  }

  /**
   * At a status write: Ready=True only on a *_COMPLETE (not rolled back) stack whose live checksum is the recorded one,
   * seen in a read this process took after our last execution on that stack; no "in progress" words on a stack
   * recorded as failed or rolled back in the same write.
   */
  public onStatusWrite(name: string, status: ClusterStatus, pid: number): void {
    const before = this.lastWritten.get(name);
    this.lastWritten.set(name, status);
    this.unitWrite(name, workerStackName(name), status, before, pid, 'shared stack');
    this.topReady(name, status);
    // Each pool's entry is held to the same rules against its own stack (a unit's recorded checksum is one its stack reported).
    for (const p of status.pools ?? []) {
      const { name: pool, ...unit } = p;
      const prev = before?.pools?.find((x) => x.name === pool);
      this.unitWrite(`${name}/${pool}`, p.stackName, unit, prev && { ...prev }, pid, `pool ${pool}`);
    }
  }

  /**
   * At a status write: the top level says Ready=True only when every pool of the object (the generation it was
   * observed at) with a stack of its own has an entry that is Ready=True: the cluster's Ready is every stack's.
   */
  private topReady(name: string, status: ClusterStatus): void {
    this.checks++;
    const ready = getCondition(status, 'Ready');
    if (ready?.status !== 'True' || ready.observedGeneration !== this.w.store.generation(name)) return;
    const pools = (this.w.store.raw(name) as { spec?: { pools?: { name: string }[] } } | undefined)?.spec?.pools ?? [];
    const notReady = pools
      .map((p) => p.name)
      .filter((p) => p !== DEFAULT_POOL)
      .filter(
        (p) =>
          getCondition(
            status.pools?.find((e) => e.name === p),
            'Ready',
          )?.status !== 'True',
      );
    if (notReady.length)
      this.found.push(
        `[ready-pools] ${name}: Ready=True (${ready.reason}) recorded at the top level while pools ${notReady.join(', ')} are not Ready (${notReady
          .map((p) => {
            const c = getCondition(
              status.pools?.find((e) => e.name === p),
              'Ready',
            );
            return c ? `${c.status} ${c.reason}` : 'no entry';
          })
          .join('; ')})`,
      );
  }

  /** The write's claims about one stack of the cluster (its top level, or a pool's entry). */
  private unitWrite(
    name: string,
    stack: string,
    status: ClusterStatus,
    before: ClusterStatus | undefined,
    pid: number,
    what: string,
  ): void {
    this.checks += 2;
    const ready = getCondition(status, 'Ready');
    const prev = getCondition(before, 'Ready');
    const claims =
      ready?.status === 'True' &&
      (prev?.status !== 'True' ||
        prev.reason !== ready.reason ||
        prev.observedGeneration !== ready.observedGeneration ||
        before?.cloudConfigChecksum !== status.cloudConfigChecksum);
    if (claims) {
      if (!status.stackStatus || !isComplete(status.stackStatus))
        this.found.push(
          `[ready] ${name} (${what}): Ready=True (${ready.reason}) recorded with stack status ${status.stackStatus}`,
        );
      const after = this.w.aws.lastExecute.get(stack) ?? 0;
      const reads = this.w.aws.reads.get(pid)?.get(stack) ?? [];
      const seen = reads.some(
        (r) =>
          r.seq > after &&
          r.stack &&
          isComplete(r.stack.status) &&
          r.stack.outputs.ConfigChecksum === status.cloudConfigChecksum,
      );
      if (!seen) {
        const seenWhat =
          reads
            .map((r) => `#${r.seq} ${r.stack?.status ?? 'absent'} ${short8(r.stack?.outputs.ConfigChecksum) ?? '-'}`)
            .join(', ') || 'none';
        this.found.push(
          `[ready] ${name} (${what}): Ready=True (${ready.reason}) on checksum ${status.cloudConfigChecksum?.slice(0, 8)} without a read of ${stack} complete carrying it after our last execution (#${after}); reads since: ${seenWhat}`,
        );
      }
    }
    for (const c of status.conditions) {
      if (
        (c.status === 'True' || c.type === 'Ready') &&
        IN_PROGRESS_REASONS.has(c.reason) &&
        !status.controller?.executing &&
        FAILED_STACK.test(status.stackStatus ?? '')
      ) {
        this.found.push(
          `[words] ${name} (${what}): ${c.type} says ${c.reason} ("${c.message}") while the stack recorded in the same write is ${status.stackStatus}`,
        );
      }
    }
  }

  private readonly lastWritten = new Map<string, ClusterStatus | undefined>();

  /** After every scheduler step and every command. */
  public afterStep(): void {
    this.checks += 3; // the call-time invariants, counted here: no change set while in progress, executions, leaders
    this.shards();
    this.pools();
    this.throwIfBroken();
  }

  /**
   * A world with pools: no more of a cluster's stacks replace nodes at once than spec.rollout.maxConcurrentPools (1),
   * and a stack rolls back only when a command made it fail (a failing pool never makes another stack roll back).
   */
  private pools(): void {
    if (!this.w.opts.pools) return;
    for (const n of this.w.names) {
      this.checks += 2;
      const rolling = this.w.stacksOf(n).filter((s) => this.w.aws.fake.rollsNodes(s));
      if (rolling.length > 1)
        this.found.push(
          `[pools] ${n}: ${rolling.join(' and ')} replace nodes at once, beyond spec.rollout.maxConcurrentPools 1`,
        );
      for (const stack of this.w.stacksOf(n)) {
        const s = this.w.aws.truth(stack);
        if (s && /ROLLBACK/.test(s.status) && !this.w.failed.has(stack))
          this.found.push(
            `[pools] ${stack} is ${s.status}, though no command made it fail: another stack's failure rolled it back`,
          );
      }
    }
  }

  /** Every object is owned by exactly one shard, or reported as unowned (sim-shards.ts); no two running shards overlap. */
  private shards(): void {
    const objects = this.w.names
      .filter((n) => this.w.store.has(n))
      .map((name) => ({
        name,
        labels: (this.w.store.raw(name) as { metadata: { labels?: Record<string, string> } }).metadata.labels,
      }));
    this.checks += objects.length + 1;
    this.found.push(...this.w.shards.check(objects));
  }

  /**
   * Between reconciles of the leader (nothing in hand): every slot is held by a roll in progress whose cluster will be
   * looked at again, and a roll of ours in progress holds one; a deleted object holds no slot.
   */
  public quiescent(): void {
    const l = this.w.leader;
    if (l.busy || l.dead) return;
    const q = queueState(l.queue);
    for (const key of l.controller.slots.names()) {
      this.checks++;
      // A slot is the roll's while its stack is in progress; after that, until the look that is already due (a
      // requeue, not the resync) sees it settled. Held past both, nothing gives it back: --concurrency shrinks.
      // A pool's own stack holds the slot `<cluster>/<pool>`; its cluster is the one looked at again.
      const [c, pool] = key.split('/');
      const stack = this.w.aws.truth(pool ? poolStackName(c, pool) : workerStackName(c));
      if (!(stack && isInProgress(stack.status)) && !q.pending(c)) {
        const why = !this.w.store.has(c)
          ? 'its object is deleted'
          : getCondition(this.w.store.status(c), 'Stalled')?.status === 'True'
            ? 'it is Stalled'
            : 'it is not requeued';
        this.found.push(
          `[slots] slot leaked: ${key} holds a slot of --concurrency ${this.w.opts.concurrency}, its stack is ${stack?.status ?? 'absent'} and nothing will look at it again (${why})`,
        );
      }
    }
    for (const c of this.w.names) {
      const status = this.w.store.status(c);
      const units = [
        { stack: workerStackName(c), key: c, executing: status?.controller?.executing },
        ...(status?.pools ?? []).map((p) => ({
          stack: p.stackName,
          key: `${c}/${p.name}`,
          executing: p.controller?.executing,
        })),
      ];
      for (const u of units) {
        this.checks++;
        const s = this.w.aws.truth(u.stack);
        if (
          this.w.aws.ours.has(u.stack) &&
          s &&
          isInProgress(s.status) &&
          u.executing &&
          l.reconciles > 0 &&
          !l.controller.slots.names().has(u.key)
        ) {
          this.found.push(
            `[slots] ${u.key}: our roll of ${u.stack} is ${s.status} (recorded as executing) but holds no slot: --concurrency does not bound it`,
          );
        }
      }
    }
    this.throwIfBroken();
  }

  /** Liveness: every object converged (Ready on its desired checksum, or Stalled with a reason); deleted ones left nothing. */
  public converged(): boolean {
    const l = this.w.leader;
    if (l.busy || this.w.aws.ours.size > 0) return false;
    return this.w.names.every((n) => this.w.deleted.has(n) || this.stateOf(n) !== undefined);
  }

  /** The checks of a converged world that hold for good: a deleted object has no slot, queue entry or metric series. */
  public async settled(): Promise<void> {
    const l = this.w.leader;
    for (const d of this.w.deleted) {
      this.checks += 3;
      if ([...l.controller.slots.names()].some((k) => k === d || k.startsWith(`${d}/`)))
        this.found.push(`[deleted] ${d} deleted, still holds a slot`);
      if (queueState(l.queue).holds(d)) this.found.push(`[deleted] ${d} deleted, is still in the work queue`);
      const series = (await l.metrics.registry.getMetricsAsJSON()).some((m) =>
        m.values.some((v) => v.labels.cluster === d),
      );
      if (series) this.found.push(`[deleted] ${d} deleted, still has a metric series`);
    }
    this.throwIfBroken();
  }

  /** Why each object has not converged, for the failure message. */
  public describe(): string {
    return this.w.names
      .map((n) => {
        const s = this.w.store.status(n);
        const stack = this.w.aws.truth(workerStackName(n));
        const cond = (t: 'Ready' | 'Stalled' | 'Progressing', u: Pick<ClusterStatus, 'conditions'> | undefined = s) =>
          `${t}=${getCondition(u && { conditions: u.conditions }, t)?.status ?? '-'}/${getCondition(u && { conditions: u.conditions }, t)?.reason ?? '-'}`;
        const why =
          getCondition(s, 'Stalled')?.status === 'True'
            ? ` ("${getCondition(s, 'Stalled')?.message.slice(0, 300)}")`
            : '';
        return `${n}${this.w.deleted.has(n) ? ' (deleted)' : ''}: ${cond('Ready')} ${cond('Stalled')}${why} ${cond('Progressing')} recorded ${s?.cloudConfigChecksum?.slice(0, 8)} desired ${this.desired(n)?.shared.slice(0, 8)} stack ${stack?.status ?? 'absent'} live ${short8(stack?.outputs.ConfigChecksum)}${(
          s?.pools ?? []
        )
          .map(
            (p) =>
              ` [pool ${p.name}: ${cond('Ready', p)} ${cond('Stalled', p)} ${cond('Progressing', p)} recorded ${p.cloudConfigChecksum?.slice(0, 8)} desired ${this.desired(n)?.spot?.slice(0, 8)} stack ${this.w.aws.truth(p.stackName)?.status ?? 'absent'} live ${short8(this.w.aws.truth(p.stackName)?.outputs.ConfigChecksum)}]`,
          )
          .join('')}`;
      })
      .join('; ');
  }

  /** 'ready' or 'stalled' once converged; undefined while not. */
  private stateOf(name: string): 'ready' | 'stalled' | undefined {
    this.checks++;
    const s = this.w.store.status(name);
    const stalled = getCondition(s, 'Stalled');
    if (stalled?.status === 'True' && stalled.reason && stalled.message) return 'stalled';
    // Held by a halted rollout (haltOnFailure) behind a cluster that needs a human: waiting for that human too.
    const progressing = getCondition(s, 'Progressing');
    const anyStalled = this.w.names.some((n) => getCondition(this.w.store.status(n), 'Stalled')?.status === 'True');
    if (progressing?.reason === 'RolloutHalted' && progressing.status === 'False' && anyStalled) return 'stalled';
    const desired = this.desired(name);
    const units = [
      { stack: workerStackName(name), status: s, desired: desired?.shared },
      ...(this.w.opts.pools && desired?.spot !== undefined
        ? [
            {
              stack: poolStackName(name, SPOT),
              status: s?.pools?.find((p) => p.name === SPOT),
              desired: desired.spot,
            },
          ]
        : []),
    ];
    // A pool removed from the object (removePool): its stack is gone, and so is its entry; or its delete failed and
    // the entry says so (Stalled, DeleteFailed).
    if (this.w.opts.pools && desired && desired.spot === undefined) {
      const left = this.w.aws.truth(poolStackName(name, SPOT));
      const entry = s?.pools?.find((p) => p.name === SPOT);
      const stopped = getCondition(entry && { conditions: entry.conditions }, 'Stalled')?.status === 'True';
      if ((left || entry) && !stopped) return undefined;
    }
    // Each stack on its own: Ready on its desired config, or stopped with a reason (a pool broken for good stalls,
    // and must hold no other stack back). The top level is Ready only when every stack is.
    const states = units.map((u) => {
      const stalledUnit = getCondition(u.status, 'Stalled');
      if (stalledUnit?.status === 'True' && stalledUnit.reason && stalledUnit.message) return 'stalled';
      const stack = this.w.aws.truth(u.stack);
      const ready = getCondition(u.status, 'Ready');
      // The top level's Ready says PoolsNotReady while a pool is not: the shared stack itself is Ready then.
      const own = ready?.status === 'True' || ready?.reason === 'PoolsNotReady';
      return u.desired !== undefined &&
        own &&
        u.status?.cloudConfigChecksum === u.desired &&
        u.status.observedGeneration === this.w.store.generation(name) &&
        stack &&
        isComplete(stack.status) &&
        stack.outputs.ConfigChecksum === u.desired
        ? 'ready'
        : undefined;
    });
    if (states.some((x) => x === undefined)) return undefined;
    if (states.every((x) => x === 'ready')) return getCondition(s, 'Ready')?.status === 'True' ? 'ready' : undefined;
    // A pool stopped: the rest Ready, the top level not (it names the pool).
    return getCondition(s, 'Ready')?.status === 'False' ? 'stalled' : undefined;
  }

  /** The checksums the object renders to, of its shared stack and its spot pool (undefined: invalid), as the reconciler derives them. */
  public desired(name: string): { readonly shared: string; readonly spot?: string } | undefined {
    const raw = this.w.store.raw(name);
    const key = JSON.stringify(raw);
    let hit = DESIRED.get(key);
    if (hit === undefined) {
      const v = validateCluster(raw, { file: name, templates: listTemplates(DEFAULT_TEMPLATES_DIR) });
      const r = 'cluster' in v && v.cluster ? renderCluster(v.cluster, name, DEFAULT_TEMPLATES_DIR) : undefined;
      hit = r && 'config' in r ? { shared: r.config.checksum, spot: r.configs.get(SPOT)?.checksum } : null;
      DESIRED.set(key, hit);
    }
    return hit ?? undefined;
  }
}

/** The first 8 characters of a checksum (a listing may leave it out, whatever its type says). */
function short8(checksum: string | undefined): string | undefined {
  return checksum?.slice(0, 8);
}

/** Rendering is a pure function of the object: one memo for every schedule of the run. */
const DESIRED = new Map<string, { readonly shared: string; readonly spot?: string } | null>();
