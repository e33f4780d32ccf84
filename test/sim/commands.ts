import fc from 'fast-check';
import { getCondition } from '../../lib/model/cluster/schema/status';
import { TASK, TaskName } from '../../lib/engines/reconciler/workflow/context';
import { CallFault } from './sim-aws';
import { WatchMode } from './sim-store';
import { OrderedScheduler } from './ordered-scheduler';
import { Edit, SimScheduler, SimWorld, WorldOptions } from './sim-world';
import { ShardConfig, Tier, TIERS } from './sim-shards';

/** What the commands need to know of the world to stay meaningful (no edit of a deleted object). */
export interface Model {
  readonly deleted: Set<number>;
  readonly clusters: number;
}

type Cmd = fc.AsyncCommand<Model, SimWorld>;

/**
 * A command: its words (for the shrunk schedule fast-check prints: `CMD.` and the words are the code that pins it),
 * when it applies, and what it does.
 */
function command(
  words: string,
  run: (w: SimWorld, m: Model) => Promise<void> | void,
  check: (m: Model) => boolean = () => true,
): Cmd {
  return {
    check,
    async run(m, w) {
      await run(w, m);
      w.invariants.afterStep();
    },
    toString: () => words,
  };
}

const alive = (i: number) => (m: Model) => i < m.clusters && !m.deleted.has(i);
const cluster = fc.nat({ max: 2 });
const TASKS = Object.values(TASK) as TaskName[];
const METHODS = [
  '*',
  'listStacks',
  'describeStack',
  'listStacksInProgress',
  'createChangeSet',
  'executeChangeSet',
  'describeChangeSet',
  'operationEvents',
] as const;
const EDITS: readonly Edit[] = [
  { field: 'maxPods', value: 58 },
  { field: 'maxPods', value: 60 },
  { field: 'maxPods', value: 62 },
  { field: 'maxSize', value: 4 },
  { field: 'maxSize', value: 5 },
  { field: 'minSize', value: 1 },
  { field: 'minSize', value: 9 }, // above maxSize: invalid
  { field: 'spotLabel', value: 1 }, // the spot pool's own config: rolls that pool only
  { field: 'spotLabel', value: 2 },
  { field: 'image', value: 1 }, // every pool's machine image: the pools replace their nodes, one at a time
  { field: 'image', value: 2 },
  { field: 'spotImage', value: 1 }, // the spot pool's only
];

/** The commands by name: the arbitraries below draw them, and a pinned regression lists them by hand. */
export const CMD = {
  /** The scheduler releases up to `k` calls (reconciles may stop midway). */
  run: (k: number) => command(`run(${k})`, (w) => w.run(k)),
  runAll: () => command('runAll()', (w) => w.run()),
  /** The daemon works, poll after poll, until the fleet has converged (at most 20 polls; the faults go on). */
  converge: () => command('converge()', (w) => w.converge()),
  advance: (ms: number) => command(`advance(${ms})`, (w) => w.advance(ms)),
  edit: (i: number, e: Edit) =>
    command(`edit(${i}, { field: '${e.field}', value: ${e.value} })`, (w) => w.edit(i, e), alive(i)),
  relabel: (i: number, tier: Tier) => command(`relabel(${i}, '${tier}')`, (w) => w.relabel(i, tier), alive(i)),
  deleteObject: (i: number) =>
    command(
      `deleteObject(${i})`,
      (w, m) => {
        m.deleted.add(i);
        w.deleteObject(i);
      },
      alive(i),
    ),
  crash: (phase: 'before' | 'after', task: TaskName) =>
    command(`crash('${phase}', '${task}')`, (w) => w.crashAt(task, phase)),
  restart: () => command('restart()', (w) => w.restart()),
  leaderChange: () => command('leaderChange()', (w) => w.leaderChange()),
  staleReads: (lag: number, n: number) => command(`staleReads(${lag}, ${n})`, (w) => w.staleReads(lag, n)),
  watch: (mode: WatchMode | 'hold') => command(`watch('${mode}')`, (w) => w.watch(mode)),
  fault: (method: (typeof METHODS)[number], kind: CallFault, n: number) =>
    command(`fault('${method}', '${kind}', ${n})`, (w) => w.fault(method, kind, n)),
  hold: (i: number, polls: number) => command(`hold(${i}, ${polls})`, (w) => w.hold(i, polls), alive(i)),
  rollback: (i: number) => command(`rollback(${i})`, (w) => w.rollback(i), alive(i)),
  breakStack: (i: number) => command(`breakStack(${i})`, (w) => w.breakStack(i), alive(i)),
  holdPool: (i: number, polls: number) => command(`holdPool(${i}, ${polls})`, (w) => w.holdPool(i, polls), alive(i)),
  rollbackPool: (i: number) => command(`rollbackPool(${i})`, (w) => w.rollbackPool(i), alive(i)),
  breakPool: (i: number) => command(`breakPool(${i})`, (w) => w.breakPool(i), alive(i)),
  removePool: (i: number) => command(`removePool(${i})`, (w) => w.removePool(i), alive(i)),
  addPool: (i: number) => command(`addPool(${i})`, (w) => w.addPool(i), alive(i)),
  /** A release of the code is deployed: the daemon restarts on code that writes every launch template differently. */
  release: () => command('release()', (w) => w.deployRelease()),
  deleteStack: (i: number) => command(`deleteStack(${i})`, (w) => w.deleteStack(i), alive(i)),
  /** A channel world: a new release of the channel (a new image, the parameter moved to it), read at the next pass. */
  publish: () => command('publish()', (w) => w.publish()),
  /** A channel world: a new release whose image does not launch (every stack applying it rolls back). */
  badRelease: () => command('badRelease()', (w) => w.badRelease()),
  /** A channel world: `channels resume` of the newest halted release. */
  resume: () => command('resume()', (w) => w.resumeRelease()),
  changeStack: (i: number) => command(`changeStack(${i})`, (w) => w.changeStack(i), alive(i)),
};

