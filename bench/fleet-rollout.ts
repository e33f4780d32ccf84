/**
 * Fleet rollout (issue 15): a change to the shared config template across 1,000 clusters in 4 regions, rolled by a
 * 3-wave WorkerRolloutPolicy, against the fake CloudFormation with ten-minute rolling updates, 100 ms per API call
 * and request-rate quotas per API (token buckets on the fake clock). The daemon's scheduling (requeues, resync, the
 * watch) runs on the fake clock (test/fakes/fleet-sim.ts); synthesis is the checksum stand-in, since this measures
 * the rollout, not CDK (bench synth measures that).
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { FleetSim, ROLL_POLLS } from '../test/fakes/fleet-sim';
import { CfnApi, TokenBucketQuota } from '../test/fakes/fake-cloudformation';
import { BenchOptions, codeState, figure, loadavg1, Section } from './report';
import { fmt, mb, table } from './stats';

const MIN = 60_000;
export const REGIONS = ['us-east-1', 'eu-west-1', 'ap-southeast-1', 'us-west-2'];
/**
 * Request rates per account and region. CloudFormation publishes no per-API rates in its quota tables; these are
 * conservative assumptions (the lowest rates reported for throttled accounts), the same for every region.
 */
export const QUOTAS: Readonly<Partial<Record<CfnApi, TokenBucketQuota>>> = {
  DescribeStacks: { ratePerSecond: 5, burst: 10 },
  ListStacks: { ratePerSecond: 5, burst: 10 },
  DescribeChangeSet: { ratePerSecond: 5, burst: 10 },
  DescribeStackEvents: { ratePerSecond: 5, burst: 10 },
  GetTemplate: { ratePerSecond: 5, burst: 10 },
  CreateChangeSet: { ratePerSecond: 2, burst: 5 },
  ExecuteChangeSet: { ratePerSecond: 2, burst: 5 },
  DeleteChangeSet: { ratePerSecond: 2, burst: 5 },
  DeleteStack: { ratePerSecond: 2, burst: 5 },
  ContinueUpdateRollback: { ratePerSecond: 2, burst: 5 },
};

