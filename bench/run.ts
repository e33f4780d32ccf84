/**
 * The benchmarks of issue 5. Not part of `npm test`.
 *
 *   npm run bench                          all of them, full sizes (tens of minutes on 2 cores)
 *   npm run bench -- --quick               smaller sizes and fewer repetitions (a smoke run, < 2 min)
 *   npm run bench -- synth unchanged       some of them
 *   npm run bench -- unchanged --cpu-prof  V8 CPU profiles of the measuring child processes (figures only printed)
 *   npm run bench -- --report              RESULTS.md again from results.json (after an edit of BEFORE-AFTER.md)
 *
 * Names: synth, synth-pool, cdk-examples, unchanged, kube-unchanged, latency, rollout, review, in-progress, fleet-rollout, pools, pools-edit, pools-rollout, channels-rollout, sim. Each prints its
 * tables; the run writes bench/results.json and (full runs only) bench/RESULTS.md.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runCdkExamples } from './cdk-examples';
import { runLatency } from './change-latency';
import { runFleetRollout } from './fleet-rollout';
import {
  BenchOptions,
  loadavg1,
  Results,
  RESULTS_JSON,
  RESULTS_MD,
  Section,
  writeMarkdown,
  writeResults,
} from './report';
import { runInProgress } from './in-progress';
import { runKubeWatchLatency } from './kube-watch-latency';
import { runPools } from './pools';
import { runPoolsEdit } from './pools-edit';
import { runPoolsRollout } from './pools-rollout';
import { runChannelsRollout } from './channels-rollout';
import { runReview } from './review';
import { runSim } from './sim';
import { runRollout } from './rollout';
import { fmt } from './stats';
import { runSynth } from './synth';
import { runSynthPool } from './synth-pool';
import { runUnchanged } from './unchanged';
import { runKubeUnchanged } from './kube-unchanged';

const BENCHMARKS: Record<string, (opts: BenchOptions) => Promise<Section>> = {
  synth: runSynth,
  'synth-pool': runSynthPool,
  'cdk-examples': runCdkExamples,
  unchanged: runUnchanged,
  'kube-unchanged': runKubeUnchanged,
  latency: runLatency,
  rollout: runRollout,
  review: runReview,
  'in-progress': runInProgress,
  'kube-watch-latency': runKubeWatchLatency,
  'fleet-rollout': runFleetRollout,
  pools: runPools,
  'pools-edit': runPoolsEdit,
  'pools-rollout': runPoolsRollout,
  'channels-rollout': runChannelsRollout,
  sim: runSim,
};

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args.includes('--report')) {
    const wrote =
      fs.existsSync(RESULTS_JSON) && writeMarkdown(JSON.parse(fs.readFileSync(RESULTS_JSON, 'utf8')) as Results);
    process.stdout.write(
      wrote
        ? `wrote ${path.relative(process.cwd(), RESULTS_MD)}\n`
        : 'no full run in bench/results.json yet: run `npm run bench` first\n',
    );
    return;
  }
  const quick = args.includes('--quick');
  const profile = args.includes('--cpu-prof');
  const names = args.filter((a) => !a.startsWith('--'));
  const unknown = names.filter((n) => !Object.hasOwn(BENCHMARKS, n));
  if (unknown.length) {
    process.stderr.write(`unknown benchmark(s) ${unknown.join(', ')}; known: ${Object.keys(BENCHMARKS).join(', ')}\n`);
    process.exit(2);
  }
  const selected = names.length ? names : Object.keys(BENCHMARKS);
  const profileDir = profile ? fs.mkdtempSync(path.join(os.tmpdir(), 'ws-bench-profiles-')) : undefined;
  if (loadavg1() > 0.5)
    process.stderr.write(
      `warning: load average ${loadavg1()} before the run; other work on this machine skews the figures\n`,
    );
  const sections: Section[] = [];
  for (const name of selected) {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), `ws-bench-${name}-`));
    const started = Date.now();
    process.stderr.write(`\n== ${name}${quick ? ' (quick)' : ''}\n`);
    try {
      const section = await BENCHMARKS[name]({ quick, tmp, profileDir });
      sections.push(section);
      print(section, (Date.now() - started) / 1000);
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  }
  if (profileDir) {
    // The profiler slows what it measures: these figures go nowhere but the terminal.
    process.stdout.write(
      `\nCPU profiles in ${profileDir} (results.json and RESULTS.md left as they are); summarize one with:\n  npx ts-node --transpile-only bench/profile.ts ${profileDir}/<file>.cpuprofile [--under synthesizeStack]\n`,
    );
    return;
  }
  const results = writeResults(sections);
  const wroteMd = !quick && writeMarkdown(results);
  process.stdout.write(
    `\nwrote bench/results.json${wroteMd ? ` and ${path.relative(process.cwd(), RESULTS_MD)}` : ' (quick run: RESULTS.md left as it is)'}\n`,
  );
}

function print(s: Section, seconds: number): void {
  const lines = [`\n## ${s.title} (${fmt(seconds)} s, load ${s.loadavg.join(' → ')})`, ''];
  for (const t of s.tables) lines.push(t, '');
  for (const f of s.figures.filter((x) => x.target)) {
    lines.push(
      `${f.pass ? 'PASS' : 'MISS'}  ${f.label}: ${fmt(f.value, f.unit)} (target ${f.target!.op === '<=' ? '≤' : '='} ${fmt(f.target!.value, f.unit)})`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
