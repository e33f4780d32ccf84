import * as os from 'node:os';
import * as path from 'node:path';
import { NotLeaderError } from '../../lib/core/errors';
import { ReconcilerDeps, RegionClients, TaskName } from '../../lib/engines/reconciler/workflow/context';
import { Logger } from '../../lib/core/logger';
import { Outcome } from '../../lib/engines/reconciler/workflow/outcomes';
import { Controller } from '../../lib/engines/reconciler/runtime/controller';
import { DaemonPass } from '../../lib/engines/reconciler/runtime/pass';
import { DerivedCache } from '../../lib/model/cluster/derived-cache';
import { fencedAws } from '../../lib/engines/reconciler/runtime/leader-fence';
import { ReconcilerMetrics } from '../../lib/engines/reconciler/runtime/metrics';
import { WorkQueue } from '../../lib/engines/reconciler/runtime/work-queue';
import { CrashSignal } from '../../lib/engines/reconciler/compose/workflow';
import { RolloutPolicy } from '../../lib/model/cluster/schema/policy-schema';
import { RolloutPolicySource } from '../../lib/engines/rollout/policy-source';
import { SimAws } from './sim-aws';
import { SimStore } from './sim-store';
import { ClusterRecord, ClusterStore } from '../../lib/model/ports/cluster-store';
import { SimPublisher, simSynthesizerFor } from './sim-synth';
import { ChannelPins } from '../../lib/engines/channels';
import { DEFAULT_TEMPLATES_DIR } from '../../lib/platform/files/template-directory';

/** What every process of one schedule shares: the truth (AWS, the store), the scheduler, the settings. */
export interface SimEnv {
  /** fast-check's scheduler: every store and AWS call of a process waits for it, so it orders them. */
  readonly schedule: (label: string) => Promise<void>;
  readonly aws: SimAws;
  readonly store: SimStore;
  readonly publisher: SimPublisher;
  readonly concurrency: number;
  readonly workers: number;
  readonly maxUpdateAttempts: number;
  /** The process the world elected (the only one that may write AWS). */
  readonly leader: () => number;
  /** A process died (a crash the schedule injected): the world starts another. */
  readonly onCrash: (p: SimProcess) => void;
  /** Renewal deadline of the lease (the fence refuses writes once the leader could not renew for this long). */
  readonly renewDeadlineMs: number;
  /** The fleet rollout's policy (lib/engines/rollout), when the world has one: rolls go in waves. */
  readonly policy?: RolloutPolicy;
  /** The release of the code a process started now runs (0: the first; see SimWorld.deployRelease). @default 0 */
  readonly release?: () => number;
  /** The process reads every object with spec.rollout.maxConcurrentPools 100 (WorldOptions.gatesOff). @default false */
  readonly poolGateOff?: boolean;
  /**
   * The image channels of a process (a channel world, WorldOptions.channel): its own ChannelPins over the shared source
   * and status store, its store calls through the process's gate. @default none
   */
  readonly channels?: (id: number, gate: (label: string) => Promise<void>) => ChannelPins;
  /** A CloudFormation call issued (before it waits for the scheduler): the channel invariants read executes. @default none */
  readonly onIssue?: (method: string, args: readonly unknown[]) => void;
}

export const POLL_MS = 5000;
const SILENT: Logger = { info: () => undefined, warn: () => undefined, error: () => undefined, child: () => SILENT };
const WORK_DIR = path.join(os.tmpdir(), 'ws-sim-none');

/**
 * One daemon process over the simulator's truth: fresh deps, the real Controller (its slots and listings), the real
 * WorkQueue on the fake clock and the real leader fence (lib/engines/reconciler/runtime/leader-fence.ts) in front of its AWS writes,
 * run as runDaemon runs them: a first pass, then workers taking keys from the queue, requeues as the outcomes ask,
 * watch events into the queue. A restart is a new SimProcess: nothing in memory survives.
 */
export class SimProcess {
  public dead = false;
  /** Lost the lease: takes no new key (its reconciles in hand go on, behind the fence). */
  public retired = false;
  public booted = false;
  public renewedAt: number;
  /** Paused (a stop-the-world pause, a partition): its calls wait until resumed. */
  private pause?: { promise: Promise<void>; resume: () => void };
  public crashAt?: { readonly task: TaskName; readonly phase: 'before' | 'after' };
  public readonly queue: WorkQueue;
  public readonly controller: Controller;
  public readonly metrics = new ReconcilerMetrics({ processMetrics: false });
  public readonly deps: ReconcilerDeps;
  public reconciles = 0;
  /** The release of the code this process runs (SimWorld.deployRelease). */
  public readonly release: number;
  public readonly outcomes = new Map<string, Outcome>();
  /** This process's image channels (a channel world): refreshed at the start of each of its passes. */
  public readonly pins?: ChannelPins;
  private active = 0;
  private readonly passes = new Set<DaemonPass>();
  private readonly stopWatch: () => void;

