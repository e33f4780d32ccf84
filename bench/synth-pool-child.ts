/**
 * One fleet synthesized through the reconciler's SynthPool (worker threads), in its own process.
 * Prints one JSON line.
 *
 *   node -r ts-node/register/transpile-only bench/synth-pool-child.ts <clustersDir> <workDir> <threads>
 */
import { performance } from 'node:perf_hooks';
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import { loadValidClusters } from '../lib/platform/files/load-clusters';
import { renderConfig } from '../lib/model/cloudconfig/render';
import { listTemplates } from '../lib/model/cloudconfig/templates';
import { buildIsCurrent } from './cdk-cli';
import type { SynthPool as SynthPoolType } from '../lib/engines/synthesis/synth-pool';
import { DEFAULT_TEMPLATES_DIR, defaultTemplates } from '../lib/platform/files/template-directory';

// The product runs the pool from the precompiled build (its threads start without ts-node); so does this benchmark
// when the build is current, and says which it measured.
const fromBuild = buildIsCurrent();
// eslint-disable-next-line @typescript-eslint/no-require-imports -- which module (build/ or lib/) is known at run time only
const { SynthPool } = require(
  fromBuild ? '../build/lib/engines/synthesis/synth-pool' : '../lib/engines/synthesis/synth-pool',
) as { SynthPool: typeof SynthPoolType };

export interface SynthPoolChildResult {
  readonly clusters: number;
  readonly threads: number;
  readonly threadsStarted: number;
  /** The pool ran from build/ (threads without ts-node), as the shipped CLI does. */
  readonly fromBuild: boolean;
  readonly fleetWallMs: number;
  readonly maxRssBytes: number;
  readonly heapAfterGcBytes: number;
  /** Each synthesis in its thread (SynthesizedStack.durationMs: no queueing), in completion order per thread. */
  readonly synthMs: number[];
}

async function main(): Promise<void> {
  const [clustersDir, workDir, threadsArg] = process.argv.slice(2);
  const threads = Number(threadsArg);
  const start = performance.now();
  const clusters = loadValidClusters(clustersDir, {
    templates: listTemplates(defaultTemplates()),
    relativeTo: clustersDir,
  });
  const pool = new SynthPool({ size: threads });
  // As a rollout with enough concurrency: every cluster queued at once, the pool decides the parallelism.
  // Rendered on the main thread, as the reconciler's render step does, and handed to the thread with the cluster.
  const done = await Promise.all(
    clusters.map(({ cluster }, i) =>
      pool.synthesize(cluster, {
        templatesDir: DEFAULT_TEMPLATES_DIR,
        workDir,
        fingerprint: String(i).padStart(64, '0'),
        nag: true,
        config: renderConfig(cluster, defaultTemplates()),
      }),
    ),
  );
  const fleetWallMs = performance.now() - start;
  await pool.close();
  v8.setFlagsFromString('--expose-gc');
  (vm.runInNewContext('gc') as () => void)();
  const result: SynthPoolChildResult = {
    clusters: clusters.length,
    threads,
    threadsStarted: pool.started,
    fromBuild,
    fleetWallMs,
    maxRssBytes: process.resourceUsage().maxRSS * 1024,
    heapAfterGcBytes: process.memoryUsage().heapUsed,
    synthMs: done.map((d) => d.durationMs),
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

void main();
