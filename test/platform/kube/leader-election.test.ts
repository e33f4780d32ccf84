import { NotLeaderError } from '../../../lib/core/errors';
import {
  Clock,
  Lease,
  LeaderElector,
  LeaseConflict,
  LeaseStore,
  microTime,
} from '../../../lib/platform/kube/leader-election';

/**
 * The election's state machine on a fake clock and an in-memory lease store with resourceVersions: the same rules
 * as client-go (lease duration measured on the candidate's own clock, renew deadline, transitions, optimistic writes).
 */

class FakeLeases implements LeaseStore {
  public lease?: Lease;
  private rv = 0;
  /** When set, every write fails (an unreachable API server). */
  public down = false;
  public writes = 0;
  /** The clock's time at the last successful write. */
  public lastWriteAt = 0;
  constructor(private readonly clock?: { now(): number }) {}
  async get() {
    if (this.down) throw new Error('connect ECONNREFUSED');
    return this.lease ? structuredClone(this.lease) : undefined;
  }
  async create(l: Lease) {
    if (this.down) throw new Error('connect ECONNREFUSED');
    if (this.lease) throw new LeaseConflict('exists');
    return this.store(l);
  }
  async update(l: Lease) {
    if (this.down) throw new Error('connect ECONNREFUSED');
    if (!this.lease || l.metadata.resourceVersion !== this.lease.metadata.resourceVersion)
      throw new LeaseConflict('stale');
    return this.store(l);
  }
  private store(l: Lease) {
    this.writes++;
    this.lastWriteAt = this.clock?.now() ?? 0;
    this.lease = structuredClone({ ...l, metadata: { ...l.metadata, resourceVersion: String(++this.rv) } });
    return structuredClone(this.lease);
  }
}

/** Virtual time: a sleep moves the clock on at once (and yields, so other candidates run). */
class FakeClock implements Clock {
  constructor(public t = 1_700_000_000_000) {}
  now = () => this.t;
  sleep = async (ms: number, signal: AbortSignal) => {
    if (!signal.aborted) this.t += ms;
    await new Promise((r) => setImmediate(r));
  };
}

const OPTS = { namespace: 'ops', leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 };