  constructor(
    public readonly id: number,
    private readonly env: SimEnv,
  ) {
    const clock = env.aws.clock;
    this.renewedAt = clock.ms;
    const gate = (label: string) => this.gate(label);
    const publish = env.publisher.publish.bind(env.publisher);
    const publisher = {
      publish: async (a: Parameters<typeof publish>[0]) =>
        this.dead ? Promise.reject(new CrashSignal('dead')) : publish(a),
      templateUrl: env.publisher.templateUrl.bind(env.publisher),
    };
    const raw: RegionClients = {
      cfn: env.aws.port(id, () => ({ process: id, leading: env.leader() === id, dead: this.dead })),
      publisher,
    };
    const fenced = fencedAws(
      () => raw,
      (call) => this.check(call),
    )('us-east-1');
    const clients: RegionClients = {
      cfn: scheduled(fenced.cfn, gate, env.onIssue),
      publisher: scheduled(fenced.publisher, gate),
    };
    // The code this process runs: a release deployed since the first changes its synthesis, fingerprint and version.
    const release = env.release?.() ?? 0;
    this.release = release;
    const store = env.store.client(id, gate, () => this.dead);
    this.deps = {
      store: env.poolGateOff ? withAnyPoolsAtOnce(store) : store,
      aws: () => clients,
      identity: { account: async () => (await gate('sts'), '222222222222') },
      templatesDir: DEFAULT_TEMPLATES_DIR,
      workDir: WORK_DIR,
      // As codeFingerprint and the package version would differ after an upgrade (release 0 keeps the first code
      // fingerprint). Every release has a version, as the daemon's wiring always gives one (cli/wiring.ts).
      code: release ? `sim-release-${release}` : 'sim',
      release: `0.${release}.0`,
      log: process.env.SIM_LOG ? consoleLog(id) : SILENT,
      now: clock.now,
      backoff: { baseMs: POLL_MS, maxMs: 60_000, random: () => 0.5 },
      pollMs: POLL_MS,
      changeSetTimeoutMs: 60_000,
      dryRun: false,
      nag: false,
      maxRecoveryAttempts: 2,
      maxUpdateAttempts: env.maxUpdateAttempts,
      derived: new DerivedCache(),
      synthesizer: simSynthesizerFor(release),
    };
    const hook = (phase: 'before' | 'after') => (task: TaskName) => {
      if (this.crashAt?.task !== task || this.crashAt.phase !== phase) return;
      this.crashAt = undefined;
      throw new CrashSignal(`crash ${phase} ${task}`);
    };
    const policy = env.policy;
    const policies: RolloutPolicySource | undefined = policy && {
      load: async () => (
        await gate('policies.load'),
        { policies: [{ policy, source: `rollout-policies/${policy.metadata.name}.yaml` }], problems: [] }
      ),
      setPaused: async () => undefined,
    };
    this.pins = env.channels?.(id, gate);
    this.controller = new Controller(this.deps, {
      concurrency: env.concurrency,
      workers: env.workers,
      metrics: this.metrics,
      hooks: { before: hook('before'), after: hook('after') },
      policies,
      // Read by PassBook.start at each pass this process queues (its first, each resync), as runDaemon's are.
      channels: this.pins,
    });
    this.queue = new WorkQueue({ baseDelayMs: POLL_MS, maxDelayMs: 60_000, now: () => clock.ms, timers: false });
    this.stopWatch = this.deps.store.watch((name) => this.queue.add(name));
  }

  /**
   * As runDaemon: the first pass queues every object (controller-runtime's initial list), then the workers start.
   * Each pass (the first, each resync) is told of every reconcile, as the daemon does.
   */
  public async boot(): Promise<void> {
    try {
      await this.queueAll();
      this.booted = true;
      this.startWorkers();
    } catch (e) {
      if (!(e instanceof CrashSignal)) throw e;
      this.crash();
    }
  }

  private async queueAll(): Promise<void> {
    const pass = await this.controller.queuePass(this.queue);
    if (pass.size > 0) this.passes.add(pass);
  }

  /** Workers take the keys that are due now, as runDaemon's do (at most `workers` reconciles at once). */
  public startWorkers(): void {
    while (this.booted && !this.dead && !this.retired && this.active < this.env.workers) {
      const key = this.take();
      if (key === undefined) return;
      this.active++;
      void this.worker(key).finally(() => this.active--);
    }
  }

  /** Every object into the queue (runDaemon's resync). */
  public async resync(): Promise<void> {
    if (this.dead || this.retired) return;
    try {
      await this.queueAll();
    } catch (e) {
      if (!(e instanceof CrashSignal)) throw e;
    }
  }

  /** The fleet gauges, refreshed after reconciles (runDaemon's refreshGauges). */
  public async refreshGauges(): Promise<void> {
    if (this.dead || this.retired) return;
    await this.controller.observeFleet(new Map(), []).catch((e: unknown) => {
      if (!(e instanceof CrashSignal)) throw e;
    });
  }

  public kill(): void {
    this.dead = true;
    this.queue.shutDown();
    this.stopWatch();
    this.resume();
  }

