import { rolloutReport } from '../../../lib/engines/rollout/report';
import { waveViews } from '../../../lib/engines/rollout/wave-state';
import { WAKE_GRACE_MS, WaveWatch } from '../../../lib/engines/rollout/wave-watch';
import { FleetMember } from '../../../lib/engines/rollout/fleet';
import { fleet, member, policy, rollingNow, settledOnNew, T0 } from './fixtures';

/** The wave watch on the gate's fixtures: where each wave is, what a change of it says, and whom it wakes. */

const now = new Date(T0);
const failed: Partial<FleetMember> = {
  stack: { status: 'UPDATE_ROLLBACK_COMPLETE', lastUpdated: new Date(T0 - 60_000).toISOString() },
  failedRoll: 'stack UPDATE_ROLLBACK_COMPLETE',
};
/** 1 canary, 2 early, 3 in the remainder; the policy's canary soaks 1h, early 30m, early maxConcurrent 10% (= 1). */
const members = (over: Record<string, Partial<FleetMember>> = {}) =>
  ['c1:canary', 'e1:early', 'e2:early', 'r1:', 'r2:', 'r3:'].map((x) => {
    const [name, ring] = x.split(':');
    return member(name, ring || undefined, over[name] ?? {});
  });
const states = (over: Record<string, Partial<FleetMember>>) =>
  waveViews(fleet(members(over)), now)[0].waves.map((w) => `${w.name}:${w.state}`);

test.each<[string, Record<string, Partial<FleetMember>>, string[]]>([
  ['a change pending everywhere', {}, ['canary:waiting', 'early:waiting', 'remainder:waiting']],
  ['the canary rolling', { c1: rollingNow }, ['canary:rolling', 'early:waiting', 'remainder:waiting']],
  ['the canary soaking', { c1: settledOnNew(10 * 60_000) }, ['canary:soaking', 'early:waiting', 'remainder:waiting']],
  [
    'the canary soaked, one early rolling',
    { c1: settledOnNew(2 * 3_600_000), e1: rollingNow },
    ['canary:settled', 'early:rolling', 'remainder:waiting'],
  ],
  [
    'one early soaking while the other waits its turn',
    { c1: settledOnNew(2 * 3_600_000), e1: settledOnNew(60_000) },
    ['canary:settled', 'early:rolling', 'remainder:waiting'],
  ],
  [
    'the canary failed: it and every wave behind it halted',
    { c1: failed },
    ['canary:halted', 'early:halted', 'remainder:halted'],
  ],
  [
    'everything on the new config and soaked',
    Object.fromEntries(['c1', 'e1', 'e2', 'r1', 'r2', 'r3'].map((n) => [n, settledOnNew(3 * 3_600_000)])),
    ['canary:settled', 'early:settled', 'remainder:settled'],
  ],
])('%s', (_what, over, expected) => {
  // WHEN / THEN
  expect(states(over)).toEqual(expected);
  // AND rollout status agrees where a wave is halted or settled
  const report = rolloutReport(fleet(members(over)), now).policies[0].waves.map((w) => w.phase);
  expected.forEach((e, i) => {
    if (e.endsWith(':halted') || e.endsWith(':settled')) expect(`${e.split(':')[0]}:${report[i]}`).toBe(e);
  });
});

test('a failed roll without haltOnFailure halts nothing', () => {
  const p = policy({ haltOnFailure: false });
  expect(waveViews(fleet(members({ c1: failed }), [p]), now)[0].waves.map((w) => w.state)).toEqual([
    'settled',
    'waiting',
    'waiting',
  ]);
});

