import { getCondition } from '../../../lib/model/cluster/schema/status';
import { runCli } from '../../../lib/adapters/cli/program';
import { TASK } from '../../../lib/engines/reconciler/workflow/context';
import { CrashSignal } from '../../../lib/engines/reconciler/compose/workflow';
import { after } from '../../../lib/engines/reconciler/workflow/task';
import { decide, placeAll } from '../../../lib/engines/rollout/gate';
import { pendingRoll } from '../../../lib/engines/rollout/fleet';
import { fail } from '../../fakes/fake-cloudformation';
import { ASG_FAILURE } from '../../fakes/harness';
import { FleetSim, ROLL_POLLS, RollStart } from '../../fakes/fleet-sim';

/**
 * Fleets in 3 waves (a canary, 10 %, the rest) against the fake CloudFormation with ten-minute rolling updates,
 * driven as the daemon drives them (requeues, resyncs, the watch) on a fake clock.
 */

jest.setTimeout(600_000);

const MIN = 60_000;
const ROLL_MS = ROLL_POLLS * 5000;
const POLICY = {
  waves: [
    { name: 'canary', selector: { matchLabels: { ring: 'canary' } }, maxConcurrent: 1, soak: '1h' },
    { name: 'early', selector: { matchLabels: { ring: 'early' } }, maxConcurrent: '50%', soak: '30m' },
  ],
  remainder: { maxConcurrent: '25%' },
};
const ring = (n: string) =>
  n.startsWith('canary') ? { ring: 'canary' } : n.startsWith('early') ? { ring: 'early' } : { ring: 'main' };

interface Shape {
  readonly canary: string;
  readonly early: readonly string[];
  readonly rest: readonly string[];
}
function shape(
  early: number,
  rest: number,
): Shape & { all: string[]; ideal: number; earlyMax: number; restMax: number } {
  const s = {
    canary: 'canary-0',
    early: Array.from({ length: early }, (_, i) => `early-${i}`),
    rest: Array.from({ length: rest }, (_, i) => `rest-${String(i).padStart(2, '0')}`),
  };
  const earlyMax = Math.ceil(early / 2);
  const restMax = Math.ceil(rest / 4);
  // canary roll + 1 h soak + the early wave's rounds + 30 min soak + the remainder's rounds
  const ideal =
    ROLL_MS + 60 * MIN + Math.ceil(early / earlyMax) * ROLL_MS + 30 * MIN + Math.ceil(rest / restMax) * ROLL_MS;
  return { ...s, all: [s.canary, ...s.early, ...s.rest], ideal, earlyMax, restMax };
}

/** A settled fleet with the policy in place. */
async function settledFleet(names: readonly string[]): Promise<FleetSim> {
  const sim = new FleetSim(names, ring);
  sim.writePolicy('fleet', POLICY);
  await sim.runFor(30 * MIN); // every stack created (creates are never held)
  expect(names.filter((n) => !sim.live(n))).toEqual([]);
  sim.starts.length = 0;
  return sim;
}

/** Every cluster of the fleet has started its roll of this change, and every stack is settled on its desired config. */
const allSettled = (sim: FleetSim) => () =>
  new Set(sim.starts.map((x) => x.name)).size === sim.names.length &&
  sim.names.every(
    (n) => sim.live(n) === sim.h.status(n).desiredChecksum && !sim.stack(n)?.status.endsWith('IN_PROGRESS'),
  );

const first = (starts: readonly RollStart[], names: readonly string[]) =>
  Math.min(...starts.filter((s) => names.includes(s.name)).map((s) => s.at));
const last = (starts: readonly RollStart[], names: readonly string[]) =>
  Math.max(...starts.filter((s) => names.includes(s.name)).map((s) => s.at));
/** Most rolls of `names` in progress at once, from their starts. */
function peak(starts: readonly RollStart[], names: readonly string[]): number {
  const mine = starts.filter((s) => names.includes(s.name));
  return Math.max(0, ...mine.map((s) => mine.filter((o) => o.at <= s.at && s.at < o.at + ROLL_MS).length));
}

/** The policy's invariants over the starts of one change: order, soaks, concurrency, each cluster exactly once. */
function expectWaveOrder(starts: readonly RollStart[], s: ReturnType<typeof shape>): void {
  expect(starts.filter((x) => x.name === s.canary)).toHaveLength(1);
  expect(first(starts, s.all)).toBe(first(starts, [s.canary]));
  expect(first(starts, s.early)).toBeGreaterThanOrEqual(first(starts, [s.canary]) + ROLL_MS + 60 * MIN);
  expect(first(starts, s.rest)).toBeGreaterThanOrEqual(last(starts, s.early) + ROLL_MS + 30 * MIN);
  expect(peak(starts, s.early)).toBeLessThanOrEqual(s.earlyMax);
  expect(peak(starts, s.rest)).toBeLessThanOrEqual(s.restMax);
  expect(starts.map((x) => x.name).sort()).toEqual([...s.all].sort()); // every cluster rolled, none twice
}

