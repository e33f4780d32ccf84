/**
 * The reconciler's synthesis through SynthPool (worker threads, recycled every 200 stacks): the 1,000-cluster
 * fleet wall time with 1 and 2 threads, and what the main thread keeps afterwards.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { daemonWorkDir, runChild } from './child';
import { writeFleet } from './generate-fleet';
import { BenchOptions, codeState, figure, loadavg1, Section } from './report';
import type { SynthPoolChildResult } from './synth-pool-child';
import { fmt, fmtSummary, mb, summarize, table } from './stats';

export async function runSynthPool(opts: BenchOptions): Promise<Section> {
  const load0 = loadavg1();
  const code = codeState();
  const n = opts.quick ? 20 : 1000;
  const dir = path.join(opts.tmp, `fleet-${n}`);
  writeFleet(dir, n);
  const runs: SynthPoolChildResult[] = [];
  for (const threads of [1, 2]) {
    const workDir = daemonWorkDir('pool');
    const r = runChild<SynthPoolChildResult>('synth-pool-child.ts', [dir, workDir, String(threads)], {
      profileDir: opts.profileDir,
    });
    fs.rmSync(workDir, { recursive: true, force: true });
    runs.push(r);
    process.stderr.write(`  pool ${threads} thread(s), ${n} clusters: ${fmt(r.fleetWallMs / 1000)} s\n`);
  }
  const two = runs[1];
  const perStack = runs.map((r) => summarize(r.synthMs));
  return {
    id: 'synth-pool',
    title: `Synth through the reconciler's thread pool: ${n} clusters`,
    mode: opts.quick ? 'quick' : 'full',
    date: new Date().toISOString(),
    loadavg: [load0, loadavg1()],
    code,
    figures: [
      figure(
        'synth-pool.per-stack-1',
        `synth per stack in a pool thread, as the daemon runs it (1 thread, ${n} clusters), median`,
        perStack[0].median,
        'ms',
        { op: '<=', value: 20 },
      ),
      figure(
        'synth-pool.per-stack-2',
        `synth per stack in a pool thread, as the daemon runs it (2 threads, ${n} clusters), median`,
        perStack[1].median,
        'ms',
      ),
      figure(
        'synth-pool.fleet-wall',
        `${n}-cluster fleet synth through the reconciler's pool (2 threads), wall`,
        two.fleetWallMs / 1000,
        's',
        opts.quick ? undefined : { op: '<=', value: 30 },
      ),
      figure(
        'synth-pool.rss',
        `${n}-cluster fleet synth through the reconciler's pool (2 threads), peak RSS`,
        mb(two.maxRssBytes),
        'MB',
        opts.quick ? undefined : { op: '<=', value: 2048 },
      ),
    ],
    tables: [
      table(
        [
          'threads',
          'clusters',
          'pool code',
          'threads started (recycled every 200)',
          'synth/stack min ms',
          'median ms',
          'max ms',
          'fleet wall s',
          'peak RSS MB',
          'main-thread heap after GC MB',
        ],
        runs.map((r, i) => [
          String(r.threads),
          String(r.clusters),
          r.fromBuild ? 'build/ (as shipped)' : 'ts-node (no current build)',
          String(r.threadsStarted),
          ...fmtSummary(perStack[i]),
          fmt(r.fleetWallMs / 1000),
          fmt(mb(r.maxRssBytes)),
          fmt(mb(r.heapAfterGcBytes)),
        ]),
      ),
    ],
    notes: [
      'The same generated fleet as the synth benchmark; nag on, CDK_VALIDATION unset (as shipped). Every cluster is queued at once, as a rollout with enough --concurrency would, and the pool runs as many syntheses as it has threads. Load and validation of the objects run on the main thread and are included.',
      "Synth per stack: SynthesizedStack.durationMs, measured inside the thread around synthesizeStack (no queueing), for every cluster; the configs are rendered on the main thread first, as the reconciler's render step does. With 2 threads on 2 cores the main thread competes for a core too. The assemblies go to the work dir the daemon uses (/dev/shm when the machine has it, see lib/adapters/cli/wiring.ts).",
      'Peak RSS is the whole process (main thread and workers). Recycled threads give their heap back: compare the main-thread heap here with heapAfterGc of the in-process synth above.',
    ],
    data: { runs },
  };
}