  public suspend(): void {
    let resume!: () => void;
    const promise = new Promise<void>((r) => (resume = r));
    this.pause = { promise, resume };
  }

  public resume(): void {
    this.pause?.resume();
    this.pause = undefined;
  }

  public get paused(): boolean {
    return this.pause !== undefined;
  }

  public get busy(): boolean {
    return this.active > 0 || !this.booted;
  }

  private crash(): void {
    if (this.dead) return;
    this.kill();
    this.env.onCrash(this);
  }

  /** runDaemon's worker: one key at a time; the outcome's requeue; the pass told. */
  private async worker(first: string): Promise<void> {
    for (let key: string | undefined = first; key !== undefined; key = this.take()) {
      let outcome: Outcome | undefined;
      try {
        outcome = await this.controller.reconcileKey(key);
        this.reconciles++;
        if (!outcome) {
          this.outcomes.delete(key);
          this.queue.forget(key);
        } else {
          this.outcomes.set(key, outcome);
          if (outcome.result === 'transient') this.queue.addRateLimited(key);
          else {
            this.queue.forget(key);
            if (outcome.requeueAfterMs !== undefined) this.queue.addAfter(key, outcome.requeueAfterMs);
          }
        }
      } catch (e) {
        if (e instanceof CrashSignal) {
          this.crash();
          return;
        }
        this.queue.addRateLimited(key);
      } finally {
        this.queue.done(key);
      }
      for (const p of [...this.passes]) if (await p.reconciled(key, outcome).catch(() => true)) this.passes.delete(p);
    }
  }

  private take(): string | undefined {
    return this.dead || this.retired ? undefined : this.queue.tryGet();
  }

  /** The lease's fence, as LeaderElector.canWrite: leading, and renewed within the renewal deadline. */
  private check(call: string): void {
    if (this.retired || this.env.aws.clock.ms - this.renewedAt >= this.env.renewDeadlineMs)
      throw new NotLeaderError(`sim-process-${this.id}`, call);
  }

  private async gate(label: string): Promise<void> {
    this.assertAlive();
    if (this.pause) await this.pause.promise;
    await this.env.schedule(`p${this.id} ${label}`);
    // Again: the process may have been killed while it waited for its turn.
    this.assertAlive();
  }

  private assertAlive(): void {
    if (this.dead) throw new CrashSignal(`process ${this.id} is dead`);
  }
}

/** Every method of `target` first waits for the gate (the scheduler decides when the call happens). */
function scheduled<T extends object>(
  target: T,
  gate: (label: string) => Promise<void>,
  issued?: (method: string, args: readonly unknown[]) => void,
): T {
  return new Proxy(target, {
    get(t, prop) {
      const value = Reflect.get(t, prop) as unknown;
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        issued?.(String(prop), args);
        await gate(String(prop));
        return (value as (...a: unknown[]) => Promise<unknown>).apply(t, args);
      };
    },
  });
}

/**
 * What the WorkQueue holds for a key, read from its private state (the invariants need "will anything look at this
 * key again", which its public API does not say). Read-only.
 */
export function queueState(q: WorkQueue) {
  const inner = q as unknown as {
    queue: string[];
    dirty: Set<string>;
    processing: Set<string>;
    delayed: Map<string, number>;
    failures: Map<string, number>;
  };
  return {
    nextDue: () => q.nextAt() ?? Infinity,
    holds: (key: string) =>
      inner.queue.includes(key) ||
      inner.dirty.has(key) ||
      inner.processing.has(key) ||
      inner.delayed.has(key) ||
      inner.failures.has(key),
    pending: (key: string) =>
      inner.queue.includes(key) || inner.dirty.has(key) || inner.processing.has(key) || inner.delayed.has(key),
  };
}

function consoleLog(id: number, bindings: object = {}): Logger {
  const line = (level: string) => (obj: object, msg?: string) =>
    console.log(JSON.stringify({ p: id, level, ...bindings, ...obj, msg }));
  return {
    info: line('info'),
    warn: line('warn'),
    error: line('error'),
    child: (b) => consoleLog(id, { ...bindings, ...b }),
  };
}

/**
 * The store as a process whose maxConcurrentPools gate is switched off sees it (WorldOptions.gatesOff: only to show that
 * the invariant catches it): every object says spec.rollout.maxConcurrentPools 100.
 */
function withAnyPoolsAtOnce(store: ClusterStore): ClusterStore {
  const lens = (r: ClusterRecord | undefined): ClusterRecord | undefined => {
    const raw = r?.raw as { spec?: { rollout?: Record<string, unknown> } } | undefined;
    if (!r || !raw?.spec) return r;
    const spec = { ...raw.spec, rollout: { ...raw.spec.rollout, maxConcurrentPools: 100 } };
    return { ...r, raw: { ...raw, spec } };
  };
  return {
    ...store,
    list: async () => (await store.list()).map((r) => lens(r)!),
    get: async (name) => lens(await store.get(name)),
  };
}
