import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import { TaskName } from '../../lib/engines/reconciler/workflow/context';
import { RolloutPolicy, RolloutPolicySchema } from '../../lib/model/cluster/schema/policy-schema';
import { poolStackName, workerStackName } from '../../lib/core/naming';
import { complete, fail } from '../fakes/fake-cloudformation';
import { ownSecret } from '../helpers/clusters';
import { Invariants, SPOT } from './invariants';
import { CallFault, SimAws } from './sim-aws';
import { POLL_MS, queueState, SimEnv, SimProcess } from './sim-process';
import { SimStore, WatchMode } from './sim-store';
import { outOfBandTemplate, SimPublisher } from './sim-synth';
import { ShardConfig, SimShards, Tier, withTier } from './sim-shards';
import { CHANNEL, imageOfTemplate, SimChannel } from './sim-channel';

/** What the world needs of a scheduler: fast-check's, or a pinned regression's (ordered-scheduler.ts). */
export interface SimScheduler {
  schedule<T>(task: Promise<T>, label?: string): Promise<T>;
  count(): number;
  waitNext(n: number): Promise<void>;
}

export interface WorldOptions {
  /** Cluster objects (2 or 3 keep a schedule short and still contend for slots). */
  readonly clusters: number;
  /** --concurrency. */
  readonly concurrency: number;
  readonly maxUpdateAttempts: number;
  /** Reconciles at once per process. @default 2 */
  readonly workers?: number;
  /** A WorkerRolloutPolicy: sim-0 is the canary wave (one at a time), the others the remainder. @default none */
  readonly rollout?: boolean;
  /** The shards started (one for the whole fleet, or split by the `tier` label). @default one */
  readonly shards?: ShardConfig;
  /**
   * Every object has two pools: `default` (in the shared stack) and `spot` (in a stack of its own); by
   * spec.rollout.maxConcurrentPools' default (1) the two roll one at a time. @default false: spec.pool
   */
  readonly pools?: boolean;
  /**
   * Gates of the reconciler switched off, only to show that an invariant catches what the gate prevents (never drawn
   * by a schedule): `waves`, the processes run without the rollout policy (the invariants still know its waves);
   * `pools`, the processes read every object with spec.rollout.maxConcurrentPools 100 (the invariants read its own).
   * @default none
   */
  readonly gatesOff?: readonly ('waves' | 'pools')[];
  /**
   * Every pool names the image channel `sim-al2023` (sim-channel.ts) instead of a machine image: an SSM parameter in a
   * fake source all processes share, its status in a store that survives restarts; each process reads it at the start
   * of each of its passes. The world starts with one release published; publish(), badRelease() and resume() add to
   * it. @default false
   */
  readonly channel?: boolean;
}

/** An edit a user makes to an object: a config value (rolls nodes), a size (does not), or one that makes it invalid. */
export interface Edit {
  /**
   * spotLabel: the spot pool's label (rolls that pool only; a world without pools takes it as maxPods). image: every
   * pool's machineImage (several pools replace their nodes for one edit, no config changes); spotImage: the spot
   * pool's only (a world without pools: its one pool's).
   */
  readonly field: 'maxPods' | 'maxSize' | 'minSize' | 'spotLabel' | 'image' | 'spotImage';
  readonly value: number;
}

/** A cluster object as the simulator edits it (only the fields it touches are typed). */
export interface RawObject {
  metadata: { name: string; labels?: Record<string, string> };
  spec: {
    cloudConfig: { values: Record<string, unknown> };
    pool?: Record<string, unknown>;
    pools?: Array<Record<string, unknown> & { name: string; labels?: Record<string, string> }>;
    rollout?: Record<string, unknown>;
  };
}

const EXAMPLE = parse(
  fs.readFileSync(path.resolve(__dirname, '..', '..', 'clusters', 'staging-us1.yaml'), 'utf8'),
) as RawObject;
const RESYNC_MS = 60_000;
const LEASE_MS = 15_000;
const ROLLED_BACK = {
  logicalId: 'LaunchTemplate',
  resourceType: 'AWS::EC2::LaunchTemplate',
  reason: 'The image id does not exist (Service: Ec2, Status Code: 400)',
};

/**
 * One simulated world: the truth (fake CloudFormation behind SimAws, the SimStore), the daemon processes over it (one
 * leader; old leaders may still have reconciles in hand), the fake clock, and the invariants, checked after every
 * step. Commands (commands.ts) act on it; `settle()` stops the faults and checks liveness.
 */
