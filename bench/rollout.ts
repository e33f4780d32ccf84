/**
 * Rollout: every cluster's node config changed at once; the controller rolls them all (passes until settled, as
 * `reconcile --once` and the daemon's requeues do), against the fake CloudFormation where each stack operation takes
 * 5 simulated minutes, at concurrency 1, 2, 4, 8 and 16: the simulated rollout time against its ideal
 * (ceil(clusters / concurrency) × 5 minutes), and the real CPU time it costs.
 */
import * as path from 'node:path';
import { CHANGES, editCluster } from './edit';
import { writeFleet } from './generate-fleet';
import { BenchOptions, codeState, figure, loadavg1, Section } from './report';
import { fmt, table } from './stats';
import { World } from './world';
import { complete } from '../test/fakes/fake-cloudformation';
import { workerStackName } from '../lib/core/naming';

const ACCOUNT = '111111111111';
const MAX_PODS = CHANGES.find((c) => c.label.startsWith('maxPods'))!;

interface Level {
  readonly concurrency: number;
  readonly wallMs: number;
  /** Simulated time from the edit to the last stack recorded. */
  readonly simulatedMs: number;
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
  // A rolling update of a worker group: 5 minutes (60 polls of the fake's 5 s).
  const stackPolls = 60;
  const clustersDir = path.join(opts.tmp, 'clusters');
  const names = writeFleet(clustersDir, n, { accounts: [ACCOUNT] });
  const world = new World({ clustersDir, account: ACCOUNT });
  const settleStart = performance.now();
  const settle = await world.settle(8);
  const settleMs = performance.now() - settleStart;
  if ([...settle.values()].some((o) => o.result !== 'applied'))
    throw new Error('rollout: the settling passes did not apply every cluster');

  const results: Level[] = [];
  for (const [i, concurrency] of levels.entries()) {
    // A new maxPods for every cluster: a new rendered config and checksum, so every stack rolls.
    for (const name of names) editCluster(clustersDir, name, (raw) => MAX_PODS.apply(raw, i));
    world.resetCounters();
    for (const f of world.fakes.values())
      for (const name of names) f.setDefault(workerStackName(name), complete(stackPolls));
    const simStart = world.clock.ms;
    const start = performance.now();
    const outcomes = await world.settle(concurrency);
    const wallMs = performance.now() - start;
    const simulatedMs = world.clock.ms - simStart;
    const applied = [...outcomes.values()].filter((o) => o.result === 'applied').length;
    if (applied !== n) throw new Error(`rollout at concurrency ${concurrency}: ${applied} of ${n} applied`);
    const cpuMs =
      ['validate', 'render', 'synthesize'].reduce((s, k) => s + (world.taskMs.get(k) ?? 0), 0) + world.storeListMs;
    results.push({
      concurrency,
      wallMs,
      simulatedMs,
      applied,
      syntheses: world.syntheses,
      cpuMs,
      clusterMs: [...world.spans.values()].map((s) => s.end - s.start),
    });
    process.stderr.write(
      `  rollout ${n} clusters at concurrency ${concurrency}: ${fmt(simulatedMs / 60_000)} simulated minutes, ${fmt(wallMs / 1000)} s real\n`,
    );
  }

  const stackMs = stackPolls * 5000;
  const rows = results.map((r) => [
    String(r.concurrency),
    fmt(r.simulatedMs / 60_000),
    fmt((Math.ceil(n / r.concurrency) * stackMs) / 60_000),
    fmt(r.wallMs / 1000),
    fmt(r.cpuMs / 1000),
    String(r.syntheses),
  ]);
  return {
    id: 'rollout',
    title: `Rollout: ${n} clusters, every config changed, 5-minute stack operations on the fake CloudFormation's clock`,
    mode: opts.quick ? 'quick' : 'full',
    date: new Date().toISOString(),
    loadavg: [load0, loadavg1()],
    code,
    figures: results.map((r) =>
      figure(
        `rollout-c${r.concurrency}`,
        `rollout of ${n} clusters at concurrency ${r.concurrency}, simulated`,
        r.simulatedMs / 60_000,
        'min',
      ),
    ),
    tables: [
      table(
        [
          'concurrency',
          'simulated min',
          'ideal min',
          'real s',
          'CPU tasks s (list+validate+render+synth)',
          'syntheses',
        ],
        rows,
      ),
    ],
    notes: [
      `Each stack operation takes ${stackPolls} polls of 5 s (5 minutes) on the fake's clock; the controller requeues instead of waiting, so a stack in progress costs a listing per poll, and --concurrency bounds the stacks in progress. "ideal" = ceil(${n} / concurrency) × 5 minutes.`,
      'real s is the CPU work (validate, render, synthesize with cdk-nag, the passes) on the one event loop: simulated waiting costs no real time.',
      `Settled first by passes at concurrency 8 (${fmt(settleMs / 1000)} s real); each level then changes maxPods of every cluster (a new checksum, so every stack rolls).`,
    ],
    data: { clusters: n, stackPolls, settleMs, levels: results },
  };
}
