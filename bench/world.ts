/**
 * The reconciler wired by lib/adapters/cli/wiring.ts createDeps itself (real
 * FileStore, synthesis with cdk-nag, caches, code fingerprint, pino), with only
 * AWS replaced by the deterministic fakes of test/fakes/: one fake
 * CloudFormation per region, every port call counted, and optional real
 * delays, because the fake's own clock makes every wait instant and
 * concurrency would not matter.
 */
import pino from 'pino';
import {
  ChangeSetRequest,
  CloudFormationPort,
  StackSummary,
  WaitOptions,
} from '../lib/model/ports/cloudformation-port';
import { ReconcilerDeps } from '../lib/engines/reconciler/workflow/context';
import { Outcome } from '../lib/engines/reconciler/workflow/outcomes';
import { Controller } from '../lib/engines/reconciler/runtime/controller';
import { synthesizeStack } from '../lib/engines/synthesis/synthesize';
import { createDeps } from '../lib/adapters/cli/wiring';
import { allTasks } from '../lib/engines/reconciler/compose/workflow';
import { WorkflowHooks } from '../lib/engines/reconciler/workflow/task';
import { ClusterStore } from '../lib/model/ports/cluster-store';
import { StoreOptions } from '../lib/adapters/stores/registry';
import { FakeCloudFormation, Method, MUTATING } from '../test/fakes/fake-cloudformation';
import { FakeClock, FakePublisher, FixedIdentity } from '../test/fakes/fake-ports';
import { sleep } from './stats';
import { DEFAULT_TEMPLATES_DIR } from '../lib/platform/files/template-directory';

/** Real ListStacks/DescribeStacks return at most 100 stacks per page; the fake returns all in one call. */
export const STACKS_PER_PAGE = 100;

export interface Delays {
  /** Real time a change set takes to be created (waitForChangeSet). */
  readonly changeSetMs: number;
  /** Real time a stack operation takes (waitForStack). */
  readonly stackMs: number;
}

export interface WorldOptions {
  readonly clustersDir: string;
  /** @default true, as wiring.ts */
  readonly nag?: boolean;
  /** The account the credentials belong to. */
  readonly account: string;
  /** Another store than the file store on clustersDir (the Kubernetes store). @default the file store */
  readonly store?: StoreOptions;
}

export class World {
  public readonly clock = new FakeClock();
  public readonly publisher = new FakePublisher();
  public readonly identity: FixedIdentity;
  public readonly store: ClusterStore;
  /** Releases the store's connections and watches. */
  public readonly closeStore: () => void;
  public readonly deps: ReconcilerDeps;
  public readonly fakes = new Map<string, FakeCloudFormation>();
  /** Set to make waits take real time (see Delays). */
  public delays?: Delays;
  /** Pages a real paginated listing would have fetched. */
  public listPages = 0;
  public statusWrites = 0;
  public storeLists = 0;
  public storeListMs = 0;
  /** Syntheses run (the roll-key task's, for a held cluster, and the synthesize task's alike). */
  public syntheses = 0;
  /** Task runs, by task name (from the workflow's own hooks). */
  public readonly taskRuns = new Map<string, number>();
  /** Summed synchronous time of each task (see timeTasks). */
  public readonly taskMs = new Map<string, number>();
  /** First and last hook time of each cluster in the current pass. */
  public readonly spans = new Map<string, { start: number; end: number }>();
  public onCreateChangeSet?: (req: ChangeSetRequest) => void;
  public onWatchEvent?: (name: string) => void;
  private readonly ports = new Map<string, CloudFormationPort>();

