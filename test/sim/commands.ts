import fc from 'fast-check';
import { TASK, TaskName } from '../../lib/reconciler/context';
import { CallFault } from './sim-aws';
import { WatchMode } from './sim-store';
import { Edit, SimWorld, WorldOptions } from './sim-world';

/** What the commands need to know of the world to stay meaningful (no edit of a deleted object). */
export interface Model {
  readonly deleted: Set<number>;
  readonly clusters: number;
}

type Cmd = fc.AsyncCommand<Model, SimWorld>;

/** A command: its words (for the shrunk schedule fast-check prints), when it applies, and what it does. */
function command(words: string, run: (w: SimWorld, m: Model) => Promise<void> | void, check: (m: Model) => boolean = () => true): Cmd {
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
const METHODS = ['*', 'listStacks', 'describeStack', 'listStacksInProgress', 'createChangeSet', 'executeChangeSet', 'describeChangeSet', 'operationEvents'] as const;
const EDITS: readonly Edit[] = [
  { field: 'maxPods', value: 58 },
  { field: 'maxPods', value: 60 },
  { field: 'maxPods', value: 62 },
  { field: 'maxSize', value: 4 },
  { field: 'maxSize', value: 5 },
  { field: 'minSize', value: 1 },
  { field: 'minSize', value: 9 }, // above maxSize: invalid
];

/**
 * Every fault and action of a schedule. Each is a fast-check command, so a failing schedule shrinks to the fewest
 * commands (and the scheduler's order of calls to the fewest swaps) that still break an invariant.
 */
export const COMMANDS: Array<fc.Arbitrary<Cmd>> = [
  // The daemon works: the scheduler releases some calls (reconciles stop midway), or all of them.
  fc.integer({ min: 1, max: 12 }).map((k) => command(`run(${k})`, (w) => w.run(k))),
  fc.integer({ min: 1, max: 12 }).map((k) => command(`run(${k})`, (w) => w.run(k))),
  fc.constant(command('runAll', (w) => w.run())),
  fc.constantFrom(1000, 5000, 15_000, 60_000).map((ms) => command(`advance(${ms})`, (w) => w.advance(ms))),
  fc.constantFrom(1000, 5000, 15_000, 60_000).map((ms) => command(`advance(${ms})`, (w) => w.advance(ms))),
  // Users: specs edited (mid-roll too), objects deleted.
  fc.tuple(cluster, fc.constantFrom(...EDITS)).map(([i, e]) => command(`edit(${i}, ${e.field}=${e.value})`, (w) => w.edit(i, e), alive(i))),
  cluster.map((i) =>
    command(
      `deleteObject(${i})`,
      (w, m) => {
        m.deleted.add(i);
        w.deleteObject(i);
      },
      alive(i),
    ),
  ),
  // Intermediate states: a crash before or after any task; a restart between two steps.
  fc.tuple(fc.constantFrom(...TASKS), fc.constantFrom('before' as const, 'after' as const)).map(([t, p]) => command(`crash(${p} ${t})`, (w) => w.crashAt(t, p))),
  fc.constant(command('restart', (w) => w.restart())),
  fc.constant(command('leaderChange', (w) => w.leaderChange())),
  // Stale states: reads that return an older truth.
  fc.tuple(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 8 })).map(([lag, n]) => command(`staleReads(lag ${lag}, ${n} reads)`, (w) => w.staleReads(lag, n))),
  // Unobserved states: watch events dropped, duplicated, reordered, coalesced (or delivered).
  fc.constantFrom<WatchMode>('deliver', 'drop', 'duplicate', 'reorder', 'coalesce').map((mode) => command(`watch(${mode})`, (w) => w.deliver(mode))),
  // AWS: throttling, 5xx, timeouts; stacks held in progress, rolled back, deleted or changed out of band.
  fc.tuple(fc.constantFrom(...METHODS), fc.constantFrom<CallFault>('throttle', 'server', 'timeout'), fc.integer({ min: 1, max: 3 })).map(([method, kind, n]) => command(`fault(${method}, ${kind} x${n})`, (w) => w.fault(method, kind, n))),
  fc.tuple(cluster, fc.integer({ min: 1, max: 10 })).map(([i, polls]) => command(`hold(${i}, ${polls} polls)`, (w) => w.hold(i, polls), alive(i))),
  cluster.map((i) => command(`rollback(${i})`, (w) => w.rollback(i), alive(i))),
  cluster.map((i) => command(`deleteStack(${i})`, (w) => w.deleteStack(i), alive(i))),
  cluster.map((i) => command(`changeStack(${i})`, (w) => w.changeStack(i), alive(i))),
];

/** The settings of one world: a few clusters, one or two slots, one or two attempts. */
export const WORLD_OPTIONS: fc.Arbitrary<WorldOptions> = fc.record({
  clusters: fc.integer({ min: 2, max: 3 }),
  concurrency: fc.integer({ min: 1, max: 2 }),
  maxUpdateAttempts: fc.integer({ min: 1, max: 2 }),
});

/** What a run of schedules did (the soak and the bench report these). */
export const STATS = { schedules: 0, steps: 0, checks: 0, reconciles: 0 };

/** Runs one schedule: start the daemon, play the commands, stop the faults, check liveness. */
export async function runSchedule(s: fc.Scheduler, opts: WorldOptions, cmds: Iterable<Cmd>): Promise<void> {
  const world = new SimWorld(s, opts);
  try {
    world.startProcess();
    await world.run();
    await fc.asyncModelRun(() => ({ model: { deleted: new Set<number>(), clusters: opts.clusters }, real: world }), cmds);
    await world.settle();
  } finally {
    world.close();
    STATS.schedules++;
    STATS.steps += world.steps;
    STATS.checks += world.invariants.checks;
    STATS.reconciles += world.processes.reduce((n, p) => n + p.reconciles, 0);
  }
}

/** The property: every schedule keeps every invariant, and converges once its faults stop. */
export function simProperty(maxCommands = 25) {
  return fc.asyncProperty(fc.scheduler(), WORLD_OPTIONS, fc.commands(COMMANDS, { maxCommands }), runSchedule);
}
