/**
 * The reconciler's fault simulator (test/sim, issue 25): how many seeded schedules it plays per second on this
 * machine, how many invariant checks and reconciles that is, and how many schedules broke an invariant (by
 * invariant), so `npm test`'s numRuns and the soak's size can be chosen from a measurement. Schedules are drawn with
 * a fixed seed and each is played to its end (no shrinking: that is the soak's and the test's job).
 */
import fc from 'fast-check';
import { COMMANDS, runSchedule, STATS, WORLD_OPTIONS } from '../test/sim/commands';
import { InvariantViolation } from '../test/sim/invariants';
import { BenchOptions, codeState, figure, loadavg1, Section } from './report';
import { fmt, table } from './stats';

const SEED = 20261125;

export async function runSim(opts: BenchOptions): Promise<Section> {
  const load0 = loadavg1();
  const code = codeState();
  const n = opts.quick ? 200 : 2000;
  const samples = fc.sample(fc.tuple(fc.scheduler(), WORLD_OPTIONS, fc.commands(COMMANDS, { maxCommands: 25 })), {
    seed: SEED,
    numRuns: n,
  });
  const broken = new Map<string, number>();
  const before = { ...STATS };
  const started = process.hrtime.bigint();
  for (const [s, world, cmds] of samples) {
    try {
      await runSchedule(s, world, cmds);
    } catch (e) {
      if (!(e instanceof InvariantViolation)) throw e;
      const id = /^\[([a-z-]+)\]/.exec(e.message)?.[1] ?? 'other';
      broken.set(id, (broken.get(id) ?? 0) + 1);
    }
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const schedules = STATS.schedules - before.schedules;
  const checks = STATS.checks - before.checks;
  const steps = STATS.steps - before.steps;
  const reconciles = STATS.reconciles - before.reconciles;
  const failing = [...broken.values()].reduce((a, b) => a + b, 0);
  return {
    id: 'sim',
    title: `Fault simulator: ${n.toLocaleString('en-US')} seeded schedules (seed ${SEED}, up to 25 commands each), real Controller and WorkQueue, fake CloudFormation`,
    mode: opts.quick ? 'quick' : 'full',
    date: new Date().toISOString(),
    loadavg: [load0, loadavg1()],
    code,
    figures: [
      figure(
        'sim-schedules-per-second',
        'schedules played per second (one process, each to its liveness check)',
        schedules / seconds,
        '/s',
      ),
      figure('sim-invariant-checks', 'invariant checks made', checks, 'checks'),
      figure(
        'sim-schedules-broken',
        'schedules that broke an invariant (0 once issue 25 is fixed)',
        failing,
        'schedules',
        { op: '==', value: 0 },
      ),
    ],
    tables: [
      table(
        ['schedules', 'seconds', 'schedules/s', 'scheduler steps', 'reconciles', 'invariant checks', 'checks/s'],
        [
          [
            String(schedules),
            fmt(seconds),
            fmt(schedules / seconds),
            String(steps),
            String(reconciles),
            String(checks),
            fmt(checks / seconds),
          ],
        ],
      ),
      table(
        ['invariant broken first', 'schedules'],
        [...broken].sort().map(([id, k]) => [id, String(k)]),
      ),
    ],
    notes: [
      'Each schedule stops at its first broken invariant, so the counts say which invariant a schedule broke first, not every one it would break.',
    ],
    data: { seed: SEED, schedules, seconds, steps, reconciles, checks, broken: Object.fromEntries(broken) },
  };
}