export class SimWorld {
  public readonly names: string[];
  public readonly aws: SimAws;
  public readonly store = new SimStore();
  public readonly publisher = new SimPublisher();
  public readonly processes: SimProcess[] = [];
  public readonly deleted = new Set<string>();
  public readonly invariants: Invariants;
  public readonly shards: SimShards;
  public readonly env: SimEnv;
  private leaderId = 0;
  /** How the next pending watch events arrive (one batch), or `hold`: they wait until the next `watch(...)`. */
  private watchMode: WatchMode | 'hold' = 'deliver';
  private nextResync = RESYNC_MS;
  /** Scheduler steps taken (each followed by the invariants). */
  public steps = 0;
  /** The release of the code the daemon runs (release(): an upgrade that writes every launch template differently). */
  public release = 0;
  /** The fleet rollout's policy of a world with one (the invariants read its waves, gate on or off). */
  public readonly policy?: RolloutPolicy;
  /** The image channel of a channel world (WorldOptions.channel). */
  public readonly channel?: SimChannel;

  constructor(
    private readonly scheduler: SimScheduler,
    public readonly opts: WorldOptions,
  ) {
    this.names = Array.from({ length: opts.clusters }, (_, i) => `sim-${i}`);
    this.shards = new SimShards(opts.shards ?? 'one');
    this.aws = new SimAws(
      this.names.flatMap((n) => this.stacksOf(n)),
      opts.maxUpdateAttempts,
    );
    // A channel world starts with one release published, which the first pass records and pins.
    const channel = opts.channel ? new SimChannel() : undefined;
    channel?.publish();
    this.channel = channel;
    this.env = {
      schedule: (label) => this.scheduler.schedule(Promise.resolve(), label),
      aws: this.aws,
      store: this.store,
      publisher: this.publisher,
      concurrency: opts.concurrency,
      workers: opts.workers ?? 2,
      maxUpdateAttempts: opts.maxUpdateAttempts,
      leader: () => this.leaderId,
      // A supervisor restarts the leader that died; an old leader that dies leaves the current one leading.
      onCrash: (p) => {
        if (p.id === this.leaderId) this.startProcess();
      },
      renewDeadlineMs: 10_000,
      policy: opts.rollout && !opts.gatesOff?.includes('waves') ? POLICY : undefined,
      release: () => this.release,
      poolGateOff: opts.gatesOff?.includes('pools') ?? false,
      channels: channel && ((id, gate) => channel.pinsFor(id, gate, this.aws.clock.now)),
      onIssue: channel && ((method, args) => method === 'executeChangeSet' && channel.issued(String(args[0]))),
    };
    this.policy = opts.rollout ? POLICY : undefined;
    this.invariants = new Invariants(this);
    this.invariants.index();
    this.aws.fake.onBegin = (op) => this.invariants.onBegin(op, this.aws.caller);
    this.aws.fake.onSettle = (stack, status, template) => this.invariants.onSettle(stack, status, template);
    this.store.onStatus = (name, status, pid) => this.invariants.onStatusWrite(name, status, pid);
    if (channel) {
      channel.onWrite = (status) => this.invariants.channel.onChannelWrite(status);
      // A bad release's image does not launch: every create or update applying it fails and rolls back, for good.
      this.aws.fake.behaviourOf = (stack, kind, template) => {
        if (kind !== 'create' && kind !== 'update') return undefined;
        if (!channel.bad.has(imageOfTemplate(template) ?? '')) return undefined;
        this.failed.add(stack);
        return fail(ROLLED_BACK, 1);
      };
    }
    // sim-0 is the canary (of the rollout's waves, and of the `split` shards); the others are general.
    for (const n of this.names)
      this.store.put(
        n,
        objectNamed(
          n,
          {
            ...(opts.rollout && n === 'sim-0' ? { wave: 'canary' } : {}),
            tier: n === 'sim-0' ? 'canary' : 'general',
          },
          opts.pools,
          opts.channel,
        ),
      );
    // Rolls take a few polls, as a small group's rolling update does.
    for (const n of this.names) for (const stack of this.stacksOf(n)) this.aws.fake.setDefault(stack, complete(2));
  }

  /** The stacks of a cluster: the shared one, then (a world with pools) the spot pool's own. */
  public stacksOf(name: string): string[] {
    return [workerStackName(name), ...(this.opts.pools ? [poolStackName(name, SPOT)] : [])];
  }

  /** The spot pool's stack of cluster `i` (a world without pools: its only stack). */
  private poolStack(i: number): string {
    return this.opts.pools ? poolStackName(this.names[i], SPOT) : workerStackName(this.names[i]);
  }

