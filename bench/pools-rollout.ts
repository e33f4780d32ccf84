/**
 * Node pools (issue 23, item 9): a fleet config change across every pool, in waves. bench/fleet-rollout.ts's
 * simulation (test/fakes/fleet-sim.ts: the daemon's scheduling on the fake clock, ten-minute rolling updates, 100 ms
 * per API call, token-bucket quotas per API) with every cluster of 4 pools (default in the shared stack, spot, batch
 * and gpu in their own stacks) and a synthesis stand-in that makes one template per stack (test/sim/sim-synth.ts).
 * A change to the shared config template changes every pool's checksum: every stack rolls, each cluster at most
 * spec.rollout.maxConcurrentPools (default 1) pools at a time, clusters by the waves of a WorkerRolloutPolicy.
 *
 * 1,000 clusters × 4 pools (issue 23 item 9) run every reconcile of every stack of the daemon in one process: the real
 * Controller, workflow, rollout gate and file store, hundreds of thousands of reconciles in 12 simulated hours. What
 * made that fit a bench run is no model of them but less work for the same decisions, in lib/ (so the daemon gains it
 * too): the file store finds one object without listing the directory and parses a status file once per text; the
 * gate looks at the fleet once per decision and its wave placement is kept while no member's labels change; a
 * pool's inputs fingerprint, node key and config digests are memoized on the validated cluster and rendered config
 * they are pure functions of. Here only the harness's directory is in memory (/dev/shm, when there is one): the
 * file store's fsyncs are not what this measures. The figures at 40 and 200 clusters were the same, to the request,
 * before and after (simulated time, requests per API, reconciles).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { renderConfig } from '../lib/model/cloudconfig/render';
import { poolNamed, primaryPool, stackUnits } from '../lib/model/cluster/pools/pools';
import { assemblyDir } from '../lib/engines/synthesis/assembly-dir';
import { Synthesizer, TASK } from '../lib/engines/reconciler/workflow/context';
import { after } from '../lib/engines/reconciler/workflow/task';
import { poolStackName, workerStackName } from '../lib/core/naming';
import { FleetSim, FleetSimOptions, ROLL_POLLS } from '../test/fakes/fleet-sim';
import { CfnApi, complete } from '../test/fakes/fake-cloudformation';
import { simSynthesizer } from '../test/sim/sim-synth';
import { Json } from '../test/helpers/json';
import { fleetOf, QUOTAS, REGIONS, writeFleetPolicy } from './fleet-rollout';
import { DEFAULT_CLOUDFORMATION_RATES } from '../lib/platform/aws/request-rate';
import { BenchOptions, codeState, figure, Figure, loadavg1, Section } from './report';
import { fmt, table } from './stats';
import { templateDirectory } from '../lib/platform/files/template-directory';

const MIN = 60_000;
const ROLL_MS = ROLL_POLLS * 5000;
/** The pools beside default, each in its own stack. */
const OWN = ['spot', 'batch', 'gpu'];
const POOLS = 1 + OWN.length;

/**
 * The simulator's synthesis (one template per stack, its pool's checksum), with the pool's node config written where
 * the harness's publisher reads assets (the simulator's own publisher only remembers keys).
 */
function poolsSynthesizer(workDir: string): Synthesizer {
  return async (cluster, opts) => {
    const out = await simSynthesizer(cluster, opts);
    const unit = stackUnits(cluster).find((u) => u.stackName === out.stackName);
    const pool = poolNamed(cluster.spec, unit?.pool ?? primaryPool(cluster.spec).name) ?? primaryPool(cluster.spec);
    const config = opts.config ?? renderConfig(cluster, templateDirectory(opts.templatesDir), pool.name);
    const dir = assemblyDir(workDir, `${cluster.metadata.name}-${pool.name}`);
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `${config.checksum}.${config.extension}`);
    fs.writeFileSync(file, config.bytes);
    return { ...out, assets: out.assets.map((a) => ({ ...a, sourcePath: file })) };
  };
}

