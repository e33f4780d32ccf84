/**
 * What cdk-nag costs per synthesis, measured so that this machine's drift cancels out: every cluster is
 * synthesized twice in a row in the same process, once with nag and once without, in alternating order, and the
 * figure is the median of the per-cluster differences. (Separate processes for "on" and "off" differed by more
 * than the nag share itself between runs of the same code.) Prints one JSON line.
 *
 *   node -r ts-node/register/transpile-only bench/synth-paired-child.ts <clustersDir> <workDir>
 */
import * as fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { loadValidClusters } from '../lib/platform/files/load-clusters';
import { renderConfig } from '../lib/model/cloudconfig/render';
import { listTemplates } from '../lib/model/cloudconfig/templates';
import { inputsFingerprint } from '../lib/engines/reconciler/workflow/fingerprint';
import { synthesizeStack } from '../lib/engines/synthesis/synthesize';
import { DEFAULT_TEMPLATES_DIR, defaultTemplates } from '../lib/platform/files/template-directory';

export interface SynthPairedResult {
  readonly clusters: number;
  /** synthesizeStack with nag, per cluster in fleet order (the first one is cold). */
  readonly nagOnMs: number[];
  /** The same clusters without nag. */
  readonly nagOffMs: number[];
}

function main(): void {
  const [clustersDir, workDir] = process.argv.slice(2);
  const clusters = loadValidClusters(clustersDir, {
    templates: listTemplates(defaultTemplates()),
    relativeTo: clustersDir,
  });
  const nagOnMs: number[] = [];
  const nagOffMs: number[] = [];
  clusters.forEach(({ cluster }, i) => {
    const config = renderConfig(cluster, defaultTemplates());
    const fingerprint = inputsFingerprint(cluster, config.checksum);
    // Alternating which goes first, so neither side always meets the other's garbage.
    for (const nag of i % 2 ? [true, false] : [false, true]) {
      const t0 = performance.now();
      synthesizeStack(cluster, { templatesDir: DEFAULT_TEMPLATES_DIR, workDir, fingerprint, nag, config });
      (nag ? nagOnMs : nagOffMs).push(performance.now() - t0);
      fs.rmSync(`${workDir}/${cluster.metadata.name}`, { recursive: true, force: true });
    }
  });
  const result: SynthPairedResult = { clusters: clusters.length, nagOnMs, nagOffMs };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

main();
