import { DEFAULT_POOL, stackUnits } from '../../lib/model/cluster/pools/pools';
import { isComplete, isInProgress, isRolledBack } from '../../lib/model/ports/cloudformation-port';
import { validateCluster } from '../../lib/model/cluster/validate';
import { renderCluster } from '../../lib/model/cluster/derive';
import { ClusterStatus, getCondition } from '../../lib/model/cluster/schema/status';
import { listTemplates } from '../../lib/model/cloudconfig/templates';
import { poolStackName, workerStackName } from '../../lib/core/naming';
import { WorkerCluster } from '../../lib/model/cluster/schema/schema';
import { matches } from '../../lib/model/cluster/schema/selector';
import { parseDuration } from '../../lib/model/cluster/schema/duration';
import { RenderedConfig } from '../../lib/model/cloudconfig/render';
import { rollKeyOfBody } from '../../lib/engines/stacks/roll-key';
import { OperationStart, outputsOf } from '../fakes/fake-cloudformation';
import { queueState } from './sim-process';
import { releaseOfTemplate, simStack } from './sim-synth';
import type { SimWorld } from './sim-world';
import { ChannelInvariants } from './channel-invariants';
import { DEFAULT_TEMPLATES_DIR, defaultTemplates } from '../../lib/platform/files/template-directory';

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
  /**
   * What the operation invariants judged (so a run shows they were reached): updates that replaced nodes, those that
   * brought a release, those of a later wave's cluster among them, and removed pools' stacks deleted.
   */
  public readonly judged = { replacing: 0, releases: 0, laterWave: 0, removals: 0 };
  private readonly found: string[] = [];
  /** The invariants of a channel world (channel-invariants.ts): releases through the waves, halts, pins. */
  public readonly channel: ChannelInvariants;

  constructor(private readonly w: SimWorld) {
    this.channel = new ChannelInvariants(w, {
      waveOf: (c) => this.waveOf(c),
      waveName: (i) => this.waveName(i),
      stacksInObject: (c) => this.stacksInObject(c),
      report: (m) => void this.found.push(m),
      count: (n = 1) => void (this.checks += n),
    });
  }

  public fail(message: string): void {
    this.found.push(message);
    this.throwIfBroken();
  }

  /**
   * Throws the first violation seen (the one the shrinker then minimizes). SIM_IGNORE (the soak's --ignore, for
   * exploring what else breaks while a known bug is unfixed; never set by a test) names invariant ids to pass over.
   */
  public throwIfBroken(): void {
    if (this.found.length === 0 && this.w.aws.violations.length === 0) return; // after every step: the usual case
    const v = [...this.found, ...this.w.aws.violations].find(
      (x) => !this.ignored.has(/^\[([a-z-]+)\]/.exec(x)?.[1] ?? ''),
    );
    if (v) throw new InvariantViolation(v);
  }

  private readonly ignored = new Set((process.env.SIM_IGNORE ?? '').split(',').filter(Boolean));

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
      // A stack rolled back to a template that is what the object asks for (a halted channel release, an edit
      // reverted: the reconciler's change set has no changes) is settled on it: UpToDate there is no claim about the
      // failed operation.
      const settled = (st: string) => isComplete(st) || (ready.reason === 'UpToDate' && isRolledBack(st));
      if (!status.stackStatus || !settled(status.stackStatus))
        this.found.push(
          `[ready] ${name} (${what}): Ready=True (${ready.reason}) recorded with stack status ${status.stackStatus}`,
        );
      const after = this.w.aws.lastExecute.get(stack) ?? 0;
      const reads = this.w.aws.reads.get(pid)?.get(stack) ?? [];
      const seen = reads.some(
        (r) =>
          r.seq > after &&
          r.stack &&
          settled(r.stack.status) &&
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

  /** A world with pools: a stack rolls back only when a command made it fail (a failing pool never rolls another back). */
  private pools(): void {
    if (!this.w.opts.pools) return;
    for (const n of this.w.names) {
      for (const stack of this.w.stacksOf(n)) {
        this.checks++;
        const s = this.w.aws.truth(stack);
        if (s && /ROLLBACK/.test(s.status) && !this.w.failed.has(stack))
          this.found.push(
            `[pools] ${stack} is ${s.status}, though no command made it fail: another stack's failure rolled it back`,
          );
      }
    }
  }

  /**
   * As each stack operation starts (the fake's onBegin: our executions, deletes and recoveries, and anyone else's): an
   * update that replaces nodes is held to spec.rollout.maxConcurrentPools and to the fleet's waves; a delete of a
   * removed pool's stack to its cluster's other pools being settled. Counts only change as operations start, so this
   * is every moment at which a bound could be passed.
   */
  public onBegin(op: OperationStart, caller?: number): void {
    const owner = this.owners.get(op.stackName);
    if (!owner) return;
    const replaces = op.kind === 'update' && replacesNodes(op.from, op.to);
    if (replaces) {
      this.judged.replacing++;
      this.poolRolls(owner.cluster, op.stackName);
      this.waves(owner.cluster, op);
    }
    if (this.w.channel) this.channel.onBegin(op, owner.cluster, replaces, caller);
    if (op.kind === 'delete' && owner.pool !== undefined)
      this.poolRemoval(owner.cluster, owner.pool, op.stackName, caller);
  }

  /** As each stack settles: the highest release it has carried live, and since when (the waves' evidence, soak included). */
  public onSettle(stackName: string, status: string, template: string | undefined): void {
    if (!/_COMPLETE$/.test(status) || /ROLLBACK|DELETE/.test(status)) return;
    if (this.w.channel) this.channel.onSettle(stackName, template);
    const release = releaseOfTemplate(template);
    if (release > (this.reached.get(stackName)?.release ?? 0))
      this.reached.set(stackName, { release, at: this.w.aws.clock.ms });
  }

  /** Stack name → its cluster, and its pool when it is a pool's own stack. */
  private readonly owners = new Map<string, { readonly cluster: string; readonly pool?: string }>();
  /** The highest release each stack has carried live (a template our release() wrote), and when it first did. */
  private readonly reached = new Map<string, { readonly release: number; readonly at: number }>();

  /** Indexes the world's stacks by name (called once the world knows them). */
  public index(): void {
    for (const n of this.w.names) {
      this.owners.set(workerStackName(n), { cluster: n });
      if (this.w.opts.pools) this.owners.set(poolStackName(n, SPOT), { cluster: n, pool: SPOT });
    }
  }

  /** The stacks of the cluster whose update in progress replaces nodes (the roll key of the live template and the applied one differ). */
  private replacing(cluster: string): string[] {
    return this.w.stacksOf(cluster).filter((stack) => {
      const s = this.w.aws.fake.inspect(stack);
      return s?.op?.kind === 'update' && replacesNodes(s.template, s.op.template);
    });
  }

  /** The object's spec.rollout.maxConcurrentPools (its default 1; 1 for an object gone or not yet valid). */
  private maxConcurrentPools(cluster: string): number {
    const raw = this.w.store.raw(cluster) as { spec?: { rollout?: { maxConcurrentPools?: unknown } } } | undefined;
    const max = raw?.spec?.rollout?.maxConcurrentPools;
    return typeof max === 'number' ? max : 1;
  }

  /**
   * 1. No more of a cluster's stacks replace nodes at once than spec.rollout.maxConcurrentPools: counted from the fake's
   * operations in progress, each an update whose roll key (lib/engines/stacks/roll-key.ts) differs from the live
   * template's. A create replaces nothing.
   */
  private poolRolls(cluster: string, started: string): void {
    this.checks++;
    const max = this.maxConcurrentPools(cluster);
    const rolling = this.replacing(cluster);
    if (rolling.length > max)
      this.found.push(
        `[pool-rolls] ${cluster}: ${rolling.join(' and ')} replace nodes at once (${started} started last), beyond spec.rollout.maxConcurrentPools ${max}`,
      );
  }

  /**
   * 2. A pool removed from the object: its stack is deleted only while every other stack of the cluster is settled and
   * Ready: it exists, it is not replacing nodes (as in 1) nor in any other operation, it has not failed or rolled back,
   * and it carries what the object asks for (its config checksum, and the roll key under the deleting process's code:
   * a roll pending or held is not Ready). Judged against the object as the deleting process last read it (an edit
   * after that read is its next look's business). A delete that recovers a pool still in the object is no removal.
   */
  private poolRemoval(cluster: string, pool: string, stack: string, caller?: number): void {
    const read = caller === undefined ? undefined : this.w.store.lastRead.get(caller)?.get(cluster);
    const raw = (read ?? this.w.store.raw(cluster)) as { spec?: { pools?: { name: string }[] } } | undefined;
    if (!raw || raw.spec?.pools?.some((p) => p.name === pool)) return; // the object is gone, or the pool is still in it
    this.checks++;
    this.judged.removals++;
    const process = this.w.processes.find((p) => p.id === caller);
    const release = process?.release ?? this.w.release;
    // A channel world: the pools on the channel as the deleting process pins them.
    const pinned = this.w.channel?.pinned(raw, process?.pins?.resolver()) ?? raw;
    const d = derived(pinned, cluster);
    const keys = this.rollKeysOf(pinned, cluster, release);
    const others = [
      { stack: workerStackName(cluster), checksum: d?.shared },
      ...(raw.spec?.pools ?? [])
        .filter((p) => p.name !== DEFAULT_POOL && p.name !== pool)
        .map((p) => ({ stack: poolStackName(cluster, p.name), checksum: d?.configs.get(p.name)?.checksum })),
    ];
    for (const o of others) {
      const s = this.w.aws.truth(o.stack);
      const now = this.w.aws.fake.inspect(o.stack);
      const live = now?.template;
      const why =
        now?.op?.kind === 'update' && replacesNodes(live, now.op.template)
          ? 'replaces nodes'
          : !s
            ? 'does not exist'
            : // Rolled back onto what the object asks for (a halted image release: checked just below) is settled.
              isInProgress(s.status) || (FAILED_STACK.test(s.status) && s.status !== 'UPDATE_ROLLBACK_COMPLETE')
              ? `is ${s.status}`
              : o.checksum !== undefined && s.outputs.ConfigChecksum !== o.checksum
                ? `carries config ${short8(s.outputs.ConfigChecksum)}, not the object's ${short8(o.checksum)}`
                : keys && live && rollKeyOf(live) !== keys.get(o.stack)
                  ? `has a replacement of its nodes pending (its roll key is not the one the object asks for under release ${release})`
                  : undefined;
      if (why)
        this.found.push(
          `[pool-removal] ${cluster}: the stack ${stack} of removed pool ${pool} is deleted while ${o.stack} ${why}`,
        );
    }
  }

  /**
   * 3. The fleet's waves (a world with a rollout policy): a stack of a later wave's cluster starts replacing its nodes
   * for a release (its update brings a newer release() than it carries) only once every cluster of the earlier waves
   * has settled on that release: each of their stacks in the object that has a live template has carried it live (a
   * stack being created is never held), for at least its wave's soak.
   */
  private waves(cluster: string, op: OperationStart): void {
    const policy = this.w.policy;
    if (!policy) return;
    const release = releaseOfTemplate(op.to);
    if (release <= releaseOfTemplate(op.from)) return;
    this.checks++;
    this.judged.releases++;
    const wave = this.waveOf(cluster);
    if (wave === undefined) return;
    if (wave > 0) this.judged.laterWave++;
    const now = this.w.aws.clock.ms;
    for (const other of this.w.names) {
      const w = this.waveOf(other);
      if (w === undefined || w >= wave) continue;
      const settings = w < policy.spec.waves.length ? policy.spec.waves[w] : policy.spec.remainder;
      const soak = parseDuration(settings.soak) ?? 0;
      for (const stack of this.stacksInObject(other)) {
        this.checks++;
        if (!this.w.aws.fake.inspect(stack)?.template) continue; // absent, or its first create: never held
        const reached = this.reached.get(stack) ?? { release: 0, at: 0 };
        const unsettled =
          reached.release < release
            ? `carries release ${releaseOfTemplate(this.w.aws.fake.inspect(stack)?.template)}${this.w.aws.fake.inspect(stack)?.op ? ` (${this.w.aws.truth(stack)?.status})` : ''}`
            : now - reached.at < soak
              ? `has carried release ${reached.release} for ${now - reached.at} ms, less than its wave's soak ${settings.soak}`
              : undefined;
        if (unsettled)
          this.found.push(
            `[waves] ${cluster} (wave ${this.waveName(wave)}) starts replacing the nodes of ${op.stackName} for release ${release} while ${other} of the earlier wave ${this.waveName(w)} has not settled on it: ${stack} ${unsettled}`,
          );
      }
    }
  }

  /** The policy's wave of a cluster by its labels now (its index; the remainder after the waves), or undefined: gone. */
  private waveOf(cluster: string): number | undefined {
    const policy = this.w.policy;
    const raw = this.w.store.raw(cluster) as { metadata?: { labels?: Record<string, string> } } | undefined;
    if (!policy || !raw) return undefined;
    const labels = raw.metadata?.labels ?? {};
    if (policy.spec.clusterSelector && !matches(policy.spec.clusterSelector, labels)) return undefined;
    const i = policy.spec.waves.findIndex((w) => matches(w.selector, labels));
    return i >= 0 ? i : policy.spec.waves.length;
  }

  private waveName(i: number): string {
    const policy = this.w.policy!;
    return i < policy.spec.waves.length ? policy.spec.waves[i].name : policy.spec.remainder.name;
  }

  /** The stacks the object asks for now: the shared one, and each pool's own in its spec. */
  private stacksInObject(cluster: string): string[] {
    const raw = this.w.store.raw(cluster) as { spec?: { pools?: { name: string }[] } } | undefined;
    if (!raw) return [];
    return [
      workerStackName(cluster),
      ...(raw.spec?.pools ?? []).filter((p) => p.name !== DEFAULT_POOL).map((p) => poolStackName(cluster, p.name)),
    ];
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
    return this.w.names.every((n) => this.w.deleted.has(n) || this.stateOf(n) !== undefined) && this.channel.caughtUp();
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
        return `${n}${this.w.deleted.has(n) ? ' (deleted)' : ''}: ${cond('Ready')} ${cond('Stalled')}${why} ${cond('Progressing')} recorded ${s?.cloudConfigChecksum?.slice(0, 8)} desired ${this.desired(n)?.shared.slice(0, 8)} stack ${stack?.status ?? 'absent'} live ${short8(stack?.outputs.ConfigChecksum)} ${this.rollWords(n, workerStackName(n))}${(
          s?.pools ?? []
        )
          .map(
            (p) =>
              ` [pool ${p.name}: ${cond('Ready', p)} ${cond('Stalled', p)} ${cond('Progressing', p)} recorded ${p.cloudConfigChecksum?.slice(0, 8)} desired ${this.desired(n)?.spot?.slice(0, 8)} stack ${this.w.aws.truth(p.stackName)?.status ?? 'absent'} live ${short8(this.w.aws.truth(p.stackName)?.outputs.ConfigChecksum)} ${this.rollWords(n, p.stackName)}]`,
          )
          .join('')}`;
      })
      .join('; ');
  }

  /** A stack's live release and whether its live roll key is the desired one, for the failure message. */
  private rollWords(cluster: string, stack: string): string {
    const live = this.liveRollKey(stack);
    const want = this.desiredRollKeys(cluster)?.get(stack);
    return `release ${releaseOfTemplate(this.w.aws.fake.inspect(stack)?.template)} of ${this.w.release}, roll key ${live === want ? 'desired' : `${live?.slice(4, 12) ?? '-'} wanted ${want?.slice(4, 12) ?? '-'}`}`;
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
    // and must hold no other stack back). The top level is Ready only when every stack is. Ready on its config means
    // its live template carries the roll key the object and the deployed release ask for too (a new image, a
    // release): a Ready that never rolled them has not converged.
    const keys = this.desiredRollKeys(name);
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
        (isComplete(stack.status) || (isRolledBack(stack.status) && ready.reason === 'UpToDate')) &&
        stack.outputs.ConfigChecksum === u.desired &&
        this.liveRollKey(u.stack) === keys?.get(u.stack)
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
    const d = derived(this.pinned(name), name);
    return d && { shared: d.shared, spot: d.configs.get(SPOT)?.checksum };
  }

  /**
   * The roll key each stack of the object asks for under the code now deployed (the world's release), by stack name
   * (undefined: the object is invalid): what its live template must carry once it has converged.
   */
  public desiredRollKeys(name: string): ReadonlyMap<string, string | undefined> | undefined {
    return this.rollKeysOf(this.pinned(name), name, this.w.release);
  }

  /** The object as the reconciler validates it: in a channel world, its channel's pools pinned as the channel's status says. */
  private pinned(name: string): unknown {
    const raw = this.w.store.raw(name);
    return this.w.channel ? this.w.channel.pinned(raw) : raw;
  }

  /** The roll key of each stack of an object (a version of it) under release `release` of the code, by stack name. */
  private rollKeysOf(raw: unknown, name: string, release: number): ReadonlyMap<string, string | undefined> | undefined {
    const d = derived(raw, name);
    if (!d) return undefined;
    const key = `${release}\0${JSON.stringify(raw)}`;
    let hit = ROLL_KEYS.get(key);
    if (!hit) {
      hit = new Map(
        stackUnits(d.cluster).map((u) => {
          const config = (u.pool !== undefined ? d.configs.get(u.pool) : undefined) ?? d.config;
          const body = simStack(
            d.cluster,
            { templatesDir: DEFAULT_TEMPLATES_DIR, workDir: '', fingerprint: '', config, stackName: u.stackName },
            release,
          ).templateBody;
          return [u.stackName, rollKeyOfBody(body)?.key];
        }),
      );
      if (ROLL_KEYS.size > 5000) ROLL_KEYS.clear();
      ROLL_KEYS.set(key, hit);
    }
    return hit;
  }

  /** The roll key of the stack's live template (undefined: absent, or no group in it). */
  public liveRollKey(stack: string): string | undefined {
    const body = this.w.aws.fake.inspect(stack)?.template;
    return body === undefined ? undefined : rollKeyOf(body);
  }
}