  constructor(private readonly opts: WorldOptions) {
    timeTasks(this);
    this.identity = new FixedIdentity(opts.account);
    // The product logs JSON lines to stderr; here they are formatted the same way and thrown away.
    const logDestination = pino.destination({ dest: '/dev/null', sync: true }) as unknown as NodeJS.WritableStream;
    const wired = createDeps({
      clustersDir: opts.clustersDir,
      templatesDir: DEFAULT_TEMPLATES_DIR,
      nag: opts.nag,
      logDestination,
      store: opts.store,
    });
    this.store = wired.store;
    this.closeStore = wired.closeStore;
    const write = this.store.writeStatus.bind(this.store);
    this.store.writeStatus = (...args) => {
      this.statusWrites++;
      return write(...args);
    };
    const list = this.store.list.bind(this.store);
    this.store.list = async () => {
      const t = performance.now();
      const records = await list();
      this.storeLists++;
      this.storeListMs += performance.now() - t;
      return records;
    };
    const watch = this.store.watch.bind(this.store);
    this.store.watch = (onChange) =>
      watch((name) => {
        this.onWatchEvent?.(name);
        onChange(name);
      });
    // Everything else (work dir, caches, timeouts, backoff, clock) stays as the product wires it.
    const synthesizer = wired.deps.synthesizer;
    this.deps = {
      ...wired.deps,
      // One fake per account and region, as AWS has: a listing with one account's credentials holds its stacks only.
      aws: (region, account) => ({ cfn: this.port(region, account), publisher: this.publisher }),
      identity: this.identity,
      // Counted where it happens: a held cluster's roll key synthesizes in the roll-key task, not in synthesize.
      synthesizer: async (cluster, o) => {
        this.syntheses++;
        return synthesizer ? synthesizer(cluster, o) : synthesizeStack(cluster, o);
      },
    };
  }

  public fake(region: string, account: string = this.opts.account): FakeCloudFormation {
    const key = account === this.opts.account ? region : `${account}/${region}`;
    let f = this.fakes.get(key);
    if (!f) {
      f = new FakeCloudFormation({ clock: this.clock, region, account, readTemplateUrl: this.publisher.read });
      this.fakes.set(key, f);
    }
    return f;
  }

  /** Hooks that count every task and note when each cluster's reconcile starts and ends. */
  public readonly hooks: WorkflowHooks = {
    before: (task, ctx) => {
      const t = performance.now();
      this.taskRuns.set(task, (this.taskRuns.get(task) ?? 0) + 1);
      if (!this.spans.has(ctx.record.name)) this.spans.set(ctx.record.name, { start: t, end: t });
    },
    after: (_task, ctx) => {
      const span = this.spans.get(ctx.record.name);
      if (span) span.end = performance.now();
    },
  };

  public controller(concurrency?: number): Controller {
    return new Controller(this.deps, { concurrency, hooks: this.hooks });
  }

  /**
   * A controller whose passes are counted, and `quiesce`: resolves once no pass has run or is running for 300 ms (a
   * save can raise more than one watch event), for benches that edit objects under the running daemon.
   */
  public countedController(concurrency?: number): { controller: Controller; quiesce: () => Promise<void> } {
    const controller = this.controller(concurrency);
    let inFlight = 0;
    let passes = 0;
    const runPass = controller.runPass.bind(controller);
    controller.runPass = (...args) => {
      inFlight++;
      return runPass(...args).finally(() => (inFlight--, passes++));
    };
    const quiesce = async () => {
      for (let seen = -1; seen !== passes || inFlight > 0;) {
        seen = passes;
        await sleep(300);
      }
    };
    return { controller, quiesce };
  }

  /** One pass over the fleet after the counters are reset: its wall time, outcomes by result, and the syntheses it ran. */
  public async measuredPass(): Promise<{
    wallMs: number;
    clusters: number;
    outcomes: Record<string, number>;
    syntheses: number;
  }> {
    this.resetCounters();
    const start = performance.now();
    const { outcomes } = await this.controller().runPass();
    const wallMs = performance.now() - start;
    const counts: Record<string, number> = {};
    for (const o of outcomes.values()) counts[o.result] = (counts[o.result] ?? 0) + 1;
    return { wallMs, clusters: outcomes.size, outcomes: counts, syntheses: this.syntheses };
  }

  /**
   * Passes until every cluster settles, as `reconcile --once` makes them, on the fake clock: a stack in progress is
   * looked at again after its poll interval of simulated time (the fake's operations end by that clock), never waited on.
   */
  public async settle(concurrency?: number): Promise<Map<string, Outcome>> {
    const controller = new Controller({ ...this.deps, now: this.clock.now }, { concurrency, hooks: this.hooks });
    return controller.runUntilSettled({
      deadlineMs: 24 * 3600_000,
      now: () => this.clock.ms,
      sleep: async (ms) => this.clock.advance(ms),
    });
  }

