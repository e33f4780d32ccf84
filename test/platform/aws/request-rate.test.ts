import fc from 'fast-check';
import {
  DEFAULT_CLOUDFORMATION_RATES,
  isReadApi,
  ratesFromQps,
  RequestRateLimiter,
} from '../../../lib/platform/aws/request-rate';
import { CfnApi, FakeCloudFormation } from '../../fakes/fake-cloudformation';
import { FakeClock } from '../../fakes/fake-ports';

const ONE_PER_SECOND = { read: { ratePerSecond: 1, burst: 2 }, write: { ratePerSecond: 0.5, burst: 1 } };

test.each([
  // calls at these clock times (ms) → the wait each is told
  { what: 'the burst goes out at once', at: [0, 0], waits: [0, 0] },
  { what: 'past the burst, one token a second, in the order asked', at: [0, 0, 0, 0], waits: [0, 0, 1000, 2000] },
  { what: 'time refills the bucket', at: [0, 0, 1000], waits: [0, 0, 0] },
  { what: 'a partly refilled token is waited for to the ms', at: [0, 0, 400], waits: [0, 0, 600] },
  { what: 'the bucket keeps no more than the burst', at: [0, 10_000, 10_000, 10_000], waits: [0, 0, 0, 1000] },
])('reads: $what', ({ at, waits }) => {
  // GIVEN a limiter of 1 read a second, burst 2, on a clock
  let now = 0;
  const limiter = new RequestRateLimiter({ rates: ONE_PER_SECOND, now: () => now });

  // WHEN DescribeStacks requests ask for tokens at those times
  const told = at.map((t) => {
    now = t;
    return limiter.reserve('DescribeStacks');
  });

  // THEN
  expect(told).toEqual(waits);
});

test('each API has its own bucket, and writes the write rate', () => {
  // GIVEN
  const limiter = new RequestRateLimiter({ rates: ONE_PER_SECOND, now: () => 0 });

  // WHEN the read burst of one API is spent, then another read API and a write ask
  limiter.reserve('DescribeStacks');
  limiter.reserve('DescribeStacks');

  // THEN the other read API still has its burst; the write bucket holds 1, then waits 2 s (0.5/s)
  expect(limiter.reserve('ListStacks')).toBe(0);
  expect(limiter.reserve('CreateChangeSet')).toBe(0);
  expect(limiter.reserve('CreateChangeSet')).toBe(2000);
  expect(limiter.waited.get('CreateChangeSet')).toEqual({ requests: 1, ms: 2000 });
  expect(limiter.waited.get('ListStacks')).toBeUndefined();
});

test.each([
  ['DescribeStacks', true],
  ['ListStacks', true],
  ['GetTemplate', true],
  ['DescribeStackEvents', true],
  ['CreateChangeSet', false],
  ['ExecuteChangeSet', false],
  ['DeleteStack', false],
  ['ContinueUpdateRollback', false],
])('%s is a read: %s', (api, read) => {
  expect(isReadApi(api)).toBe(read);
});

test('take waits with the sleep it is given, only when a token is not due', async () => {
  // GIVEN a clock the sleep moves
  let now = 0;
  const slept: number[] = [];
  const sleep = (ms: number) => {
    slept.push(ms);
    now += ms;
    return Promise.resolve();
  };
  const limiter = new RequestRateLimiter({ rates: ONE_PER_SECOND, now: () => now, sleep });

  // WHEN five reads are sent one after the other
  for (let i = 0; i < 5; i++) await limiter.take('DescribeStacks');

  // THEN the first two go at once, then one a second
  expect(slept).toEqual([1000, 1000, 1000]);
  expect(now).toBe(3000);
});

test('the flags give a burst of twice the rate, at least 1; the defaults stay within the bench quotas', () => {
  expect(ratesFromQps(5, 0.2)).toEqual({
    read: { ratePerSecond: 5, burst: 10 },
    write: { ratePerSecond: 0.2, burst: 1 },
  });
  expect(DEFAULT_CLOUDFORMATION_RATES.read).toEqual({ ratePerSecond: 5, burst: 10 });
  expect(DEFAULT_CLOUDFORMATION_RATES.write.ratePerSecond).toBeLessThanOrEqual(2);
  expect(DEFAULT_CLOUDFORMATION_RATES.write.burst).toBeLessThanOrEqual(5);
});

/** Requests at random gaps, some of them in bursts, against the fake's quota buckets (AWS's side). */
const schedule = fc.array(
  fc.record({
    gapMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 3000 })),
    api: fc.constantFrom<'describeStack' | 'listStacks' | 'deleteChangeSet'>(
      'describeStack',
      'listStacks',
      'deleteChangeSet',
    ),
  }),
  { minLength: 1, maxLength: 80 },
);

async function send(
  steps: ReadonlyArray<{ gapMs: number; api: 'describeStack' | 'listStacks' | 'deleteChangeSet' }>,
  paced: boolean,
) {
  const clock = new FakeClock();
  const rates = DEFAULT_CLOUDFORMATION_RATES;
  const limiter = new RequestRateLimiter({ rates, now: () => clock.ms });
  const quota = (r: { ratePerSecond: number; burst: number }) => ({ ratePerSecond: r.ratePerSecond, burst: r.burst });
  const fake = new FakeCloudFormation({
    clock,
    // No latency: requests are as close as the limiter lets them be (latency would space them out by itself).
    quotas: { DescribeStacks: quota(rates.read), DeleteChangeSet: quota(rates.write) },
    pace: paced ? (api: CfnApi) => limiter.reserve(api) : undefined,
  });
  // 450 stacks: a listing is 5 DescribeStacks pages.
  for (let i = 0; i < 450; i++) fake.seed(`s${i}`, { status: 'CREATE_COMPLETE' });
  for (const s of steps) {
    clock.advance(s.gapMs);
    if (s.api === 'describeStack') await fake.describeStack('s1').catch(() => undefined);
    else if (s.api === 'listStacks') await fake.listStacks().catch(() => undefined);
    else await fake.deleteChangeSet('s1', 'cs').catch(() => undefined);
  }
  return [...fake.throttledCalls.values()].reduce((a, b) => a + b, 0);
}

test('paced by a limiter of the same rates, no request of any schedule is throttled (a schedule unpaced is)', async () => {
  // GIVEN schedules of describes, 5-page listings and writes, in bursts and apart
  await fc.assert(
    fc.asyncProperty(schedule, async (steps) => {
      // WHEN the client paces its requests with the limiter; THEN AWS's side throttles none
      expect(await send(steps, true)).toBe(0);
    }),
    { seed: 20261126, numRuns: 200 },
  );
  // AND three 5-page listings at once without the limiter are throttled (15 pages, burst 10) (so the property above could fail)
  expect(
    await send(
      [
        { gapMs: 0, api: 'listStacks' },
        { gapMs: 0, api: 'listStacks' },
        { gapMs: 0, api: 'listStacks' },
      ],
      false,
    ),
  ).toBeGreaterThan(0);
});