export async function runFleetRollout(opts: BenchOptions): Promise<Section> {
  const load0 = loadavg1();
  const code = codeState();
  const n = opts.quick ? 100 : 1000;
  const { canaries, early, rest, names, ring, waves } = fleetOf(n);
  const idealMs =
    ROLL_POLLS * 5000 * (1 + Math.ceil(early / waves.early.max) + Math.ceil(rest / waves.rest.max)) +
    (waves.canary.soakMin + waves.early.soakMin) * MIN;

  const sim = new FleetSim(names, ring, {
    regions: REGIONS,
    quotas: QUOTAS,
    latencyMs: 100,
    pollMs: 30_000,
    concurrency: 200,
  });
  try {
    writeFleetPolicy(sim, waves);
    const settledOn = () =>
      names.every(
        (x) =>
          sim.live(x) &&
          sim.live(x) === sim.h.status(x).desiredChecksum &&
          !sim.stack(x)!.status.endsWith('IN_PROGRESS'),
      );
    const wallCreate = performance.now();
    await sim.runUntil(sim.now + 60 * MIN, () => names.every((x) => sim.live(x)) && settledOn());
    process.stderr.write(
      `  fleet-rollout: ${n} stacks created in ${fmt((performance.now() - wallCreate) / 1000)} s of wall time\n`,
    );
    const created = names.filter((x) => sim.live(x)).length;
    if (created !== n) throw new Error(`fleet-rollout: only ${created} of ${n} stacks were created`);

    // The shared-template change.
    for (const f of sim.fakes.values()) {
      f.resetCalls();
      f.apiRequests.clear();
      f.throttledCalls.clear();
    }
    sim.starts.length = 0;
    const reconciles0 = sim.reconciles;
    const syntheses0 = sim.syntheses;
    const lag = monitorEventLoopDelay({ resolution: 10 });
    lag.enable();
    let rss = process.memoryUsage().rss;
    const rssTimer = setInterval(() => (rss = Math.max(rss, process.memoryUsage().rss)), 200);
    const t0 = sim.now;
    const wall0 = performance.now();
    sim.changeTemplate('# kubelet tuning (bench)');
    await sim.runUntil(t0 + 12 * 60 * MIN, () => new Set(sim.starts.map((s) => s.name)).size === n && settledOn());
    const wallMs = performance.now() - wall0;
    clearInterval(rssTimer);
    rss = Math.max(rss, process.memoryUsage().rss);
    lag.disable();
    const lastStart = Math.max(...sim.starts.map((s) => s.at));
    const simulatedMs = lastStart + ROLL_POLLS * 5000 - t0;
    const rolled = new Set(sim.starts.map((s) => s.name)).size;
    if (rolled !== n) throw new Error(`fleet-rollout: ${rolled} of ${n} clusters rolled within 12 simulated hours`);
    const apis = new Map<CfnApi, number>();
    const throttled = new Map<CfnApi, number>();
    for (const f of sim.fakes.values()) {
      for (const [k, v] of f.apiRequests) apis.set(k, (apis.get(k) ?? 0) + v);
      for (const [k, v] of f.throttledCalls) throttled.set(k, (throttled.get(k) ?? 0) + v);
    }
    const totalCalls = [...apis.values()].reduce((a, b) => a + b, 0);
    const totalThrottled = [...throttled.values()].reduce((a, b) => a + b, 0);
    const waveTimes = (prefix: string) =>
      sim.starts.filter((s) => s.name.startsWith(prefix)).map((s) => (s.at - t0) / MIN);
    const rows = (['canary', 'early', 'main'] as const).map((w) => {
      const ts = waveTimes(w);
      return [
        w === 'main' ? 'remainder' : w,
        String(ts.length),
        fmt(Math.min(...ts)),
        fmt(Math.max(...ts) + ROLL_POLLS / 12),
      ];
    });
    const apiRows = [...apis]
      .sort()
      .map(([api, count]) => [api, fmt(count), fmt(count / n), fmt(throttled.get(api) ?? 0)]);
    process.stderr.write(
      `  fleet-rollout: ${n} clusters rolled in ${fmt(simulatedMs / MIN)} simulated minutes (ideal ${fmt(idealMs / MIN)}), ${fmt(wallMs / 1000)} s of wall time\n`,
    );
    return {
      id: 'fleet-rollout',
      title: `Fleet rollout: a shared-template change across ${n} clusters in ${REGIONS.length} regions, 3 waves, fake CloudFormation with API quotas`,
      mode: opts.quick ? 'quick' : 'full',
      date: new Date().toISOString(),
      loadavg: [load0, loadavg1()],
      code,
      figures: [
        figure(
          'fleet-rollout-simulated',
          `fleet rollout of ${n} clusters, simulated time over the policy's ideal`,
          simulatedMs / idealMs,
          '×',
          { op: '<=', value: 1.15 },
        ),
        figure(
          'fleet-rollout-throttled',
          `fleet rollout of ${n} clusters, throttled CloudFormation calls`,
          totalThrottled,
          '',
          { op: '==', value: 0 },
        ),
        figure(
          'fleet-rollout-calls',
          `fleet rollout of ${n} clusters, CloudFormation requests per roll`,
          totalCalls / n,
          '',
        ),
        figure(
          'fleet-rollout-syntheses',
          `fleet rollout of ${n} clusters, syntheses per cluster (a held one: its roll key's, reused by its change set)`,
          (sim.syntheses - syntheses0) / n,
          '',
          { op: '<=', value: 1 },
        ),
        figure('fleet-rollout-rss', `fleet rollout of ${n} clusters, peak RSS`, mb(rss), 'MiB'),
        figure(
          'fleet-rollout-lag',
          `fleet rollout of ${n} clusters, event-loop delay p99`,
          lag.percentile(99) / 1e6,
          'ms',
        ),
      ],
      tables: [
        table(
          ['figure', 'value'],
          [
            ['simulated time, change to last roll done', `${fmt(simulatedMs / MIN)} min`],
            ["the policy's ideal (rolls back to back, soaks exact)", `${fmt(idealMs / MIN)} min`],
            [
              'CloudFormation requests (listing pages counted) / per roll',
              `${fmt(totalCalls)} / ${fmt(totalCalls / n)}`,
            ],
            ['throttled requests', fmt(totalThrottled)],
            ['reconciles', fmt(sim.reconciles - reconciles0)],
            ['wall time of the simulation', `${fmt(wallMs / 1000)} s`],
            ['peak RSS', `${fmt(mb(rss))} MiB`],
            [
              'event-loop delay p50 / p99 / max',
              `${fmt(lag.percentile(50) / 1e6)} / ${fmt(lag.percentile(99) / 1e6)} / ${fmt(lag.max / 1e6)} ms`,
            ],
          ],
        ),
        table(['wave', 'clusters', 'first roll started (min)', 'last roll done (min)'], rows),
        table(['API', 'requests', 'per roll', 'throttled'], apiRows),
      ],
      notes: [
        `Policy: canary = ${canaries} clusters (one per region), maxConcurrent ${waves.canary.max}, soak ${waves.canary.soakMin}m; early = ${early} (10 %), maxConcurrent 25 % (${waves.early.max}), soak ${waves.early.soakMin}m; remainder = ${rest}, maxConcurrent 10 % (${waves.rest.max}); maxConcurrentRolls 200. Ideal = roll (10 min) + 60 + ${Math.ceil(early / waves.early.max)} rolls + 30 + ${Math.ceil(rest / waves.rest.max)} rolls.`,
        'Fake CloudFormation per region: a rolling update takes 10 minutes, every API call 100 ms of clock time, and each API has a token bucket (DescribeStacks, ListStacks, DescribeChangeSet, DescribeStackEvents, GetTemplate 5/s burst 10; CreateChangeSet, ExecuteChangeSet, DeleteChangeSet, DeleteStack, ContinueUpdateRollback 2/s burst 5; a listing costs one DescribeStacks per 100 stacks). AWS does not publish per-API CloudFormation rates; these are conservative assumptions.',
        'The daemon: --poll-seconds 30, --concurrency 200; a held cluster is woken when a roll of its wave ends (as many as slots freed), when the wave before it settles or its soak ends, and otherwise looked at again every 2 minutes; resync every 10 minutes. Reconciles run one at a time on the fake clock, so API calls are spread by their latency as a single worker would spread them.',
        `Over the ideal: each of the ${1 + Math.ceil(early / waves.early.max) + Math.ceil(rest / waves.rest.max)} rounds of rolls starts when the rounds before it are recorded, up to one poll (30 s) after their stacks complete, and a woken cluster then takes its turn in the queue; the ideal counts rolls back to back.`,
        'RSS and event-loop delay are of this one process (simulation, file store and reconciler together); the event loop only turns between reconciles here, so its delay is the longest reconcile step.',
      ],
      data: {
        n,
        regions: REGIONS,
        simulatedMs,
        idealMs,
        totalCalls,
        totalThrottled,
        apis: Object.fromEntries(apis),
        throttled: Object.fromEntries(throttled),
        rssMiB: mb(rss),
        lagP99Ms: lag.percentile(99) / 1e6,
        wallMs,
      },
    };
  } finally {
    sim.cleanup();
  }
}