  /** Calls per port method over every region (listStacks counted as calls, see listPages for pages). */
  public calls(): Record<Method, number> {
    const out: Partial<Record<Method, number>> = {};
    for (const f of this.fakes.values()) for (const [m, n] of f.calls) out[m] = (out[m] ?? 0) + n;
    return out as Record<Method, number>;
  }

  /** Read calls as real CloudFormation would bill them: listing pages instead of listing calls. */
  public cfnReads(): number {
    const c = this.calls();
    return (
      this.listPages +
      Object.entries(c)
        .filter(
          ([m]) => m !== 'listStacks' && m !== 'listStacksInProgress' && !(MUTATING as readonly string[]).includes(m),
        )
        .reduce((n, [, v]) => n + v, 0)
    );
  }

  public cfnWrites(): number {
    return [...this.fakes.values()].reduce((n, f) => n + f.mutatingCalls(), 0);
  }

  public resetCounters(): void {
    for (const f of this.fakes.values()) f.resetCalls();
    this.publisher.calls = 0;
    this.publisher.uploads.length = 0;
    this.identity.calls = 0;
    this.listPages = this.statusWrites = this.storeLists = this.storeListMs = this.syntheses = 0;
    this.taskRuns.clear();
    this.taskMs.clear();
    this.spans.clear();
  }

  private port(region: string, account: string = this.opts.account): CloudFormationPort {
    const key = account === this.opts.account ? region : `${account}/${region}`;
    let p = this.ports.get(key);
    if (p) return p;
    const f = this.fake(region, account);
    p = {
      listStacks: async () => {
        const all = await f.listStacks();
        this.listPages += Math.max(1, Math.ceil(all.size / STACKS_PER_PAGE));
        return all;
      },
      listStacksInProgress: async () => {
        const inProgress = await f.listStacksInProgress();
        this.listPages += Math.max(1, Math.ceil(inProgress.size / STACKS_PER_PAGE));
        return inProgress;
      },
      describeStack: (name: string) => f.describeStack(name),
      createChangeSet: (req: ChangeSetRequest) => {
        this.onCreateChangeSet?.(req);
        return f.createChangeSet(req);
      },
      describeChangeSet: (s: string, c: string) => f.describeChangeSet(s, c),
      waitForChangeSet: async (s: string, c: string) => {
        if (this.delays) await sleep(this.delays.changeSetMs);
        return f.waitForChangeSet(s, c);
      },
      executeChangeSet: (s: string, c: string, token: string) => f.executeChangeSet(s, c, token),
      deleteChangeSet: (s: string, c: string) => f.deleteChangeSet(s, c),
      stackEvents: (s: string, after?: string) => f.stackEvents(s, after),
      operationEvents: (s: string) => f.operationEvents(s),
      getTemplate: (s: string) => f.getTemplate(s),
      waitForStack: async (s: string, o: WaitOptions): Promise<StackSummary | undefined> => {
        if (this.delays) await sleep(this.delays.stackMs);
        return f.waitForStack(s, o);
      },
      deleteStack: (s: string, token: string) => f.deleteStack(s, token),
      continueUpdateRollback: (s: string, token: string) => f.continueUpdateRollback(s, token),
    };
    this.ports.set(key, p);
    return p;
  }
}

let timing: World | undefined;
let wrapped = false;

/**
 * Times the synchronous part of every workflow task (an async function runs synchronously up to its
 * first await). validate, render, skip-if-unchanged and synthesize are CPU work with no await before
 * their result, so this is their exact cost. The hooks cannot measure it: with several clusters in
 * flight, other clusters' tasks run between a task's end and its after hook. The task objects are
 * module singletons, so they are wrapped once, in memory, and report to the latest World.
 */
function timeTasks(world: World): void {
  timing = world;
  if (wrapped) return;
  wrapped = true;
  for (const task of allTasks()) {
    const run = task.run;
    // Tasks are read-only values; the bench alone wraps them, once per process, to time their own work.
    (task as { run: typeof run }).run = (ctx, found) => {
      const t = performance.now();
      const result = run(ctx, found);
      if (timing) timing.taskMs.set(task.name, (timing.taskMs.get(task.name) ?? 0) + performance.now() - t);
      return result;
    };
  }
}
