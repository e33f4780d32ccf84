import { getCondition } from '../../../lib/model/cluster/schema/status';
import { RECHECK_MS } from '../../../lib/engines/rollout/gate';
import { complete, fail } from '../../fakes/fake-cloudformation';
import { FleetSim, ROLL_POLLS } from '../../fakes/fleet-sim';
import { ASG_FAILURE } from '../../fakes/harness';

/**
 * Held clusters are woken when the wave before them settles (the daemon's wave watch), not at their recheck: against
 * the fake CloudFormation with ten-minute rolls, on a fake clock, driven as the daemon drives them.
 */

jest.setTimeout(300_000);

const MIN = 60_000;
const POLL_MS = 30_000; // FleetSim's --poll-seconds
const ring = (n: string) => ({ ring: n.startsWith('canary') ? 'canary' : 'early' });
const NAMES = ['canary-0', 'early-0', 'early-1'];

/** A settled fleet of a canary and two early clusters under a policy whose canary wave soaks `soak`. */
async function fleet(soak: string, wakeUps: boolean): Promise<FleetSim> {
  const sim = new FleetSim(NAMES, ring);
  sim.wakeUps = wakeUps;
  sim.restart();
  sim.writePolicy('fleet', {
    waves: [{ name: 'canary', selector: { matchLabels: { ring: 'canary' } }, maxConcurrent: 1, soak }],
    remainder: { maxConcurrent: '100%' },
  });
  await sim.runFor(30 * MIN);
  expect(NAMES.filter((n) => !sim.live(n))).toEqual([]);
  sim.starts.length = 0;
  return sim;
}

/**
 * After a shared-template change: when the canary was recorded settled (+ its soak), and when the first early cluster
 * started. The canary's roll takes `polls` polls of 5 s, chosen so that the end of the roll (+ the soak) falls between
 * two of the held clusters' rechecks (every 2 minutes from the change): a recheck cannot pass for a wake-up.
 */
async function rollout(sim: FleetSim, soakMs: number, polls = 130): Promise<{ free: number; started: number }> {
  sim.cfn('canary-0').script(sim.h.stackName('canary-0'), complete(polls));
  sim.changeTemplate('# kubelet tuning');
  await sim.runFor(4 * 60 * MIN);
  const ready = getCondition(sim.h.status('canary-0'), 'Ready');
  expect(ready).toMatchObject({ status: 'True', reason: 'StackUpdated' });
  const started = Math.min(...sim.starts.filter((s) => s.name.startsWith('early')).map((s) => s.at));
  return { free: Date.parse(ready!.lastTransitionTime) + soakMs, started };
}

test.each([
  // [case, soak, its ms, the canary's roll in polls]: settled at 11 min (0s: free then) or 10.5 min (+30 s); the
  // held clusters' rechecks come at 10 and 12 min, so without a wake-up they would start a minute late.
  ['no soak: woken when the canary settles', '0s', 0, 130],
  ["a soak shorter than the recheck: woken when the canary rolled, requeued for the soak's end", '30s', 30_000, 125],
  ["a soak of an hour: requeued for the soak's end", '1h', 60 * MIN, 130],
])(
  '%s; the early wave starts within one poll of the canary settling + its soak',
  async (_what, soak, soakMs, polls) => {
    // GIVEN a settled fleet
    const sim = await fleet(soak, true);
    try {
      // WHEN a change rolls through it
      const { free, started } = await rollout(sim, soakMs, polls);
      // THEN the canary rolled first, and the early wave started as soon as it was free to, not at a recheck
      expect(sim.starts[0].name).toBe('canary-0');
      expect(started).toBeGreaterThanOrEqual(free);
      expect(started - free).toBeLessThanOrEqual(POLL_MS);
    } finally {
      sim.cleanup();
    }
  },
);

test('without the wake-ups the same rollout waits for the recheck (what the wave watch saves), which stays as the safety net', async () => {
  // GIVEN the same fleet, with the daemon's wake-ups turned off
  const sim = await fleet('0s', false);
  try {
    // WHEN
    const { free, started } = await rollout(sim, 0);
    // THEN the early wave still starts (the recheck), but later than one poll after the canary was free
    expect(started - free).toBeGreaterThan(POLL_MS);
    expect(started - free).toBeLessThanOrEqual(RECHECK_MS + POLL_MS);
  } finally {
    sim.cleanup();
  }
});