/** The first 8 characters of a checksum (a listing may leave it out, whatever its type says). */
function short8(checksum: string | undefined): string | undefined {
  return checksum?.slice(0, 8);
}

interface Derived {
  readonly cluster: WorkerCluster;
  readonly shared: string;
  /** The first pool's config (the shared stack's), and every pool's by name. */
  readonly config: RenderedConfig;
  readonly configs: ReadonlyMap<string, RenderedConfig>;
}

/** The object validated and rendered as the reconciler derives it (undefined: invalid); memoized on its bytes. */
function derived(raw: unknown, name: string): Derived | undefined {
  const key = JSON.stringify(raw);
  let hit = DESIRED.get(key);
  if (hit === undefined) {
    const v = validateCluster(raw, { file: name, templates: listTemplates(defaultTemplates()) });
    const r = 'cluster' in v && v.cluster ? renderCluster(v.cluster, name, defaultTemplates()) : undefined;
    hit =
      v.cluster && r && 'config' in r
        ? { cluster: v.cluster, shared: r.config.checksum, config: r.config, configs: r.configs }
        : null;
    DESIRED.set(key, hit);
  }
  return hit ?? undefined;
}

/** Rendering is a pure function of the object: one memo for every schedule of the run. */
const DESIRED = new Map<string, Derived | null>();
/** The desired roll keys of an object under a release (a pure function of both): one memo for the run. */
const ROLL_KEYS = new Map<string, ReadonlyMap<string, string | undefined>>();
/** Roll keys of templates (null: no group in it), by template body. */
const LIVE_KEYS = new Map<string, string | null>();

/** The roll key of a template body (undefined: not JSON, or no group), memoized. */
function rollKeyOf(body: string): string | undefined {
  let hit = LIVE_KEYS.get(body);
  if (hit === undefined) {
    hit = rollKeyOfBody(body)?.key ?? null;
    if (LIVE_KEYS.size > 10_000) LIVE_KEYS.clear();
    LIVE_KEYS.set(body, hit);
  }
  return hit ?? undefined;
}

/**
 * Does an update from the live template `from` to `to` replace the nodes? Their roll keys differ (what CloudFormation
 * replaces instances for). A template without a group (someone else's, out of band) has no key: then, as the
 * reconciler judges it, by the config checksum. A create (nothing live) replaces nothing.
 */
export function replacesNodes(from: string | undefined, to: string | undefined): boolean {
  if (!from || !to) return false;
  const a = rollKeyOf(from);
  const b = rollKeyOf(to);
  if (a !== undefined && b !== undefined) return a !== b;
  return outputsOf(from).ConfigChecksum !== outputsOf(to).ConfigChecksum;
}
