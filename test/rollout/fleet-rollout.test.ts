import { getCondition } from '../../lib/cluster/status';
import { decide, placeAll } from '../../lib/rollout/gate';
import { pendingRoll } from '../../lib/rollout/fleet';
import { FleetSim, ROLL_POLLS, RollStart } from '../fakes/fleet-sim';

/**
 * 100 clusters, 3 waves (1 canary, 10 early = 10 %, 89 in the remainder), against the fake CloudFormation with
 * ten-minute rolling updates, driven as the daemon drives them (requeues, resyncs, the watch) on a fake clock.
 */

const MIN = 60_000;
const ROLL_MS = ROLL_POLLS * 5000;
const CANARY = 'canary-0';
const EARLY = Array.from({ length: 10 }, (_, i) => `early-${i}`);
const REST = Array.from({ length: 89 }, (_, i) => `rest-${String(i).padStart(2, '0')}`);
const NAMES = [CANARY, ...EARLY, ...REST];
const POLICY = {
  waves: [
    { name: 'canary', selector: { matchLabels: { ring: 'canary' } }, maxConcurrent: 1, soak: '1h' },
    { name: 'early', selector: { matchLabels: { ring: 'early' } }, maxConcurrent: '50%', soak: '30m' },
  ],
  remainder: { maxConcurrent: '25%' },
};
/** canary 10 min + soak 60 + early 2 × 10 + soak 30 + remainder ceil(89 / 23) = 4 × 10. */
const IDEAL_MS = ROLL_MS + 60 * MIN + 2 * ROLL_MS + 30 * MIN + 4 * ROLL_MS;

const ring = (n: string) => (n.startsWith('canary') ? { ring: 'canary' } : n.startsWith('early') ? { ring: 'early' } : { ring: 'main' });

/** A settled fleet with the policy in place, and the start of a shared-template change. */
async function settledFleet(): Promise<FleetSim> {
  const sim = new FleetSim(NAMES, ring);
  sim.writePolicy('fleet', POLICY);
  await sim.runFor(30 * MIN); // every stack created (creates are never held)
  expect(NAMES.filter((n) => !sim.live(n))).toEqual([]);
  sim.starts.length = 0;
  return sim;
}

/** Most rolls of `names` in progress at once, from their starts. */
function peak(starts: readonly RollStart[], names: readonly string[]): number {
  const mine = starts.filter((s) => names.includes(s.name));
  return Math.max(0, ...mine.map((s) => mine.filter((o) => o.at <= s.at && s.at < o.at + ROLL_MS).length));
}

function first(starts: readonly RollStart[], names: readonly string[]): number {
  return Math.min(...starts.filter((s) => names.includes(s.name)).map((s) => s.at));
}
function last(starts: readonly RollStart[], names: readonly string[]): number {
  return Math.max(...starts.filter((s) => names.includes(s.name)).map((s) => s.at));
}

/** Every rollout invariant of this policy over one change (starts of that change only). */
function expectWaveOrder(starts: readonly RollStart[]): void {
  expect(starts.filter((s) => s.name === CANARY)).toHaveLength(1);
  expect(first(starts, NAMES)).toBe(first(starts, [CANARY]));
  // The early wave starts only after the canary rolled and soaked an hour; the rest only after the early wave soaked 30 minutes.
  expect(first(starts, EARLY)).toBeGreaterThanOrEqual(first(starts, [CANARY]) + ROLL_MS + 60 * MIN);
  expect(first(starts, REST)).toBeGreaterThanOrEqual(last(starts, EARLY) + ROLL_MS + 30 * MIN);
  expect(peak(starts, EARLY)).toBeLessThanOrEqual(5);
  expect(peak(starts, REST)).toBeLessThanOrEqual(23);
  expect(new Set(starts.map((s) => s.name)).size).toBe(100);
}

/** What a process decides for every cluster with a pending roll, as `name: go | reason`. */
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

test('a shared-template change rolls the canary, then 10 % after its soak, then the rest; within 15 minutes of the ideal', async () => {
  // GIVEN a settled fleet of 100
  const sim = await settledFleet();
  try {
    // WHEN the shared template changes
    const t0 = sim.now;
    sim.changeTemplate('# kubelet tuning 1');
    await sim.runFor(35 * MIN);
    // THEN during the canary's soak, only the canary rolled; the others say what they wait for
    expect(sim.starts.map((s) => s.name)).toEqual([CANARY]);
    expect(getCondition(sim.h.status('early-3'), 'Progressing')).toMatchObject({ status: 'False', reason: 'WaitingForWave' });
    expect(getCondition(sim.h.status('early-3'), 'Progressing')?.message).toContain('waits for wave canary to soak 1h: canary-0');
    expect(getCondition(sim.h.status('rest-42'), 'Progressing')?.message).toContain('waits for wave early: early-0, early-1, early-2 and 7 more have not settled');
    expect(sim.h.status('rest-42').rollout).toMatchObject({ policy: 'fleet', wave: 'remainder' });

    // and the whole change reaches every cluster in wave order
    await sim.runUntil(t0 + 6 * 60 * MIN, () => NAMES.every((n) => sim.live(n) === sim.h.status(n).desiredChecksum && !sim.h.cfn.peek(sim.h.stackName(n))?.status.endsWith('IN_PROGRESS')));
    expectWaveOrder(sim.starts);
    const done = Math.max(...sim.starts.map((s) => s.at)) + ROLL_MS;
    expect(done - t0).toBeLessThanOrEqual(IDEAL_MS + 15 * MIN);
    for (const n of NAMES) expect(getCondition(sim.h.status(n), 'Ready')?.status).toBe('True');
  } finally {
    sim.cleanup();
  }
});