/** The example's pool as default, and spot, batch (labels) and gpu (a NoSchedule taint) in stacks of their own. */
function pooled(raw: Json): void {
  const pool: Json = raw.spec.pool;
  delete raw.spec.pool;
  raw.spec.pools = [
    { ...pool, name: 'default' },
    { ...pool, name: 'spot', labels: { 'node.kubernetes.io/capacity': 'spot' } },
    { ...pool, name: 'batch', labels: { 'node.kubernetes.io/pool': 'batch' } },
    { ...pool, name: 'gpu', taints: [{ key: 'nvidia.com/gpu', value: 'true', effect: 'NoSchedule' }] },
  ];
}

/**
 * The change that rolls every pool, and what is special about measuring it: the shared config template (the
 * pools-rollout section), or a new release of the image channel every pool names (channels-rollout).
 */
export interface PoolsChange {
  readonly id: 'pools-rollout' | 'channels-rollout';
  /** What rolls, in the section's title and figures. */
  readonly what: string;
  readonly sim?: Pick<FleetSimOptions, 'channels'>;
  /** Each pool of each cluster, before the fleet is created. @default unchanged */
  readonly pool?: (pool: Json) => void;
  /** Before the fleet is created (the sim's directory exists). @default nothing */
  readonly prepare?: (sim: FleetSim) => void;
  /** Makes the change. */
  readonly make: (sim: FleetSim) => void;
  /** When the daemon could first know of it (simulated ms): what the ideal is counted from. @default when made */
  readonly knownAt?: (sim: FleetSim, madeAt: number) => number;
  /** Figures, rows and notes of its own. @default none */
  readonly extra?: (sim: FleetSim, label: string) => { figures: Figure[]; rows: string[][]; notes: string[] };
}

export function runPoolsRollout(opts: BenchOptions): Promise<Section> {
  return runPoolsChange(opts, {
    id: 'pools-rollout',
    what: 'a shared-template change',
    make: (sim) => sim.changeTemplate('# kubelet tuning (bench)'),
  });
}