/**
 * Every fault and action of a schedule. Each is a fast-check command, so a failing schedule shrinks to the fewest
 * commands (and the scheduler's order of calls to the fewest swaps) that still break an invariant.
 */
export const COMMANDS: Array<fc.Arbitrary<Cmd>> = [
  // The daemon works: the scheduler releases some calls (reconciles stop midway), or all of them.
  fc.integer({ min: 1, max: 12 }).map(CMD.run),
  fc.integer({ min: 1, max: 12 }).map(CMD.run),
  fc.constant(CMD.runAll()),
  fc.constant(CMD.converge()),
  fc.constantFrom(1000, 5000, 15_000, 60_000).map(CMD.advance),
  fc.constantFrom(1000, 5000, 15_000, 60_000).map(CMD.advance),
  // Users: specs edited (mid-roll too), objects deleted.
  fc.tuple(cluster, fc.constantFrom(...EDITS)).map(([i, e]) => CMD.edit(i, e)),
  cluster.map(CMD.deleteObject),
  // Shards: a label edit moves an object to another shard, or out of every shard.
  fc.tuple(cluster, fc.constantFrom(...TIERS)).map(([i, t]) => CMD.relabel(i, t)),
  // Intermediate states: a crash before or after any task; a restart between two steps; a new leader.
  fc
    .tuple(fc.constantFrom('before' as const, 'after' as const), fc.constantFrom(...TASKS))
    .map(([p, t]) => CMD.crash(p, t)),
  fc.constant(CMD.restart()),
  fc.constant(CMD.leaderChange()),
  // Stale states: reads that return an older truth.
  fc.tuple(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 8 })).map(([lag, n]) => CMD.staleReads(lag, n)),
  // Unobserved states: watch events held back, dropped, duplicated, reordered, coalesced (by default each arrives at once).
  fc.constantFrom<WatchMode | 'hold'>('hold', 'drop', 'duplicate', 'reorder', 'coalesce', 'deliver').map(CMD.watch),
  // AWS: throttling, 5xx, timeouts; stacks held in progress, rolled back, deleted or changed out of band.
  fc
    .tuple(
      fc.constantFrom(...METHODS),
      fc.constantFrom<CallFault>('throttle', 'server', 'timeout'),
      fc.integer({ min: 1, max: 3 }),
    )
    .map(([m, k, n]) => CMD.fault(m, k, n)),
  fc.tuple(cluster, fc.integer({ min: 1, max: 10 })).map(([i, polls]) => CMD.hold(i, polls)),
  cluster.map(CMD.rollback),
  cluster.map(CMD.breakStack),
  cluster.map(CMD.deleteStack),
  cluster.map(CMD.changeStack),
  // Pools (a world with pools; else the cluster's one stack): the spot pool's own stack held, rolled back, broken for good.
  fc.tuple(cluster, fc.integer({ min: 1, max: 10 })).map(([i, polls]) => CMD.holdPool(i, polls)),
  cluster.map(CMD.rollbackPool),
  cluster.map(CMD.breakPool),
  cluster.map(CMD.removePool),
  cluster.map(CMD.addPool),
  // Releases: the daemon is upgraded to code that writes every launch template differently (every stack rolls, in waves).
  fc.constant(CMD.release()),
  // Image channels (a channel world; elsewhere nothing): new releases, a bad one (its rolls fail, it must halt), a resume.
  fc.constant(CMD.publish()),
  fc.constant(CMD.publish()),
  fc.constant(CMD.badRelease()),
  fc.constant(CMD.resume()),
];