/** What a process decides now for every cluster with a pending roll: `name → go | reason`. */
async function decisions(sim: FleetSim): Promise<Record<string, string>> {
  const fleet = await sim.controller.rollout!.snapshot(true);
  const placed = placeAll(fleet);
  const out: Record<string, string> = {};
  for (const m of [...fleet.members.values()].filter(pendingRoll)) {
    const d = decide(m.name, fleet, new Date(sim.now), new Set(), placed);
    out[m.name] = d.go ? 'go' : d.reason;
  }
  return out;
}

const progressing = (sim: FleetSim, name: string) => getCondition(sim.h.status(name), 'Progressing');
const cli = async (sim: FleetSim, ...args: string[]) => {
  const out: string[] = [];
  const code = await runCli([...args, '--clusters', sim.h.clustersDir, '--templates', sim.templatesDir], {
    out: (t) => out.push(t),
    err: (t) => out.push(t),
  });
  return { code, text: out.join('') };
};

test('100 clusters: a rollback in the canary halts every wave behind it; pause, a fix, resume: canary, then 10 % after its soak, then the rest, near the ideal time', async () => {
  // GIVEN a settled fleet of 100 (1 canary, 10 early, 89 in the remainder), and a canary whose next two updates roll back
  const s = shape(10, 89);
  const sim = await settledFleet(s.all);
  try {
    sim.cfn(s.canary).script(sim.h.stackName(s.canary), fail(ASG_FAILURE, ROLL_POLLS), fail(ASG_FAILURE, ROLL_POLLS));

    // WHEN a bad change to the shared template is made and the daemon runs for two hours
    sim.changeTemplate('# bad kubelet flag');
    await sim.runFor(120 * MIN);

    // THEN only the canary rolled (twice: --max-update-attempts 2), and stopped; every other cluster is halted behind it
    expect(sim.starts.map((x) => x.name)).toEqual([s.canary, s.canary]);
    expect(getCondition(sim.h.status(s.canary), 'Stalled')).toMatchObject({ status: 'True', reason: 'UpdateFailed' });
    for (const n of ['early-3', 'rest-42']) {
      expect(progressing(sim, n)).toMatchObject({ status: 'False', reason: 'RolloutHalted' });
      expect(progressing(sim, n)?.message).toContain('the roll of canary-0 failed');
    }
    expect(sim.h.status('rest-42').rollout).toMatchObject({ policy: 'fleet', wave: 'remainder' });
    const status = await cli(sim, 'rollout', 'status');
    expect(status.code).toBe(0);
    expect(status.text).toContain('wave 1 canary [halted] ring=canary: 1 clusters, maxConcurrent 1, soak 1h: 1 failed');
    expect(status.text).toContain(
      'wave 3 remainder [halted] every cluster no wave selects: 89 clusters, maxConcurrent 25% = 23, soak 0s: 89 halted',
    );

    // WHEN the operator pauses the rollout, fixes the template, and resumes
    expect((await cli(sim, 'rollout', 'pause', 'fleet')).code).toBe(0);
    sim.wakeAll();
    await sim.runFor(5 * MIN);
    expect(progressing(sim, 'early-3')).toMatchObject({ reason: 'RolloutPaused' });
    expect(progressing(sim, 'early-3')?.message).toContain('worker-stacks rollout resume fleet');
    sim.changeTemplate('# fixed kubelet flag');
    await sim.runFor(10 * MIN);
    // paused: nothing started, not even the canary with its fixed config
    expect(sim.starts).toHaveLength(2);
    expect(progressing(sim, s.canary)).toMatchObject({ reason: 'RolloutPaused' });
    sim.starts.length = 0;
    const resumedAt = sim.now;
    expect((await cli(sim, 'rollout', 'resume', 'fleet')).code).toBe(0);
    sim.wakeAll();
    await sim.runFor(35 * MIN);

    // THEN during the canary's soak only the canary has rolled, and the others say what they wait for
    expect(sim.starts.map((x) => x.name)).toEqual([s.canary]);
    expect(progressing(sim, 'early-3')).toMatchObject({ status: 'False', reason: 'WaitingForWave' });
    expect(progressing(sim, 'early-3')?.message).toContain('waits for wave canary to soak 1h: canary-0');
    expect(progressing(sim, 'rest-42')?.message).toContain(
      'waits for wave early: early-0, early-1, early-2 and 7 more have not settled',
    );

    // and the fixed config reaches all 100 in wave order, within 15 minutes of the policy's ideal
    await sim.runUntil(resumedAt + 6 * 60 * MIN, allSettled(sim));
    expectWaveOrder(sim.starts, s);
    expect(last(sim.starts, s.all) + ROLL_MS - resumedAt).toBeLessThanOrEqual(s.ideal + 15 * MIN);
    for (const n of s.all) expect(getCondition(sim.h.status(n), 'Ready')?.status).toBe('True');
  } finally {
    sim.cleanup();
  }
});