export async function runPoolsChange(opts: BenchOptions, change: PoolsChange): Promise<Section> {
  const load0 = loadavg1();
  const code = codeState();
  // POOLS_ROLLOUT_CLUSTERS=400 to profile a smaller fleet (bench/profile.ts); RESULTS.md is of the full 1,000.
  const n = Number(process.env.POOLS_ROLLOUT_CLUSTERS) || (opts.quick ? 40 : 1000);
  const { canaries, early, rest, names, ring, waves } = fleetOf(n);
  // A cluster's roll is its pools' rolls, maxConcurrentPools (1) at a time: POOLS rolls back to back.
  const clusterRollMs = POOLS * ROLL_MS;
  const rounds = 1 + Math.ceil(early / waves.early.max) + Math.ceil(rest / waves.rest.max);
  const idealMs = clusterRollMs * rounds + (waves.canary.soakMin + waves.early.soakMin) * MIN;

  const sim = new FleetSim(names, ring, {
    regions: REGIONS,
    quotas: QUOTAS,
    latencyMs: 100,
    pollMs: 30_000,
    concurrency: 200 * POOLS,
    // Objects and status files in memory where there is a tmpfs: the file store's fsyncs are no part of what this
    // measures (simulated time), and on a disk they were a tenth of the wall time.
    tmpDir: fs.existsSync('/dev/shm') ? '/dev/shm' : undefined,
    ...change.sim,
  });
  try {
    const stacks = new Map<string, string[]>();
    change.prepare?.(sim);
    for (const x of names) {
      sim.h.edit(x, (raw) => {
        pooled(raw);
        for (const p of raw.spec.pools as Json[]) change.pool?.(p);
      });
      const own = OWN.map((p) => poolStackName(x, p));
      for (const s of own) sim.cfn(x).setDefault(s, complete(ROLL_POLLS));
      stacks.set(x, [workerStackName(x), ...own]);
    }
    // A new process with the pools' synthesis, and every stack's execute noted (sim.starts notes the cluster only).
    const starts: { name: string; stack: string; at: number }[] = [];
    /** The stacks of those starts (kept as they come: the stop condition looks at it after every reconcile). */
    const rolled = new Set<string>();
    const deps = sim.h.deps.bind(sim.h);
    const workDir = path.join(sim.h.dir, 'pools-work');
    sim.h.deps = (o) => deps({ ...o, synthesizer: poolsSynthesizer(workDir) });
    sim.hooks = [
      after(TASK.execute, (ctx) => {
        starts.push({ name: ctx.record.name, stack: ctx.unit.stackName, at: sim.now });
        rolled.add(ctx.unit.stackName);
      }),
    ];
    sim.restart();
    writeFleetPolicy(sim, waves);
    /** Every stack of every cluster there and none in progress (no status read: the cheap half of settled). */
    const quiet = () =>
      names.every((x) =>
        (stacks.get(x) ?? []).every((st) => {
          const live = sim.cfn(x).peek(st);
          return live && !live.status.endsWith('IN_PROGRESS');
        }),
      );
    /** Every stack of every cluster live at the checksum its unit wants, none in progress. */
    const settled = () =>
      quiet() &&
      names.every((x) => {
        if (!sim.outcomes.has(x)) return false; // not reconciled yet: no status recorded
        const s = sim.h.status(x);
        const want = new Map([
          [workerStackName(x), s.desiredChecksum],
          ...(s.pools ?? []).map((p) => [p.stackName, p.desiredChecksum] as const),
        ]);
        return (stacks.get(x) ?? []).every((st) => {
          const live = sim.cfn(x).peek(st);
          return (
            live && want.get(st) && live.outputs.ConfigChecksum === want.get(st) && !live.status.endsWith('IN_PROGRESS')
          );
        });
      });
    const wallCreate = performance.now();
    await sim.runUntil(sim.now + 24 * 60 * MIN, settled);
    if (!settled()) {
      // The first cluster that did not settle, and what its conditions say: why the bench stopped.
      const x = names.find(
        (c) =>
          !sim.outcomes.has(c) || sim.h.status(c).conditions.some((k) => k.type === 'Ready' && k.status !== 'True'),
      );
      const conditions = x && sim.outcomes.has(x) ? JSON.stringify(sim.h.status(x).conditions) : 'never reconciled';
      throw new Error(
        `${change.id}: the ${n * POOLS} stacks did not settle within 24 simulated hours (${x}: ${conditions})`,
      );
    }
    const createMs = performance.now() - wallCreate;
    process.stderr.write(`  ${change.id}: ${n * POOLS} stacks created in ${fmt(createMs / 1000)} s of wall time\n`);

    // The shared-template change: every pool's checksum changes.
    for (const f of sim.fakes.values()) {
      f.resetCalls();
      f.apiRequests.clear();
      f.throttledCalls.clear();
    }
    starts.length = 0;
    rolled.clear();
    const waited0 = waitedPerApi(sim);
    const reconciles0 = sim.reconciles;
    const madeAt = sim.now;
    const wall0 = performance.now();
    change.make(sim);
    const rolledStacks = () => rolled.size;
    // A line per simulated hour: a long run says how far it is.
    let told = madeAt;
    const progress = () => {
      if (sim.now - told < 60 * MIN) return;
      told = sim.now;
      process.stderr.write(
        `  ${change.id}: ${fmt((sim.now - madeAt) / MIN)} simulated min, ${rolledStacks()} of ${n * POOLS} stacks rolled, ${fmt((performance.now() - wall0) / 1000)} s of wall time\n`,
      );
    };
    let t0 = madeAt;
    await sim.runUntil(madeAt + 72 * 60 * MIN, () => {
      progress();
      return rolledStacks() === n * POOLS && settled();
    });
    const wallMs = performance.now() - wall0;
    t0 = change.knownAt?.(sim, madeAt) ?? madeAt;
    if (rolledStacks() !== n * POOLS)
      throw new Error(`${change.id}: ${rolledStacks()} of ${n * POOLS} stacks rolled within 72 simulated hours`);
    const lastStart = Math.max(...starts.map((s) => s.at));
    const simulatedMs = lastStart + ROLL_MS - t0;
    // At most maxConcurrentPools (1) stacks of a cluster in one roll at once: starts of one cluster a roll apart.
    let overlaps = 0;
    for (const x of names) {
      const at = starts
        .filter((s) => s.name === x)
        .map((s) => s.at)
        .sort((a, b) => a - b);
      for (let i = 1; i < at.length; i++) if (at[i] - at[i - 1] < ROLL_MS) overlaps++;
    }
    const apis = new Map<CfnApi, number>();
    const throttled = new Map<CfnApi, number>();
    for (const f of sim.fakes.values()) {
      for (const [k, v] of f.apiRequests) apis.set(k, (apis.get(k) ?? 0) + v);
      for (const [k, v] of f.throttledCalls) throttled.set(k, (throttled.get(k) ?? 0) + v);
    }
    // Requests the daemon's limiter held back for a token during the roll, and for how long in all (per API).
    const waited = waitedPerApi(sim, waited0);
    const totalCalls = [...apis.values()].reduce((a, b) => a + b, 0);
    const totalThrottled = [...throttled.values()].reduce((a, b) => a + b, 0);
    const rows = (['canary', 'early', 'main'] as const).map((w) => {
      const ts = starts.filter((s) => s.name.startsWith(w)).map((s) => (s.at - t0) / MIN);
      return [
        w === 'main' ? 'remainder' : w,
        String(ts.length / POOLS),
        String(ts.length),
        fmt(Math.min(...ts)),
        fmt(Math.max(...ts) + ROLL_MS / MIN),
      ];
    });
    const label = `${fmt(n)} clusters × ${POOLS} pools`;
    process.stderr.write(
      `  ${change.id}: ${n * POOLS} stacks rolled in ${fmt(simulatedMs / MIN)} simulated minutes (ideal ${fmt(idealMs / MIN)}), ${fmt(totalThrottled)} throttled, ${fmt(wallMs / 1000)} s of wall time\n`,
    );
    const extra = change.extra?.(sim, label) ?? { figures: [], rows: [], notes: [] };
    return {
      id: change.id,
      title: `Node pools: ${change.what} across every pool of ${label} in ${REGIONS.length} regions, 3 waves, fake CloudFormation with API quotas`,
      mode: opts.quick ? 'quick' : 'full',
      date: new Date().toISOString(),
      loadavg: [load0, loadavg1()],
      code,
      figures: [
        figure(
          `${change.id}-simulated`,
          `${change.id.replace('-', ' ')} of ${label}, simulated time over the policy's ideal`,
          simulatedMs / idealMs,
          '×',
          { op: '<=', value: 1.15 },
        ),
        figure(
          `${change.id}-throttled`,
          `${change.id.replace('-', ' ')} of ${label}, throttled CloudFormation calls`,
          totalThrottled,
          '',
          {
            op: '==',
            value: 0,
          },
        ),
        figure(
          `${change.id}-overlaps`,
          `${change.id.replace('-', ' ')} of ${label}, pool rolls of one cluster overlapping (maxConcurrentPools 1)`,
          overlaps,
          '',
          { op: '==', value: 0 },
        ),
        figure(
          `${change.id}-calls`,
          `${change.id.replace('-', ' ')} of ${label}, CloudFormation requests per pool roll`,
          totalCalls / (n * POOLS),
          '',
        ),
        ...extra.figures,
      ],
      tables: [
        table(
          ['figure', 'value'],
          [
            ['simulated time, change to last pool roll done', `${fmt(simulatedMs / MIN)} min`],
            [
              `the policy's ideal (${rounds} rounds of cluster rolls of ${POOLS} pool rolls back to back, soaks exact)`,
              `${fmt(idealMs / MIN)} min`,
            ],
            [
              'CloudFormation requests (listing pages counted) / per pool roll',
              `${fmt(totalCalls)} / ${fmt(totalCalls / (n * POOLS))}`,
            ],
            ['throttled requests', fmt(totalThrottled)],
            ['reconciles', fmt(sim.reconciles - reconciles0)],
            ['wall time of the simulation', `${fmt(wallMs / 1000)} s`],
            [
              'wall time of the fleet’s creation before it (every stack created by the daemon)',
              `${fmt(createMs / 1000)} s`,
            ],
            ...extra.rows,
          ],
        ),
        table(['wave', 'clusters', 'pool rolls', 'first roll started (min)', 'last roll done (min)'], rows),
        table(
          ['API', 'requests', 'throttled', 'paced by the daemon (waited for a token)', 'their wait in all s'],
          [...apis]
            .sort()
            .map(([api, count]) => [
              api,
              fmt(count),
              fmt(throttled.get(api) ?? 0),
              fmt(waited.get(api)?.requests ?? 0),
              fmt((waited.get(api)?.ms ?? 0) / 1000),
            ]),
        ),
      ],
      notes: [
        ...extra.notes,
        `Policy as bench/fleet-rollout.ts: canary = ${canaries} clusters (one per region), soak ${waves.canary.soakMin}m; early = ${early} (10 %), maxConcurrent 25 % (${waves.early.max}), soak ${waves.early.soakMin}m; remainder = ${rest}, maxConcurrent 10 % (${waves.rest.max}); maxConcurrentRolls 200. Each cluster has ${POOLS} pools (default in the shared stack; ${OWN.join(', ')} in their own), spec.rollout.maxConcurrentPools 1 (the default): a cluster's roll is ${POOLS} ten-minute pool rolls one after the other, so the ideal is ${rounds} × ${fmt(clusterRollMs / MIN)} min + the soaks.`,
        'Fake CloudFormation per region, quotas and latency as bench/fleet-rollout.ts (conservative assumptions: AWS publishes no per-API CloudFormation rates). Synthesis is the simulator’s stand-in (one template per stack with its pool’s checksum), since this measures the rollout, not CDK.',
        `Size: ${label} (${fmt(n * POOLS)} stacks). The simulation runs every reconcile of every stack in one process (the daemon's Controller, workflow, rollout gate and file store; the file store's directory on /dev/shm); its wall time is in the first table.`,
        ...(totalThrottled
          ? [
              `Throttled: ${fmt(totalThrottled)} requests, ${[...throttled]
                .filter(([, v]) => v > 0)
                .map(([api, v]) => `${api} ${fmt(v)}`)
                .join(', ')}.`,
            ]
          : []),
        `The daemon paces its own requests (lib/platform/aws/request-rate.ts, as shipped: ${DEFAULT_CLOUDFORMATION_RATES.read.ratePerSecond} reads/s burst ${DEFAULT_CLOUDFORMATION_RATES.read.burst}, ${DEFAULT_CLOUDFORMATION_RATES.write.ratePerSecond} writes/s burst ${DEFAULT_CLOUDFORMATION_RATES.write.burst}, per API and region; a new limiter per process): every request takes a token before it is sent, each page of a listing too (a region's full listing is ${fmt(Math.ceil((n * POOLS) / REGIONS.length / 100))} DescribeStacks pages with ${fmt((n * POOLS) / REGIONS.length)} stacks per region). Before it (run of 28a534d), 496 of 58,690 DescribeStacks were throttled: a listing's pages beside the describes after the clusters' own writes outran the bucket, and a refused listing made each cluster of the region describe its stack alone.`,
      ],
      data: {
        n,
        pools: POOLS,
        regions: REGIONS,
        simulatedMs,
        idealMs,
        totalCalls,
        totalThrottled,
        paced: [...waited.values()].reduce((a, b) => a + b.requests, 0),
        overlaps,
        wallMs,
        createMs,
      },
    };
  } finally {
    sim.cleanup();
  }
}

/** Requests the daemon's limiters made wait, and their wait in ms, per API (less what `since` had). */
function waitedPerApi(
  sim: FleetSim,
  since: ReadonlyMap<string, { requests: number; ms: number }> = new Map(),
): Map<string, { requests: number; ms: number }> {
  const out = new Map<string, { requests: number; ms: number }>();
  for (const l of sim.limiters.values())
    for (const [api, w] of l.waited) {
      const o = out.get(api) ?? { requests: 0, ms: 0 };
      out.set(api, { requests: o.requests + w.requests, ms: o.ms + w.ms });
    }
  for (const [api, w] of since) {
    const o = out.get(api) ?? { requests: 0, ms: 0 };
    out.set(api, { requests: o.requests - w.requests, ms: o.ms - w.ms });
  }
  return out;
}
