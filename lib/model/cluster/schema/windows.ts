import { CronExpressionParser } from 'cron-parser';
import { z } from 'zod';
import { cel, openApiRules, quoted } from './openapi';
import { DURATION_PATTERN, formatDuration, parseDuration } from './duration';

/**
 * Maintenance windows: a 5-field cron schedule (minute hour day-of-month month day-of-week) for when a window opens,
 * how long it stays open, and the IANA time zone the schedule is read in (so `0 2 * * *` is 02:00 local time across
 * daylight-saving changes). A roll starts only inside a window; a roll under way is never stopped when one closes
 * (CloudFormation cannot pause a rolling update), as with EKS and GKE maintenance windows.
 */

const d = (text: string) => ({ description: text });

export function cronProblem(schedule: string, timeZone = 'UTC'): string | undefined {
  if (schedule.trim().split(/\s+/).length !== 5)
    return `${JSON.stringify(schedule)} is not a 5-field cron schedule (minute hour day-of-month month day-of-week, e.g. "0 2 * * 1-5")`;
  try {
    CronExpressionParser.parse(schedule, { tz: timeZone, strict: false });
    return undefined;
  } catch (e) {
    return `${JSON.stringify(schedule)} is not a valid cron schedule: ${(e as Error).message}`;
  }
}

export function timeZoneProblem(tz: string): string | undefined {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return undefined;
  } catch {
    return `${JSON.stringify(tz)} is not an IANA time zone (such as UTC, Europe/Berlin, America/New_York)`;
  }
}

// What the CRDs can check of a window: sizes and the duration (a cron schedule and a time zone need the daemon's
// libraries; it refuses them, and holds the rolls they gate, with validate's message).
const schedule = z.string();
openApiRules.add(schedule, { maxLength: 128 });
const timeZone = z.string();
openApiRules.add(timeZone, { maxLength: 64 });
const duration = z.string();
openApiRules.add(duration, {
  maxLength: 32,
  cel: [
    cel(
      `self.matches(${quoted(DURATION_PATTERN)}) && duration(self) > duration('0s')`,
      `'"' + self + '" is not a duration above zero (such as 30m, 4h, 1h30m)'`,
    ),
    cel(
      `!self.matches(${quoted(DURATION_PATTERN)}) || duration(self) <= duration('168h')`,
      `self + ' is longer than a week'`,
    ),
  ],
});

export const MaintenanceWindowSchema = z
  .strictObject({
    schedule: schedule.meta(
      d('When the window opens: a 5-field cron schedule, e.g. "0 2 * * 1-5" (02:00 on weekdays).'),
    ),
    duration: duration.meta(d('How long it stays open: 30m, 4h, 1h30m. A roll starts only while a window is open.')),
    timeZone: timeZone.default('UTC').meta(d('IANA time zone the schedule is read in. @default UTC')),
  })
  .superRefine((w, ctx) => {
    const tz = timeZoneProblem(w.timeZone);
    if (tz) ctx.addIssue({ code: 'custom', path: ['timeZone'], message: tz, input: w.timeZone });
    const cron = cronProblem(w.schedule, tz ? 'UTC' : w.timeZone);
    if (cron) ctx.addIssue({ code: 'custom', path: ['schedule'], message: cron, input: w.schedule });
    const ms = parseDuration(w.duration);
    if (ms === undefined || ms <= 0)
      ctx.addIssue({
        code: 'custom',
        path: ['duration'],
        message: `${JSON.stringify(w.duration)} is not a duration above zero (such as 30m, 4h, 1h30m)`,
        input: w.duration,
      });
    else if (ms > 7 * 24 * 3_600_000)
      ctx.addIssue({
        code: 'custom',
        path: ['duration'],
        message: `${w.duration} is longer than a week`,
        input: w.duration,
      });
  })
  .meta(d('A maintenance window: rolls start only while one is open.'));

export type MaintenanceWindow = z.output<typeof MaintenanceWindowSchema>;

export type WindowState =
  | { readonly open: true; readonly closesAt: Date; readonly window: MaintenanceWindow }
  | { readonly open: false; readonly opensAt?: Date };

/** Whether `now` is inside one of `windows` (no windows: always open), and when that changes. */
export function windowState(windows: readonly MaintenanceWindow[], now: Date): WindowState {
  let best: { closesAt: number; window: MaintenanceWindow } | undefined;
  let opensAt: number | undefined;
  for (const w of windows) {
    const duration = parseDuration(w.duration) ?? 0;
    // The latest opening at or before now (prev() is strictly before its start, hence the millisecond).
    const prev = CronExpressionParser.parse(w.schedule, { currentDate: new Date(now.getTime() + 1), tz: w.timeZone })
      .prev()
      .getTime();
    if (now.getTime() < prev + duration && (!best || prev + duration > best.closesAt))
      best = { closesAt: prev + duration, window: w };
    const next = CronExpressionParser.parse(w.schedule, { currentDate: now, tz: w.timeZone }).next().getTime();
    opensAt = opensAt === undefined ? next : Math.min(opensAt, next);
  }
  if (windows.length === 0)
    return {
      open: true,
      closesAt: new Date(8.64e15),
      window: { schedule: '* * * * *', duration: '0s', timeZone: 'UTC' },
    };
  return best
    ? { open: true, closesAt: new Date(best.closesAt), window: best.window }
    : { open: false, opensAt: opensAt === undefined ? undefined : new Date(opensAt) };
}

/** `"0 2 * * 1-5" for 4h (Europe/Berlin)` */
export function describeWindow(w: MaintenanceWindow): string {
  return `"${w.schedule}" for ${formatDuration(parseDuration(w.duration) ?? 0)} (${w.timeZone})`;
}
