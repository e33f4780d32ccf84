import { cronProblem, timeZoneProblem, windowState } from '../../../../lib/model/cluster/schema/windows';
import { decide } from '../../../../lib/engines/rollout/gate';
import { fleet, member, policy, T0 } from '../../../engines/rollout/fixtures';

const weekdayNights = { schedule: '0 2 * * 1-5', duration: '4h', timeZone: 'Europe/Berlin' };

describe('windowState (fake clock)', () => {
  test.each([
    // [now (UTC), open?, closes / opens at (UTC)]   Berlin is UTC+1 in January, UTC+2 in July.
    ['2030-01-07T01:00:00.000Z', true, '2030-01-07T05:00:00.000Z'], // Monday 02:00 Berlin: opens exactly now
    ['2030-01-07T04:59:59.000Z', true, '2030-01-07T05:00:00.000Z'], // the last second
    ['2030-01-07T05:00:00.000Z', false, '2030-01-08T01:00:00.000Z'], // closed: the next is Tuesday 02:00 Berlin
    ['2030-01-07T00:59:00.000Z', false, '2030-01-07T01:00:00.000Z'], // a minute early
    ['2030-01-05T03:00:00.000Z', false, '2030-01-07T01:00:00.000Z'], // Saturday: Monday's
    ['2030-07-01T00:30:00.000Z', true, '2030-07-01T04:00:00.000Z'], // summer time: 02:00 Berlin is 00:00 UTC
    ['2030-03-31T00:30:00.000Z', false, '2030-04-01T00:00:00.000Z'], // a Sunday, the night the clocks change
  ])('at %s: open=%s, changes at %s', (at, open, when) => {
    // WHEN
    const s = windowState([weekdayNights], new Date(at));
    // THEN
    expect(s.open).toBe(open);
    expect((s.open ? s.closesAt : s.opensAt)?.toISOString()).toBe(when);
  });

  test('several windows: open when any is; the soonest opening otherwise', () => {
    // GIVEN
    const ws = [weekdayNights, { schedule: '30 12 * * 6', duration: '1h', timeZone: 'UTC' }];
    // WHEN
    const saturdayNoon = windowState(ws, new Date('2030-01-05T12:45:00.000Z'));
    const saturdayMorning = windowState(ws, new Date('2030-01-05T09:00:00.000Z'));
    // THEN
    expect(saturdayNoon).toMatchObject({ open: true });
    expect(!saturdayMorning.open && saturdayMorning.opensAt?.toISOString()).toBe('2030-01-05T12:30:00.000Z');
  });

  test('no windows: always open', () => {
    expect(windowState([], new Date(T0)).open).toBe(true);
  });
});

describe('window rules', () => {
  test.each([
    ['0 2 * * 1-5', undefined],
    ['0 0 2 * * 1-5', 'is not a 5-field cron schedule'],
    ['61 2 * * *', 'is not a valid cron schedule'],
    ['every night', 'is not a 5-field cron schedule'],
  ])('%s', (schedule, problem) => {
    const p = cronProblem(schedule);
    if (problem) expect(p).toContain(problem);
    else expect(p).toBeUndefined();
  });

  test('time zones are IANA names', () => {
    expect(timeZoneProblem('Europe/Berlin')).toBeUndefined();
    expect(timeZoneProblem('Mars/Olympus')).toContain('is not an IANA time zone');
  });
});

describe('the gate and maintenance windows (fake clock)', () => {
  const canaryWindow = { schedule: '0 2 * * *', duration: '2h', timeZone: 'UTC' };
  const p = policy({
    waves: [
      {
        name: 'canary',
        selector: { matchLabels: { ring: 'canary' } },
        maxConcurrent: 1,
        soak: '0s',
        maintenanceWindows: [canaryWindow],
      },
    ],
  });

  test.each([
    // [now, the cluster's own windows, go?, reason]
    ['2030-01-01T02:30:00.000Z', [], true, undefined],
    ['2030-01-01T05:00:00.000Z', [], false, 'OutsideMaintenanceWindow'],
    // The cluster's own windows replace the wave's.
    ['2030-01-01T05:00:00.000Z', [{ schedule: '0 5 * * *', duration: '1h', timeZone: 'UTC' }], true, undefined],
    [
      '2030-01-01T02:30:00.000Z',
      [{ schedule: '0 5 * * *', duration: '1h', timeZone: 'UTC' }],
      false,
      'OutsideMaintenanceWindow',
    ],
  ] as const)('at %s with own windows %j: go=%s', (at, own, go, reason) => {
    // GIVEN
    const f = fleet([member('c1', 'canary', { windows: own })], [p]);
    // WHEN
    const d = decide('c1', f, new Date(at));
    // THEN
    expect(d.go).toBe(go);
    if (!d.go) expect(d.reason).toBe(reason);
  });

  test('held outside the window, it is looked at again when the next one opens', () => {
    // WHEN
    const d = decide('c1', fleet([member('c1', 'canary')], [p]), new Date('2030-01-01T05:00:00.000Z'));
    // THEN
    expect(!d.go && d.requeueAfterMs).toBe(21 * 3600_000);
    expect(!d.go && d.message).toContain(
      'the maintenance windows of wave canary ("0 2 * * *" for 2h (UTC)); the next opens at 2030-01-02T02:00:00.000Z',
    );
  });

  test('a hold wins over an open window, and is released by removing it', () => {
    // GIVEN
    const at = new Date('2030-01-01T02:30:00.000Z');
    // WHEN
    const held = decide('c1', fleet([member('c1', 'canary', { hold: true })], [p]), at);
    const released = decide('c1', fleet([member('c1', 'canary', { hold: false })], [p]), at);
    // THEN
    expect(held).toMatchObject({ go: false, reason: 'Held' });
    expect(released.go).toBe(true);
  });
});