test.each([
  ['one process', false],
  ['a restart while the early wave soaks (what the old process kept is lost)', true],
])('a held cluster is synthesized once for its change: %s', async (_what, restart) => {
  // GIVEN a settled 10-cluster fleet in 3 waves (1 canary, 3 early, 6 in the remainder)
  const s = shape(3, 6);
  const sim = await settledFleet(s.all);
  try {
    const t0 = sim.now;
    const before = sim.syntheses;
    // WHEN a shared-template change rolls every cluster through the waves, most of them held for a while
    sim.changeTemplate('# kubelet tuning');
    if (restart) {
      await sim.runUntil(t0 + 110 * MIN);
      sim.restart();
    }
    await sim.runUntil(t0 + 6 * 60 * MIN, allSettled(sim));

    // THEN each cluster's roll key synthesis is the one its change set used: one synthesis per cluster (issue 33,
    // item 8), plus, after a restart, one more for each cluster the new process had to read again
    expectWaveOrder(sim.starts, s);
    const heldAtRestart = restart ? s.rest.length : 0;
    expect(sim.syntheses - before).toBe(s.all.length + heldAtRestart);
  } finally {
    sim.cleanup();
  }
});

describe('a restart of the daemon in the middle of any wave continues with the same decisions', () => {
  // A 10-cluster fleet of the same shape (1 canary, 3 early, 6 in the remainder), so that every row is a whole rollout.
  const s = shape(3, 6);
  type Crash = { readonly at: number } | { readonly task: (typeof TASK)[keyof typeof TASK]; readonly cluster: string };
  test.each<[string, Crash]>([
    ['the canary rolling', { at: 5 * MIN }],
    ['the canary soaking', { at: 40 * MIN }],
    ['the early wave rolling', { at: 75 * MIN }],
    ['the early wave soaking', { at: 110 * MIN }],
    ['the remainder rolling', { at: 135 * MIN }],
    ['just after wait-for-wave let early-0 go', { task: TASK.waitForWave, cluster: 'early-0' }],
    ['just after the change set of early-1 was made', { task: TASK.changeSet, cluster: 'early-1' }],
    ['just after rest-00 executed', { task: TASK.execute, cluster: 'rest-00' }],
  ])('killed with %s', async (_what, crash) => {
    // GIVEN a settled fleet and a shared-template change
    const sim = await settledFleet(s.all);
    try {
      let crashed = false;
      if ('task' in crash) {
        sim.hooks = [
          after(crash.task, (ctx, _task, found) => {
            const rolls =
              crash.task === TASK.waitForWave
                ? found.rollout?.event === 'started'
                : found.live !== found.config?.checksum;
            if (!crashed && ctx.record.name === crash.cluster && rolls) {
              crashed = true;
              throw new CrashSignal(`killed after ${crash.task} of ${crash.cluster}`);
            }
          }),
        ];
        sim.restart();
        sim.restarts = 0;
      }
      const t0 = sim.now;
      sim.changeTemplate('# kubelet tuning');

      // WHEN the process is killed at the crash point and a new one starts
      if ('at' in crash) {
        await sim.runUntil(t0 + crash.at);
        const before = await decisions(sim);
        sim.restart();
        // THEN the new process decides exactly what the old one did, for every cluster with a pending roll
        expect(await decisions(sim)).toEqual(before);
        crashed = true;
      }
      await sim.runUntil(t0 + 6 * 60 * MIN, allSettled(sim));

      // THEN the rollout finishes in wave order, every cluster rolled exactly once, near the ideal time
      expect(crashed).toBe(true);
      expectWaveOrder(sim.starts, s);
      expect(last(sim.starts, s.all) + ROLL_MS - t0).toBeLessThanOrEqual(s.ideal + 15 * MIN);
      expect(sim.restarts).toBe(1);
    } finally {
      sim.cleanup();
    }
  });
});