describe('one attempt (tryAcquireOrRenew)', () => {
  test('an absent lease is created: holder, duration, acquire and renew time, no transition', async () => {
    // GIVEN no lease
    const leases = new FakeLeases();
    const clock = new FakeClock();
    const a = new LeaderElector(leases, { ...OPTS, identity: 'a' }, clock);

    // WHEN a candidate tries
    const won = await a.attempt();

    // THEN it holds a new lease
    expect(won).toBe(true);
    expect(leases.lease!.spec).toEqual({
      holderIdentity: 'a',
      leaseDurationSeconds: 15,
      acquireTime: microTime(clock.t),
      renewTime: microTime(clock.t),
      leaseTransitions: 0,
    });
    expect(leases.lease!.spec.renewTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  });

  test.each([
    // [what, ms after b first saw the lease, a renewed meanwhile, b wins]
    ['held and fresh', 14_000, false, false],
    ['held, unchanged for a lease duration on the candidate clock', 15_000, false, true],
    ['held and renewed by its holder meanwhile', 20_000, true, false],
  ])('another holder: %s', async (_what, after, renewed, wins) => {
    // GIVEN a holds the lease and b has seen it
    const leases = new FakeLeases();
    const clock = new FakeClock();
    const a = new LeaderElector(leases, { ...OPTS, identity: 'a' }, clock);
    const b = new LeaderElector(leases, { ...OPTS, identity: 'b' }, clock);
    await a.attempt();
    expect(await b.attempt()).toBe(false);

    // WHEN time passes (a renewing, or not) and b tries again
    clock.t += after - 1000;
    if (renewed) await a.attempt();
    clock.t += 1000;
    const won = await b.attempt();

    // THEN b takes it only when a's record did not change for a whole lease duration; a takeover counts a transition
    expect(won).toBe(wins);
    expect(leases.lease!.spec.holderIdentity).toBe(wins ? 'b' : 'a');
    expect(leases.lease!.spec.leaseTransitions).toBe(wins ? 1 : 0);
    if (wins) expect(leases.lease!.spec.acquireTime).toBe(microTime(clock.t));
  });

  test('renewing keeps acquireTime and transitions, moves renewTime', async () => {
    // GIVEN a leader
    const leases = new FakeLeases();
    const clock = new FakeClock();
    const a = new LeaderElector(leases, { ...OPTS, identity: 'a' }, clock);
    await a.attempt();
    const acquired = leases.lease!.spec.acquireTime;

    // WHEN it renews later
    clock.t += 2000;
    expect(await a.attempt()).toBe(true);

    // THEN only renewTime moved
    expect(leases.lease!.spec).toMatchObject({
      holderIdentity: 'a',
      acquireTime: acquired,
      renewTime: microTime(clock.t),
      leaseTransitions: 0,
    });
  });

  test('two candidates in one round: the write with the stale resourceVersion loses', async () => {
    // GIVEN an expired lease of a gone holder, read by b and c
    const leases = new FakeLeases();
    const clock = new FakeClock();
    await new LeaderElector(leases, { ...OPTS, identity: 'gone' }, clock).attempt();
    const b = new LeaderElector(leases, { ...OPTS, identity: 'b' }, clock);
    const c = new LeaderElector(leases, { ...OPTS, identity: 'c' }, clock);
    await b.attempt();
    await c.attempt();
    clock.t += 16_000;

    // WHEN both try at once
    const [wb, wc] = await Promise.all([b.attempt(), c.attempt()]);

    // THEN exactly one wins
    expect([wb, wc].filter(Boolean)).toHaveLength(1);
    expect(leases.lease!.spec.leaseTransitions).toBe(1);
  });
});

describe('run', () => {
  test('a leader that cannot renew stops leading (and writing) before its lease can expire', async () => {
    // GIVEN a leader
    const clock = new FakeClock();
    const leases = new FakeLeases(clock);
    let stoppedAt = 0;
    let startedAt = 0;
    const abort = new AbortController();
    const a = new LeaderElector(
      leases,
      {
        ...OPTS,
        identity: 'a',
        onStartedLeading: () => (startedAt = clock.t),
        onStoppedLeading: () => {
          stoppedAt = clock.t;
          abort.abort();
        },
      },
      clock,
    );
    const running = a.run(abort.signal);
    while (!a.isLeader()) await new Promise((r) => setImmediate(r));
    expect(a.canWrite()).toBe(true);
    expect(() => a.check('execute change set')).not.toThrow();

    // WHEN the API server becomes unreachable
    leases.down = true;
    await running;
    const lastRenew = leases.lastWriteAt;

    // THEN it stopped leading after renewDeadline without a renewal, and before the lease duration
    expect(startedAt).toBeGreaterThan(0);
    expect(stoppedAt - lastRenew).toBeGreaterThanOrEqual(OPTS.renewDeadlineMs);
    expect(stoppedAt - lastRenew).toBeLessThan(OPTS.leaseDurationMs);
    expect(a.isLeader()).toBe(false);
    expect(a.canWrite()).toBe(false);
    expect(() => a.check('execute change set')).toThrow(NotLeaderError);
  });

  test('canWrite turns false once the last renewal is older than renewDeadline, even before the loop notices', async () => {
    // GIVEN a leader whose renewal loop is held up (a blocked event loop): the clock moves, no renewal happens
    const leases = new FakeLeases();
    const clock = new FakeClock();
    const abort = new AbortController();
    const stuck: Clock = { now: clock.now, sleep: () => new Promise(() => undefined) };
    const a = new LeaderElector(leases, { ...OPTS, identity: 'a' }, stuck);
    void a.run(abort.signal);
    while (!a.isLeader()) await new Promise((r) => setImmediate(r));

    // WHEN renewDeadline passes
    clock.t += OPTS.renewDeadlineMs;

    // THEN it still thinks it leads, but it may not write
    expect(a.isLeader()).toBe(true);
    expect(a.canWrite()).toBe(false);
    abort.abort();
  });

  test('a clean stop releases the lease, and a waiting candidate takes it at its next try', async () => {
    // GIVEN a leader and a waiting candidate
    const leases = new FakeLeases();
    const clock = new FakeClock();
    const stopA = new AbortController();
    const stopB = new AbortController();
    const a = new LeaderElector(leases, { ...OPTS, identity: 'a' }, clock);
    const b = new LeaderElector(leases, { ...OPTS, identity: 'b', onStartedLeading: () => stopB.abort() }, clock);
    const ra = a.run(stopA.signal);
    while (!a.isLeader()) await new Promise((r) => setImmediate(r));
    const rb = b.run(stopB.signal);

    // WHEN the leader stops
    const before = clock.t;
    stopA.abort();
    await ra;

    // THEN the lease has no holder, and b leads within a couple of retry periods (not a lease duration)
    expect(leases.lease!.spec.holderIdentity).toBe('');
    await rb;
    expect(leases.lease!.spec.holderIdentity === 'b' || b.holder === 'b').toBe(true);
    expect(clock.t - before).toBeLessThan(OPTS.leaseDurationMs);
  });

  test('settings that client-go refuses are refused', () => {
    // GIVEN a renew deadline not below the lease duration, WHEN constructing, THEN it throws naming both
    expect(() => new LeaderElector(new FakeLeases(), { ...OPTS, identity: 'a', renewDeadlineMs: 15_000 })).toThrow(
      /leaseDuration .* > renewDeadline/,
    );
  });
});

describe('the guard (shards: refuse to run beside an overlapping shard)', () => {
  test('a guard that refuses at the start ends run() with its error; nothing is written and nobody leads', async () => {
    // GIVEN
    const leases = new FakeLeases();
    const clock = new FakeClock();
    const a = new LeaderElector(
      leases,
      { ...OPTS, identity: 'a', guard: async () => Promise.reject(new Error('overlaps shard b')) },
      clock,
    );
    // WHEN / THEN
    await expect(a.run(new AbortController().signal)).rejects.toThrow('overlaps shard b');
    expect([leases.writes, a.isLeader()]).toEqual([0, false]);
  });

  test('a guard that refuses once the lease is taken releases it and ends run(), never leading', async () => {
    // GIVEN a guard that passes at the start and refuses on acquisition (another shard appeared meanwhile)
    const leases = new FakeLeases();
    const clock = new FakeClock();
    let calls = 0;
    const led: boolean[] = [];
    const a = new LeaderElector(
      leases,
      {
        ...OPTS,
        identity: 'a',
        guard: async () => {
          if (++calls === 2) throw new Error('overlaps shard b');
        },
      },
      clock,
    );
    a.subscribe((l) => led.push(l));
    // WHEN
    await expect(a.run(new AbortController().signal)).rejects.toThrow('overlaps shard b');
    // THEN
    expect(led).toEqual([]);
    expect(leases.lease?.spec.holderIdentity).toBe('');
  });

  test('every write of the lease carries the scope metadata (labels and annotations)', async () => {
    // GIVEN
    const leases = new FakeLeases();
    const metadata = {
      labels: { 'app.kubernetes.io/component': 'shard-lease' },
      annotations: { 'worker-stacks.io/shard-selector': 'tier=canary' },
    };
    const a = new LeaderElector(leases, { ...OPTS, identity: 'a', metadata }, new FakeClock());
    // WHEN it takes, then renews
    await a.attempt();
    await a.attempt();
    // THEN
    expect(leases.lease?.metadata).toMatchObject(metadata);
    expect(leases.writes).toBe(2);
  });
});