/**
 * The bench fleet of n clusters: a canary per region, an early tenth, the remainder, named by ring (`canary-0`,
 * `early-0004`, `main-0104`), and the waves of the policy over them.
 */
export function fleetOf(n: number) {
  const canaries = REGIONS.length; // one per region
  const early = n / 10;
  const rest = n - canaries - early;
  const names = Array.from({ length: n }, (_, i) =>
    i < canaries
      ? `canary-${i}`
      : i < canaries + early
        ? `early-${String(i).padStart(4, '0')}`
        : `main-${String(i).padStart(4, '0')}`,
  );
  const ring = (name: string) => ({ ring: name.split('-')[0] });
  const waves = {
    canary: { max: canaries, soakMin: 60 },
    early: { max: Math.ceil(early / 4), soakMin: 30 },
    rest: { max: Math.ceil(rest / 10) },
  };
  return { canaries, early, rest, names, ring, waves };
}

/** The bench's WorkerRolloutPolicy: canary, soak; early 25 %, soak; the remainder 10 %; 200 rolls at once. */
export function writeFleetPolicy(sim: FleetSim, waves: ReturnType<typeof fleetOf>['waves']): void {
  sim.writePolicy('fleet', {
    waves: [
      {
        name: 'canary',
        selector: { matchLabels: { ring: 'canary' } },
        maxConcurrent: waves.canary.max,
        soak: `${waves.canary.soakMin}m`,
      },
      {
        name: 'early',
        selector: { matchLabels: { ring: 'early' } },
        maxConcurrent: '25%',
        soak: `${waves.early.soakMin}m`,
      },
    ],
    remainder: { maxConcurrent: '10%' },
    maxConcurrentRolls: 200,
  });
}