  /** Stacks a command made fail (rollback, break): only these may roll back. */
  public readonly failed = new Set<string>();

  /** Pool stacks broken for good (breakPool): they stay broken after the faults stop, and must hold no other stack back. */
  public readonly brokenPools = new Set<string>();

  public get leader(): SimProcess {
    return this.processes.find((p) => p.id === this.leaderId)!;
  }

  /** A new process that leads from now on (a start, a restart after a crash, a new leader). */
  public startProcess(): SimProcess {
    const p = new SimProcess(this.processes.length + 1, this.env);
    this.processes.push(p);
    this.leaderId = p.id;
    void p.boot();
    return p;
  }

  /**
   * Lets the scheduler release up to `max` calls, one at a time, in the order it draws (shrinkable); the invariants
   * are checked after each. Idle workers pick up keys that became due. Stops when nothing is left to release.
   */
  public async run(max = 2000): Promise<void> {
    for (let i = 0; i < max; i++) {
      // Watch events arrive between steps, as a watch stream delivers them, unless the schedule holds or mangles them.
      if (this.watchMode !== 'hold') {
        this.store.deliver(this.watchMode);
        this.watchMode = 'deliver';
      }
      await flush();
      for (const p of this.processes) p.startWorkers();
      await flush();
      if (this.scheduler.count() === 0) return;
      await this.scheduler.waitNext(1);
      this.steps++;
      this.invariants.afterStep();
    }
    if (max >= 2000)
      this.invariants.fail(`[loop] no quiet point after ${max} calls: a reconcile loops without waiting`);
  }

  /**
   * The daemon works and time passes, poll by poll, until every object has converged or `maxPolls` polls went by; the
   * faults go on. What comes next (a release, a pool removed, an image edit) then meets stacks that exist and are
   * settled, as in production, rather than the first creates.
   */
  public async converge(maxPolls = 20): Promise<void> {
    for (let poll = 0; poll < maxPolls; poll++) {
      await this.run();
      if (this.invariants.converged()) return;
      await this.advance(POLL_MS);
    }
  }

  /** Time passes: operations end, the leader renews its lease, delayed keys come due, the resync adds every object. */
  public advance(ms: number): Promise<void> {
    const until = this.aws.clock.ms + ms;
    while (this.aws.clock.ms < until) {
      const step = Math.min(POLL_MS, until - this.aws.clock.ms);
      this.aws.advance(step);
      const l = this.leader;
      if (!l.paused && !l.dead) l.renewedAt = this.aws.clock.ms;
      if (this.aws.clock.ms >= this.nextResync) {
        this.nextResync = this.aws.clock.ms + RESYNC_MS;
        for (const p of this.processes) void p.resync();
      }
    }
    this.invariants.afterStep();
    return Promise.resolve();
  }

  public edit(i: number, e: Edit): void {
    const name = this.names[i];
    if (!this.store.has(name)) return;
    const raw = structuredClone(this.store.raw(name)) as RawObject;
    const spot = raw.spec.pools?.find((p) => p.name === SPOT);
    const pools = raw.spec.pools ?? [raw.spec.pool ?? {}];
    if (e.field === 'image' || e.field === 'spotImage')
      for (const p of e.field === 'image' ? pools : [spot ?? pools[0]]) {
        // In a channel world the pool leaves the channel for the literal image (a pool names one of the two).
        delete p.imageChannel;
        p.machineImage = imageOf(e.value);
      }
    else if (e.field === 'spotLabel' && spot) spot.labels = { 'sim.example.com/spot': String(e.value) };
    else if (e.field === 'maxPods' || e.field === 'spotLabel') raw.spec.cloudConfig.values.maxPods = e.value;
    else for (const p of pools) p[e.field] = e.value;
    this.store.put(name, raw);
  }

  /** Sets (or removes) the object's `tier` label: it moves to another shard, or to none. */
  public relabel(i: number, tier: Tier): void {
    const name = this.names[i];
    if (!this.store.has(name)) return;
    const raw = structuredClone(this.store.raw(name)) as RawObject;
    raw.metadata.labels = withTier(raw.metadata.labels, tier);
    if (!raw.metadata.labels) delete raw.metadata.labels;
    this.store.put(name, raw);
  }

  public deleteObject(i: number): void {
    this.store.delete(this.names[i]);
    this.deleted.add(this.names[i]);
  }

  public crashAt(task: TaskName, phase: 'before' | 'after'): void {
    this.leader.crashAt = { task, phase };
  }

  /** The process is killed and another starts (a rollout of the daemon, an OOM kill). */
  public restart(): void {
    this.leader.kill();
    this.startProcess();
  }

