import { PolicyEvent, PolicyRef } from '../../../lib/engines/rollout/policy-events';
import { FilePolicySource, RolloutPolicySource } from '../../../lib/engines/rollout/policy-source';
import { RolloutSignals } from '../../../lib/engines/rollout/rollout-signals';
import { RecordingLogger } from '../../fakes/fake-ports';
import { fleet, member, rollingNow, settledOnNew, T0 } from './fixtures';

/** What the daemon does with each look at the fleet: JSON log lines, events on the policy, wake-ups, a look at a soak's end. */

const members = (c1: Parameters<typeof member>[2]) => [
  member('c1', 'canary', c1),
  member('e1', 'early'),
  member('r1', undefined),
];

function signals(source: RolloutPolicySource, now = () => new Date(T0), look = async () => undefined) {
  const log = new RecordingLogger();
  return { log, s: new RolloutSignals({ log, source, now, look }) };
}

test('the file store: each policy event is one JSON log line (policy, wave, event, type), a warning for a halt', () => {
  // GIVEN a source with no events of its own (files)
  const { log, s } = signals(new FilePolicySource({ clustersDir: '/nonexistent' }));
  // WHEN a wave starts, then halts
  s.observe(fleet(members(rollingNow)));
  s.observe(fleet(members({ failedRoll: 'stack UPDATE_ROLLBACK_COMPLETE' })));
  // THEN
  const lines = log.entries.filter((e) => 'event' in e.obj);
  expect(lines.map((e) => [e.level, e.obj])).toEqual([
    ['info', { policy: 'fleet', wave: 'canary', event: 'WaveStarted', type: 'Normal' }],
    ['warn', { policy: 'fleet', wave: 'canary', event: 'WaveHalted', type: 'Warning' }],
    ['warn', { policy: 'fleet', wave: 'early', event: 'WaveHalted', type: 'Warning' }],
    ['warn', { policy: 'fleet', wave: 'remainder', event: 'WaveHalted', type: 'Warning' }],
  ]);
  expect(lines[0].msg).toBe('wave canary (1 of 3) started: c1 rolling; 1 cluster in the wave');
});

test('a store with events on its objects gets each one as well; a failed post is logged, never thrown', async () => {
  // GIVEN a source that posts events (the first post fails)
  const posted: Array<[PolicyRef, PolicyEvent]> = [];
  let calls = 0;
  const source = {
    load: jest.fn(),
    setPaused: jest.fn(),
    emit: async (p: PolicyRef, e: PolicyEvent) => {
      if (calls++ === 0) throw new Error('403 Forbidden');
      posted.push([p, e]);
    },
  } as unknown as RolloutPolicySource;
  const { log, s } = signals(source);
  // WHEN two events are said
  s.observe(fleet(members(rollingNow)));
  s.observe(fleet(members(settledOnNew(60_000))));
  await new Promise((r) => setImmediate(r));
  // THEN the second was posted on the policy; the first failure is a warning line
  expect(posted.map(([p, e]) => `${p.name} ${e.reason}`)).toEqual(['fleet WaveSoaking']);
  expect(log.entries.find((e) => e.msg === 'could not post the event on the rollout policy')?.obj).toMatchObject({
    event: 'WaveStarted',
    err: 'Error: 403 Forbidden',
  });
});

test('subscribers get the clusters to wake; without a subscriber nothing is scheduled', () => {
  // GIVEN a subscriber
  const { s } = signals(new FilePolicySource({ clustersDir: '/nonexistent' }));
  const woken: string[][] = [];
  const stop = s.onWake((names) => woken.push([...names]));
  // WHEN the canary's roll ends (it soaks)
  s.observe(fleet(members(rollingNow)));
  s.observe(fleet(members(settledOnNew(60_000))));
  // THEN the early wave's cluster is woken
  expect(woken).toEqual([['e1']]);
  stop();
  s.observe(fleet(members(rollingNow)));
  expect(woken).toHaveLength(1);
});

test('when a soak ends the fleet is looked at again (a second after), so the wave settles on time with no cluster due', async () => {
  jest.useFakeTimers({ now: T0 });
  try {
    // GIVEN a subscribed daemon and a canary that settled a minute ago (its 1h soak ends in 59 minutes)
    const look = jest.fn(async () => undefined);
    const { s } = signals(new FilePolicySource({ clustersDir: '/nonexistent' }), () => new Date(Date.now()), look);
    const stop = s.onWake(() => undefined);
    s.observe(fleet(members(settledOnNew(60_000))));
    // WHEN 59 minutes pass, THEN not yet; a second later, the look
    jest.advanceTimersByTime(59 * 60_000);
    expect(look).not.toHaveBeenCalled();
    jest.advanceTimersByTime(1000);
    expect(look).toHaveBeenCalledTimes(1);
    stop();
  } finally {
    jest.useRealTimers();
  }
});