/** The settings of one world: a few clusters, one or two slots, one or two attempts. */
export const WORLD_OPTIONS: fc.Arbitrary<WorldOptions> = fc.record({
  clusters: fc.integer({ min: 2, max: 3 }),
  concurrency: fc.integer({ min: 1, max: 2 }),
  maxUpdateAttempts: fc.integer({ min: 1, max: 2 }),
  rollout: fc.boolean(),
  shards: fc.constantFrom<ShardConfig>('one', 'split'),
  pools: fc.boolean(),
  channel: fc.boolean(),
});

/**
 * The code that pins a failing schedule as a regression (fast-check's counterexample: the scheduler's report, the
 * world's options, the commands that ran).
 */
export function pinSnippet(counterexample: readonly unknown[]): string {
  const [scheduler, opts, cmds] = counterexample;
  const order = [...String(scheduler).matchAll(/-> \[task\$\{(\d+)\}\]/g)].map((m) => Number(m[1]));
  const words = String(cmds)
    .replace(/\s*\/\*replayPath=.*\*\/\s*$/, '')
    .split(/,(?=[a-zA-Z]+\()/)
    .filter((w) => w.trim());
  return `await replay(${JSON.stringify(opts)}, [${order.join(', ')}], [${words.map((w) => `CMD.${w.trim()}`).join(', ')}]);`;
}

/** What a run of schedules did (the soak and the bench report these). */
export const STATS = {
  schedules: 0,
  steps: 0,
  checks: 0,
  reconciles: 0,
  ready: 0,
  /** Updates that replaced nodes, those that brought a release (of a later wave's cluster), removed pools' stacks deleted. */
  replacing: 0,
  releases: 0,
  laterWave: 0,
  removals: 0,
  /** A channel world's: releases started on stacks, rolls forward to a newer release (of a later wave), halts recorded. */
  channelStarts: 0,
  channelRolls: 0,
  channelLaterWave: 0,
  channelHalts: 0,
};

/** Runs one schedule: start the daemon, play the commands, stop the faults, check liveness. */
export async function runSchedule(s: SimScheduler, opts: WorldOptions, cmds: Iterable<Cmd>): Promise<void> {
  const world = new SimWorld(s, opts);
  try {
    world.startProcess();
    await world.run();
    await fc.asyncModelRun(
      () => ({ model: { deleted: new Set<number>(), clusters: opts.clusters }, real: world }),
      cmds,
    );
    await world.settle();
    // How many clusters ended Ready: a simulation whose objects never get there (all invalid, say) would prove nothing.
    STATS.ready += world.names.filter(
      (n) => world.store.has(n) && getCondition(world.store.status(n), 'Ready')?.status === 'True',
    ).length;
  } finally {
    world.close();
    STATS.schedules++;
    STATS.steps += world.steps;
    STATS.checks += world.invariants.checks;
    for (const k of ['replacing', 'releases', 'laterWave', 'removals'] as const) STATS[k] += world.invariants.judged[k];
    const channel = world.invariants.channel.judged;
    STATS.channelStarts += channel.starts;
    STATS.channelRolls += channel.rolls;
    STATS.channelLaterWave += channel.laterWave;
    STATS.channelHalts += channel.halts;
    STATS.reconciles += world.processes.reduce((n, p) => n + p.reconciles, 0);
  }
}

/**
 * Replays a pinned schedule: the world's options, its commands, and the scheduler's order of calls as fast-check
 * printed them (`schedulerFor` ... `-> [task${n}]` lines: the ids in order). Resolves when every invariant held.
 */
export async function replay(opts: WorldOptions, order: readonly number[], cmds: readonly Cmd[]): Promise<void> {
  await runSchedule(new OrderedScheduler(order), opts, cmds);
}

/**
 * The property: every schedule keeps every invariant, and converges once its faults stop. A shrunk failure replays
 * from `{ seed, path }` given to fc.assert with its commands' `replayPath` given here (fast-check prints all three).
 */
export function simProperty(
  opts: {
    readonly maxCommands?: number;
    readonly replayPath?: string;
    /** Only channel worlds (the soak's --channel: explores the image channel's invariants). @default drawn */
    readonly channel?: boolean;
  } = {},
) {
  return fc.asyncProperty(
    fc.scheduler(),
    opts.channel ? WORLD_OPTIONS.map((o) => ({ ...o, channel: true })) : WORLD_OPTIONS,
    fc.commands(COMMANDS, { maxCommands: opts.maxCommands ?? 25, replayPath: opts.replayPath }),
    runSchedule,
  );
}
