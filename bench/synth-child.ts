/**
 * One fleet synthesized in-process, the reconciler's way (validate, render,
 * fingerprint, synthesizeStack: one App per cluster), in its own process so
 * that peak RSS belongs to this fleet size alone. Prints one JSON line.
 *
 *   node -r ts-node/register/transpile-only bench/synth-child.ts <clustersDir> <workDir> <nag:true|false>
 */
import * as fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import { loadValidClusters } from '../lib/platform/files/load-clusters';
import { renderConfig } from '../lib/model/cloudconfig/render';
import { listTemplates } from '../lib/model/cloudconfig/templates';
import { inputsFingerprint } from '../lib/engines/reconciler/workflow/fingerprint';
import { synthesizeStack } from '../lib/engines/synthesis/synthesize';
import { DEFAULT_TEMPLATES_DIR, defaultTemplates } from '../lib/platform/files/template-directory';

export interface SynthChildResult {
  readonly clusters: number;
  /** Process start (node + ts-node + module load) to the end, ms. */
  readonly processWallMs: number;
  /** Load and validate every object, then render, fingerprint and synthesize each, ms. */
  readonly fleetWallMs: number;
  readonly loadMs: number;
  /** synthesizeStack per cluster, in fleet order (the first one is cold). */
  readonly synthMs: number[];
  readonly renderMs: number[];
  readonly maxRssBytes: number;
  /** V8 heap still in use after a full GC at the end: what the process keeps (a daemon would keep it too). */
  readonly heapAfterGcBytes: number;
  readonly templateBytes: number[];
}

function main(): void {
  const [clustersDir, workDir, nagArg] = process.argv.slice(2);
  const nag = nagArg !== 'false';
  const fleetStart = performance.now();
  const clusters = loadValidClusters(clustersDir, {
    templates: listTemplates(defaultTemplates()),
    relativeTo: clustersDir,
  });
  const loadMs = performance.now() - fleetStart;
  const synthMs: number[] = [];
  const renderMs: number[] = [];
  const templateBytes: number[] = [];
  for (const { cluster } of clusters) {
    const t0 = performance.now();
    const config = renderConfig(cluster, defaultTemplates());
    const fingerprint = inputsFingerprint(cluster, config.checksum);
    const t1 = performance.now();
    const out = synthesizeStack(cluster, { templatesDir: DEFAULT_TEMPLATES_DIR, workDir, fingerprint, nag, config });
    const t2 = performance.now();
    renderMs.push(t1 - t0);
    synthMs.push(t2 - t1);
    templateBytes.push(Buffer.byteLength(out.templateBody));
    // The reconciler keeps one assembly per cluster; removing it keeps disk use flat for 1,000 clusters without touching memory.
    fs.rmSync(`${workDir}/${cluster.metadata.name}`, { recursive: true, force: true });
  }
  const fleetWallMs = performance.now() - fleetStart;
  // Peak RSS alone cannot tell garbage V8 has not collected yet from memory that is held; a forced GC can.
  v8.setFlagsFromString('--expose-gc');
  (vm.runInNewContext('gc') as () => void)();
  const result: SynthChildResult = {
    clusters: clusters.length,
    processWallMs: performance.now(),
    fleetWallMs,
    loadMs,
    synthMs,
    renderMs,
    // resourceUsage().maxRSS is in kilobytes.
    maxRssBytes: process.resourceUsage().maxRSS * 1024,
    heapAfterGcBytes: process.memoryUsage().heapUsed,
    templateBytes,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

main();
