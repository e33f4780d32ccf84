/**
 * Rollout pass: every cluster's node config changed at once; one Controller
 * pass rolls them all, against the fake CloudFormation with stack operations
 * that take (scaled-down) real time, at concurrency 1, 2, 4, 8 and 16.
 */
import * as path from 'node:path';
import { CHANGES, editCluster } from './edit';
import { writeFleet } from './generate-fleet';
import { BenchOptions, codeState, figure, loadavg1, Section } from './report';
import { fmt, fmtSummary, summarize, table } from './stats';
import { Delays, World } from './world';

const ACCOUNT = '111111111111';
const MAX_PODS = CHANGES.find((c) => c.label.startsWith('maxPods'))!;

interface Level {
  readonly concurrency: number;
  readonly wallMs: number;
  readonly applied: number;
  readonly syntheses: number;
  /** Summed time of the synchronous CPU tasks (they serialize on the one event loop). */
  readonly cpuMs: number;
  readonly clusterMs: number[];
}

export async function runRollout(opts: BenchOptions): Promise<Section> {
  const load0 = loadavg1();
  const code = codeState();
  const n = opts.quick ? 10 : 100;
  const levels = opts.quick ? [1, 4] : [1, 2, 4, 8, 16];
  // 1:600 scale: creating a change set ~10 s, a rolling update of a worker group ~5 min.
  const delays: Delays = { changeSetMs: 17, stackMs: 500 };
  const clustersDir = path.join(opts.tmp, 'clusters');
  const names = writeFleet(clustersDir, n, { accounts: [ACCOUNT] });
  const world = new World({ clustersDir, account: ACCOUNT });
  const settleStart = performance.now();
  const settle = await world.controller(8).runPass();
  const settleMs = performance.now() - settleStart;
  if ([...settle.outcomes.values()].some((o) => o.result !== 'applied')) throw new Error('rollout: the settling pass did not apply every cluster');

  const results: Level[] = [];
  for (const [i, concurrency] of levels.entries()) {
    // A new maxPods for every cluster: a new rendered config and checksum, so every stack rolls.
    for (const name of names) editCluster(clustersDir, name, (raw) => MAX_PODS.apply(raw, i));
    world.resetCounters();
    world.delays = delays;
    const start = performance.now();
    const { outcomes } = await world.controller(concurrency).runPass();
    const wallMs = performance.now() - start;
    world.delays = undefined;
    const applied = [...outcomes.values()].filter((o) => o.result === 'applied').length;
    if (applied !== n) throw new Error(`rollout at concurrency ${concurrency}: ${applied} of ${n} applied`);
    const cpuMs = ['validate', 'render', 'synthesize'].reduce((s, k) => s + (world.taskMs.get(k) ?? 0), 0) + world.storeListMs;
    results.push({ concurrency, wallMs, applied, syntheses: world.taskRuns.get('synthesize') ?? 0, cpuMs, clusterMs: [...world.spans.values()].map((s) => s.end - s.start) });
    process.stderr.write(`  rollout ${n} clusters at concurrency ${concurrency}: ${fmt(wallMs / 1000)} s\n`);
  }

  const base = results[0].wallMs;
  const waitMs = n * (delays.changeSetMs + delays.stackMs);
  const rows = results.map((r) => [
    String(r.concurrency),
    fmt(r.wallMs / 1000),
    fmt(base / r.wallMs),
    fmt(r.cpuMs / 1000),
    fmt(waitMs / r.concurrency / 1000),
    ...fmtSummary(summarize(r.clusterMs)),
  ]);
  return {
    id: 'rollout',
    title: `Rollout pass: ${n} clusters, every config changed, fake CloudFormation with scaled durations`,
    mode: opts.quick ? 'quick' : 'full',
    date: new Date().toISOString(),
    loadavg: [load0, loadavg1()],
    code,
    figures: results.map((r) => figure(`rollout-c${r.concurrency}`, `rollout of ${n} clusters at concurrency ${r.concurrency}, wall`, r.wallMs / 1000, 's')),
    tables: [table(['concurrency', 'wall s', 'speed-up vs 1', 'CPU tasks s (list+validate+render+synth)', 'waiting floor s', 'per cluster min ms', 'median ms', 'max ms'], rows)],
    notes: [
      `Durations scaled 1:600: each change set takes ${delays.changeSetMs} ms to create and each stack update ${delays.stackMs} ms (real sleeps around the fake's waitForChangeSet and waitForStack; the fake's own clock makes waits instant).`,
      `"waiting floor" = ${n} × (change set + stack) / concurrency: the wall time if the CPU work were free. The CPU tasks run on the one Node event loop, so they cannot overlap each other; wall ≥ max(CPU tasks, waiting floor).`,
      `Settled first by a real pass at concurrency 8 (${fmt(settleMs / 1000)} s); each level then changes maxPods of every cluster (a new checksum, so every stack rolls). cdk-nag on, as shipped.`,
    ],
    data: { clusters: n, delays, settleMs, levels: results },
  };
}