describe('WaveWatch', () => {
  test('the first look wakes nobody and says only what is not at rest', () => {
    // WHEN
    const r = new WaveWatch().observe(fleet(members({ c1: rollingNow })), now);
    // THEN
    expect(r.wake).toEqual([]);
    expect(r.events.map((e) => `${e.event.reason} ${e.event.wave}`)).toEqual(['WaveStarted canary']);
  });

  test("the canary rolled: it soaks (an event with the end), the early wave is woken to learn when, nextAt is the soak's end", () => {
    // GIVEN a look with the canary rolling
    const w = new WaveWatch();
    w.observe(fleet(members({ c1: rollingNow })), now);
    // WHEN the next look has it settled a minute ago
    const r = w.observe(fleet(members({ c1: settledOnNew(60_000) })), now);
    // THEN
    expect(r.events.map((e) => `${e.event.reason} ${e.event.wave}`)).toEqual(['WaveSoaking canary']);
    expect([...r.wake].sort()).toEqual(['e1', 'e2']);
    expect(r.nextAt).toBe(T0 - 60_000 + 3_600_000);
  });

  test('a wave settles: the next wave is woken, and the one after it only if the next is settled', () => {
    // GIVEN the canary soaking
    const w = new WaveWatch();
    w.observe(fleet(members({ c1: settledOnNew(30 * 60_000) })), now);
    // WHEN its soak is over
    const r = w.observe(fleet(members({ c1: settledOnNew(61 * 60_000) })), now);
    // THEN
    expect(r.events.map((e) => `${e.event.reason} ${e.event.wave}`)).toEqual(['WaveSettled canary']);
    expect(r.events[0].event.message).toBe(
      'wave canary (1 of 3) settled: every cluster on its new config, soaked 1h; wave early may start',
    );
    expect([...r.wake].sort()).toEqual(['e1', 'e2']);
  });

  test('a roll of a wave ends while others wait for a slot: as many of them are woken as slots freed', () => {
    // GIVEN the early wave (maxConcurrent 1) with e1 rolling
    const w = new WaveWatch();
    const base = { c1: settledOnNew(3 * 3_600_000) };
    w.observe(fleet(members({ ...base, e1: rollingNow })), now);
    // WHEN e1 has rolled and soaks (e2 still waits)
    const r = w.observe(fleet(members({ ...base, e1: settledOnNew(60_000) })), now);
    // THEN the wave is still rolling; e2 is woken for the freed slot, not the remainder
    expect(r.events).toEqual([]);
    expect(r.wake).toEqual(['e2']);
  });

  test('rolls that end one after another wake the next waiting clusters, not again the one woken and not started yet', () => {
    // GIVEN a remainder of 7 (maxConcurrent 3) with r1, r2, r3 rolling and r4..r7 waiting, earlier waves settled
    const p = policy({ remainder: { maxConcurrent: 3 } });
    const settled = settledOnNew(3 * 3_600_000);
    const look = (over: Record<string, Partial<FleetMember>>) =>
      fleet(
        [
          member('c1', 'canary', settled),
          member('e1', 'early', settled),
          member('e2', 'early', settled),
          ...['r1', 'r2', 'r3', 'r4', 'r5', 'r6', 'r7'].map((n) => member(n, undefined, over[n] ?? {})),
        ],
        [p],
      );
    const w = new WaveWatch();
    w.observe(look({ r1: rollingNow, r2: rollingNow, r3: rollingNow }), now);
    // WHEN r1's roll ends (r4 is woken), then r2's before r4 has started
    const first = w.observe(look({ r1: settled, r2: rollingNow, r3: rollingNow }), now);
    const second = w.observe(look({ r1: settled, r2: settled, r3: rollingNow }), new Date(T0 + 1000));
    // THEN the second freed slot goes to r5; r4, still waiting after its grace, may be woken again
    expect(first.wake).toEqual(['r4']);
    expect(second.wake).toEqual(['r5']);
    const later = w.observe(
      look({ r1: settled, r2: settled, r3: settled, r5: rollingNow }),
      new Date(T0 + WAKE_GRACE_MS + 1000),
    );
    expect(later.wake).toEqual(['r4']);
  });

  test('a halt and its end: WaveHalted (a warning) per wave; when it lifts the waiting clusters are woken', () => {
    // GIVEN
    const w = new WaveWatch();
    w.observe(fleet(members({ c1: rollingNow })), now);
    // WHEN the canary's roll fails, THEN
    const halted = w.observe(fleet(members({ c1: failed })), now);
    expect(halted.events.map((e) => `${e.event.type} ${e.event.reason} ${e.event.wave}`)).toEqual([
      'Warning WaveHalted canary',
      'Warning WaveHalted early',
      'Warning WaveHalted remainder',
    ]);
    // every later wave's waiting clusters are looked at once, so that their conditions say RolloutHalted now, not
    // WaitingForWave until their recheck (issue 25, item 11)
    expect([...halted.wake].sort()).toEqual(['e1', 'e2', 'r1', 'r2', 'r3']);
    // WHEN it is fixed and the canary rolls again, THEN the wave starts again and those behind it are looked at
    const lifted = w.observe(fleet(members({ c1: rollingNow })), now);
    expect(lifted.events.map((e) => `${e.event.reason} ${e.event.wave}`)).toEqual(['WaveStarted canary']);
    expect([...lifted.wake].sort()).toEqual(['e1', 'e2', 'r1', 'r2', 'r3']);
  });

  test('pause and resume: an event each; a resume wakes every waiting cluster of the policy', () => {
    // GIVEN
    const w = new WaveWatch();
    w.observe(fleet(members()), now);
    // WHEN paused, then resumed
    const paused = w.observe(fleet(members(), [policy({ paused: true })]), now);
    const resumed = w.observe(fleet(members()), now);
    // THEN
    expect(paused.events.map((e) => e.event.reason)).toEqual(['RolloutPaused']);
    expect(paused.wake).toEqual([]);
    expect(resumed.events.map((e) => e.event.reason)).toEqual(['RolloutResumed']);
    expect([...resumed.wake].sort()).toEqual(['c1', 'e1', 'e2', 'r1', 'r2', 'r3']);
  });

  test('policies of two namespaces are watched apart; each event names its policy with its namespace', () => {
    // GIVEN "fleet" in team-a (its canary rolling) and in team-b (nothing moving)
    const f = fleet(
      [member('a1', 'canary', { ...rollingNow, namespace: 'team-a' }), member('b1', 'canary', { namespace: 'team-b' })],
      {
        policies: ['team-a', 'team-b'].map((ns) => ({
          policy: policy(),
          source: `WorkerRolloutPolicy/${ns}/fleet`,
          namespace: ns,
        })),
        problems: [],
      },
    );
    // WHEN
    const r = new WaveWatch().observe(f, now);
    // THEN
    expect(r.events.map((e) => `${e.policy.namespace}/${e.policy.name} ${e.event.reason} ${e.event.wave}`)).toEqual([
      'team-a/fleet WaveStarted canary',
    ]);
  });
});