  /**
   * The leader pauses (a long GC, a partition) past its lease; another replica takes the lease and starts. The old
   * one resumes later with its reconciles in hand: the fence must refuse their AWS writes.
   */
  public async leaderChange(): Promise<void> {
    const old = this.leader;
    old.suspend();
    await this.advance(LEASE_MS);
    old.retired = true; // it learns at its next renewal; its writes are already past the renew deadline
    this.startProcess();
    old.resume();
  }

  public staleReads(lag: number, count: number): void {
    this.aws.staleReads(lag, count);
  }

  public fault(method: Parameters<SimAws['fault']>[0], kind: CallFault, n: number): void {
    this.aws.fault(method, kind, n);
  }

  /** The next operation on the stack stays in progress for `polls` polls. */
  public hold(i: number, polls: number): void {
    this.aws.fake.script(workerStackName(this.names[i]), complete(polls));
  }

  /** The next operation on the stack fails and rolls back. */
  public rollback(i: number): void {
    this.failed.add(workerStackName(this.names[i]));
    this.aws.fake.script(workerStackName(this.names[i]), fail(ROLLED_BACK, 1));
  }

  /** Every operation on the stack fails and rolls back from now on (an image EC2 does not know), until the faults stop. */
  public breakStack(i: number): void {
    this.failed.add(workerStackName(this.names[i]));
    this.aws.fake.setDefault(workerStackName(this.names[i]), fail(ROLLED_BACK, 1));
  }

  /** The spot pool is removed from the object (a world with pools): its own stack must go, and no other stack move. */
  public removePool(i: number): void {
    const name = this.names[i];
    if (!this.store.has(name)) return;
    const raw = structuredClone(this.store.raw(name)) as RawObject;
    if (!raw.spec.pools?.some((p) => p.name === SPOT)) return;
    raw.spec.pools = raw.spec.pools.filter((p) => p.name !== SPOT);
    this.store.put(name, raw);
    // Its updates may be broken; its delete is not.
    const stack = poolStackName(name, SPOT);
    this.brokenPools.delete(stack);
    this.aws.fake.setDefault(stack, complete(2));
  }

  /**
   * The spot pool is added (back) to the object (a world with pools, after removePool): its stack is created, maybe
   * while the old one is still being deleted.
   */
  public addPool(i: number): void {
    const name = this.names[i];
    if (!this.opts.pools || !this.store.has(name)) return;
    const raw = structuredClone(this.store.raw(name)) as RawObject;
    if (!raw.spec.pools || raw.spec.pools.some((p) => p.name === SPOT)) return;
    const first = raw.spec.pools[0];
    raw.spec.pools.push({ ...structuredClone(first), name: SPOT, labels: { 'sim.example.com/spot': 'true' } });
    this.store.put(name, raw);
  }

  /**
   * A release of the code is deployed: the daemon is upgraded (the leader replaced by one running the new code, as a
   * rollout of the Deployment does) whose synthesis writes every launch template differently (sim-synth.ts
   * simSynthesizerFor), and whose code fingerprint and release differ. Every stack's roll key changes; no object did.
   */
  public deployRelease(): void {
    this.release++;
    this.restart();
  }

  /** The next operation on the spot pool's stack stays in progress for `polls` polls. */
  public holdPool(i: number, polls: number): void {
    this.aws.fake.script(this.poolStack(i), complete(polls));
  }

  /** The next operation on the spot pool's stack fails and rolls back. */
  public rollbackPool(i: number): void {
    this.failed.add(this.poolStack(i));
    this.aws.fake.script(this.poolStack(i), fail(ROLLED_BACK, 1));
  }

  /**
   * Every update of the spot pool's existing stack fails from now on, faults stopped or not: the other stacks must
   * converge. (A world without pools, or a pool stack not created yet: its next operation fails, as rollbackPool.)
   */
  public breakPool(i: number): void {
    const stack = this.poolStack(i);
    this.failed.add(stack);
    const s = this.aws.truth(stack);
    if (!this.opts.pools || !s || !/_COMPLETE$/.test(s.status) || /ROLLBACK/.test(s.status)) {
      this.aws.fake.script(stack, fail(ROLLED_BACK, 1));
      return;
    }
    this.brokenPools.add(stack);
    this.aws.fake.setDefault(stack, fail(ROLLED_BACK, 1));
  }

  public deleteStack(i: number): void {
    const name = workerStackName(this.names[i]);
    const s = this.aws.truth(name);
    if (s && !s.status.endsWith('_IN_PROGRESS')) this.aws.fake.deleteOutOfBand(name);
    this.aws.snapshot();
  }