test('the policy events of a rollout, in order, once each: each wave started, soaked, settled', async () => {
  // GIVEN
  const sim = await fleet('1h', true);
  try {
    const before = sim.policyEvents().length;
    // WHEN a change rolls through the fleet
    const t0 = sim.now;
    sim.changeTemplate('# kubelet tuning');
    await sim.runFor(4 * 60 * MIN);
    // THEN the daemon said each wave's moments once, in order, at the time they happened
    const events = sim.policyEvents().slice(before);
    expect(events.map((e) => `${e.reason} ${e.wave}`)).toEqual([
      'WaveStarted canary',
      'WaveSoaking canary',
      'WaveSettled canary',
      'WaveStarted remainder',
      'WaveSettled remainder',
    ]);
    const at = (reason: string, wave: string) => events.find((e) => e.reason === reason && e.wave === wave)!.at;
    expect(at('WaveStarted', 'canary') - t0).toBeLessThanOrEqual(POLL_MS);
    expect(at('WaveSoaking', 'canary') - at('WaveStarted', 'canary')).toBeGreaterThanOrEqual(ROLL_POLLS * 5000);
    expect(at('WaveSettled', 'canary') - at('WaveSoaking', 'canary')).toBeGreaterThanOrEqual(60 * MIN);
    expect(at('WaveSettled', 'canary') - at('WaveSoaking', 'canary')).toBeLessThanOrEqual(60 * MIN + POLL_MS);
    expect(events.find((e) => e.reason === 'WaveSoaking')?.message).toMatch(
      /^wave canary \(1 of 2\) rolled: canary-0 on the new config; it soaks 1h, until \d{4}-/,
    );
    expect(events.find((e) => e.reason === 'WaveSettled' && e.wave === 'canary')?.message).toBe(
      'wave canary (1 of 2) settled: every cluster on its new config, soaked 1h; wave remainder may start',
    );
    expect(events.every((e) => e.type === 'Normal')).toBe(true);
  } finally {
    sim.cleanup();
  }
});

test('pause, a halt and a resume: RolloutPaused, WaveHalted (a warning, for the failed wave and the one behind it), RolloutResumed', async () => {
  // GIVEN a fleet whose canary's next two updates roll back
  const sim = await fleet('0s', true);
  try {
    sim
      .cfn('canary-0')
      .script(sim.h.stackName('canary-0'), fail(ASG_FAILURE, ROLL_POLLS), fail(ASG_FAILURE, ROLL_POLLS));
    const before = sim.policyEvents().length;
    // WHEN a bad change rolls, then the policy is paused and resumed
    sim.changeTemplate('# bad kubelet flag');
    await sim.runFor(60 * MIN);
    sim.writePolicy('fleet', {
      waves: [{ name: 'canary', selector: { matchLabels: { ring: 'canary' } }, maxConcurrent: 1, soak: '0s' }],
      remainder: { maxConcurrent: '100%' },
      paused: true,
    });
    sim.wakeAll();
    await sim.runFor(5 * MIN);
    sim.writePolicy('fleet', {
      waves: [{ name: 'canary', selector: { matchLabels: { ring: 'canary' } }, maxConcurrent: 1, soak: '0s' }],
      remainder: { maxConcurrent: '100%' },
    });
    sim.wakeAll();
    await sim.runFor(5 * MIN);
    // THEN (--max-update-attempts 2: the canary rolls once more after its first rollback, and the halt with it)
    const events = sim.policyEvents().slice(before);
    const halt = ['Normal WaveStarted canary', 'Warning WaveHalted canary', 'Warning WaveHalted remainder'];
    expect(events.map((e) => `${e.type} ${e.reason} ${e.wave ?? ''}`.trim())).toEqual([
      ...halt,
      ...halt,
      'Normal RolloutPaused',
      'Normal RolloutResumed',
    ]);
    expect(events[1].message).toMatch(/^wave canary \(1 of 2\) is halted: the roll of canary-0 failed \(/);
    expect(events[2].message).toMatch(/^wave remainder \(2 of 2\) is halted: the roll of canary-0 failed/);
  } finally {
    sim.cleanup();
  }
});

test('a restart says where each wave is once more (a rolling wave started), and nothing twice after that', async () => {
  // GIVEN a rollout under way: the canary rolling
  const sim = await fleet('0s', true);
  try {
    sim.changeTemplate('# kubelet tuning');
    await sim.runFor(5 * MIN);
    expect(sim.policyEvents().map((e) => e.reason)).toEqual(['WaveStarted']);
    // WHEN the daemon restarts and the rollout finishes
    sim.restart();
    await sim.runFor(4 * 60 * MIN);
    // THEN the new process said the canary's start once more, then each moment once
    expect(sim.policyEvents().map((e) => `${e.reason} ${e.wave}`)).toEqual([
      'WaveStarted canary',
      'WaveStarted canary',
      'WaveSettled canary',
      'WaveStarted remainder',
      'WaveSettled remainder',
    ]);
  } finally {
    sim.cleanup();
  }
});