  public changeStack(i: number): void {
    const name = workerStackName(this.names[i]);
    const s = this.aws.truth(name);
    if (s && /_COMPLETE$/.test(s.status) && s.status !== 'ROLLBACK_COMPLETE')
      this.aws.fake.changeOutOfBand(name, outOfBandTemplate('0'.repeat(63) + String(i)));
    this.aws.snapshot();
  }

  /** A new release of the channel (a channel world): its image in EC2, the parameter moved to it; read at the next pass. */
  public publish(): void {
    this.channel?.publish();
  }

  /** A new release whose image does not launch: every stack that applies it fails and rolls back (its roll halts it). */
  public badRelease(): void {
    this.channel?.publish(true);
  }

  /** `channels resume` of the newest halted release: pinned again, only a failure after this halts it again. */
  public resumeRelease(): void {
    const r = this.channel?.resume(this.aws.clock.now());
    if (r === undefined) return;
    this.invariants.channel.onResume(r);
    this.aws.operatorRetried();
  }

  /** The next batch of watch events arrives so (`hold`: none arrives until the next call). */
  public watch(mode: WatchMode | 'hold'): void {
    this.watchMode = mode;
  }

  /**
   * The faults stop: no more stale reads or failing calls, pending events arrive, paused processes resume. Then time
   * passes poll by poll until every object has converged, within `maxPolls` polls (the liveness bound).
   */
  public async settle(maxPolls = 120): Promise<void> {
    this.aws.calm();
    for (const n of this.names)
      for (const stack of this.stacksOf(n))
        if (!this.brokenPools.has(stack)) this.aws.fake.setDefault(stack, complete(2));
    this.watch('deliver');
    for (const p of this.processes) {
      p.crashAt = undefined;
      p.resume();
    }
    if (this.leader.dead) this.startProcess();
    for (let poll = 0; poll <= maxPolls; poll++) {
      await this.run();
      // The gauges' look at the store is a scheduled call too: released by the run that follows.
      const gauges = this.leader.refreshGauges();
      await this.run();
      await gauges;
      this.invariants.quiescent();
      if (poll > 0 && this.invariants.converged()) {
        await this.invariants.settled();
        return;
      }
      const due = queueState(this.leader.queue).nextDue();
      await this.advance(Math.max(1, Math.min(POLL_MS, due - this.aws.clock.ms)));
    }
    this.invariants.fail(
      `[liveness] not converged within ${maxPolls} polls after the faults stopped: ${this.invariants.describe()}${this.invariants.channel.describe()}`,
    );
  }

  /** Ends every process (their queue timers too). */
  public close(): void {
    for (const p of this.processes) if (!p.dead) p.kill();
  }
}

/** The example object under another name (with labels, for the rollout's waves; with pools default and spot). */
export function objectNamed(name: string, labels?: Record<string, string>, pools = false, channel = false): RawObject {
  const raw = structuredClone(EXAMPLE);
  raw.metadata.name = name;
  if (labels) raw.metadata.labels = labels;
  if (channel && raw.spec.pool) {
    delete raw.spec.pool.machineImage;
    raw.spec.pool.imageChannel = CHANNEL;
  }
  if (pools && raw.spec.pool) {
    raw.spec.pools = [
      { ...raw.spec.pool, name: 'default' },
      { ...raw.spec.pool, name: SPOT, labels: { 'sim.example.com/spot': 'true' } },
    ];
    delete raw.spec.pool;
  }
  // A cluster names only its own secrets: without this every object is invalid and the simulation proves nothing.
  return ownSecret(raw);
}

/** The machine image an `image` edit sets: another AMI id of the same shape per value (the example's is 9). */
function imageOf(value: number): string {
  return `ami-1a2b3c4d5e6f7081${value % 10}`;
}

/** The fleet rollout of a world with one: the canary first, one at a time, then the rest; a failure halts it. */
const POLICY = RolloutPolicySchema.parse({
  apiVersion: 'worker-stacks.io/v1alpha1',
  kind: 'WorkerRolloutPolicy',
  metadata: { name: 'sim' },
  spec: {
    waves: [{ name: 'canary', selector: { matchLabels: { wave: 'canary' } }, maxConcurrent: 1 }],
    remainder: { maxConcurrent: 1 },
  },
});

/** Lets every promise continuation that is ready run (a macrotask turn comes after all microtasks). */
export function flush(): Promise<void> {
  return new Promise((r) => setImmediate(r));
}
