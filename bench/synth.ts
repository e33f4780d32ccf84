/**
 * Synth benchmark: generated fleets of 1, 10, 100 and 1,000 clusters,
 * synthesized in-process the reconciler's way (one child process per fleet
 * size and variant, so peak RSS is per size), and the same fleets through
 * `npx cdk synth` as a CDK user runs it today, for the baseline ratio.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { buildIsCurrent, cdkSynth, CdkRun } from './cdk-cli';
import { daemonWorkDir, runChild } from './child';
import { writeFleet } from './generate-fleet';
import { BenchOptions, codeState, figure, Figure, loadavg1, Section } from './report';
import type { SynthChildResult } from './synth-child';
import type { SynthPairedResult } from './synth-paired-child';
import { fmt, fmtSummary, mb, summarize, table } from './stats';

interface Variant {
  readonly id: string;
  readonly label: string;
  readonly nag: boolean;
  /** CDK_VALIDATION, unset when undefined. */
  readonly validation?: 'true' | 'false';
}

const VARIANTS: readonly Variant[] = [
  { id: 'product', label: 'shipped settings: nag on, CDK_VALIDATION unset', nag: true },
  { id: 'nag-off', label: 'nag off, CDK_VALIDATION unset', nag: false },
  { id: 'validation-on', label: 'nag on, CDK_VALIDATION=true', nag: true, validation: 'true' },
];

function synthChild(dir: string, workDir: string, v: Variant, profileDir?: string): SynthChildResult {
  const r = runChild<SynthChildResult>('synth-child.ts', [dir, workDir, String(v.nag)], {
    env: { CDK_VALIDATION: v.validation },
    profileDir,
  });
  fs.rmSync(workDir, { recursive: true, force: true });
  return r;
}

export async function runSynth(opts: BenchOptions): Promise<Section> {
  const load0 = loadavg1();
  const code = codeState();
  const current = buildIsCurrent();
  const sizes = opts.quick ? [1, 10] : [1, 10, 100, 1000];
  const cdkSizes = opts.quick ? [1] : [1, 10, 100, 1000]; // a subset of sizes
  const reps = (n: number) => (opts.quick || n > 10 ? 1 : 3);
  const dirs = new Map(sizes.map((n) => [n, path.join(opts.tmp, `fleet-${n}`)]));
  for (const [n, dir] of dirs) writeFleet(dir, n);

  const runs = new Map<string, SynthChildResult[]>();
  const variants = opts.quick ? VARIANTS.filter((v) => v.id !== 'validation-on') : VARIANTS;
  for (const v of variants) {
    for (const n of sizes) {
      const key = `${v.id}/${n}`;
      runs.set(key, []);
      for (let i = 0; i < reps(n); i++) {
        const r = synthChild(dirs.get(n)!, daemonWorkDir('synth'), v, opts.profileDir);
        runs.get(key)!.push(r);
        process.stderr.write(
          `  synth ${v.id} ${n} clusters: fleet ${fmt(r.fleetWallMs / 1000)} s, rss ${fmt(mb(r.maxRssBytes))} MB\n`,
        );
      }
    }
  }
  // nag's share, paired per cluster in one process (see synth-paired-child.ts), on the largest fleet.
  const pairedSize = sizes[sizes.length - 1];
  const pairedDir = daemonWorkDir('synth-paired');
  const paired = runChild<SynthPairedResult>('synth-paired-child.ts', [dirs.get(pairedSize)!, pairedDir], {
    profileDir: opts.profileDir,
  });
  fs.rmSync(pairedDir, { recursive: true, force: true });
  const pairedOn = summarize(paired.nagOnMs.slice(1));
  const pairedOff = summarize(paired.nagOffMs.slice(1));
  const nagDelta = summarize(paired.nagOnMs.slice(1).map((on, i) => on - paired.nagOffMs[i + 1]));
  process.stderr.write(
    `  synth paired nag on/off, ${pairedSize} clusters: ${fmt(pairedOn.median)} / ${fmt(pairedOff.median)} ms\n`,
  );
  const pairedTable = table(
    [
      'clusters',
      'nag on: synth/stack median ms',
      'nag off: median ms',
      'nag on - off, per cluster: median ms',
      'share of a synthesis with nag',
    ],
    [
      [
        String(pairedSize),
        fmt(pairedOn.median),
        fmt(pairedOff.median),
        fmt(nagDelta.median),
        `${fmt((nagDelta.median / pairedOn.median) * 100)} %`,
      ],
    ],
  );

  const cdk = new Map<number, CdkRun>();
  for (const n of cdkSizes) {
    // As a user runs it today: nag on, CDK_VALIDATION unset, ts-node transpile-only from cdk.json. Once per size (1,000 takes about a minute).
    const r = cdkSynth({ clustersDir: dirs.get(n)!, nag: true });
    if (r.exitCode !== 0) throw new Error(`cdk synth of ${n} clusters failed (${r.exitCode}): ${r.stderrTail}`);
    cdk.set(n, r);
    process.stderr.write(`  cdk synth ${n} clusters: ${fmt(r.wallMs / 1000)} s, rss ${fmt(mb(r.maxRssBytes))} MB\n`);
  }

  const rows: string[][] = [];
  const perStack = new Map<string, ReturnType<typeof summarize>>();
  for (const v of variants) {
    for (const n of sizes) {
      const rs = runs.get(`${v.id}/${n}`)!;
      const warm = summarize(rs.flatMap((r) => r.synthMs.slice(1)));
      perStack.set(`${v.id}/${n}`, warm);
      rows.push([
        v.label,
        String(n),
        String(rs.length),
        ...fmtSummary(summarize(rs.map((r) => r.fleetWallMs / 1000))),
        fmt(summarize(rs.map((r) => r.processWallMs / 1000)).median),
        fmt(summarize(rs.map((r) => r.synthMs[0])).median),
        ...fmtSummary(warm),
        fmt(summarize(rs.flatMap((r) => r.renderMs)).median),
        fmt(Math.max(...rs.map((r) => mb(r.maxRssBytes)))),
        fmt(Math.max(...rs.map((r) => mb(r.heapAfterGcBytes)))),
      ]);
    }
  }
  const inProcess = table(
    [
      'variant',
      'clusters',
      'runs',
      'fleet wall min s',
      'median s',
      'max s',
      'process wall s',
      'cold synth ms',
      'warm synth/stack min ms',
      'median ms',
      'max ms',
      'render ms',
      'peak RSS MB',
      'heap after GC MB',
    ],
    rows,
  );
  const cdkRows = cdkSizes.map((n) => {
    const c = cdk.get(n)!;
    const mine = runs.get(`product/${n}`);
    const proc = mine ? summarize(mine.map((r) => r.processWallMs)).median : NaN;
    return [String(n), fmt(c.wallMs / 1000), fmt(mb(c.maxRssBytes)), fmt(proc / 1000), fmt(c.wallMs / proc)];
  });
  const cdkTable = table(
    ['clusters', 'npx cdk synth wall s', 'peak RSS MB', 'in-process (nag on) process wall s', 'ratio cdk / in-process'],
    cdkRows,
  );

  const big = sizes[sizes.length - 1];
  const bigRuns = runs.get(`product/${big}`)!;
  const at1000 = big === 1000;
  const figures: Figure[] = [
    figure(
      'synth-per-stack-warm-median',
      `in-process synth per stack, warm, median (${big} clusters in one thread, nag on)`,
      perStack.get(`product/${big}`)!.median,
      'ms',
      { op: '<=', value: 20 },
    ),
    ...(perStack.has(`nag-off/${big}`)
      ? [
          figure(
            'synth-per-stack-warm-median-nag-off',
            `in-process synth per stack, warm, median (${big} clusters in one thread, nag off)`,
            perStack.get(`nag-off/${big}`)!.median,
            'ms',
            { op: '<=', value: 20 },
          ),
        ]
      : []),
    ...(perStack.has(`validation-on/${big}`)
      ? [
          figure(
            'synth-per-stack-warm-median-validation-on',
            `in-process synth per stack, warm, median (${big} clusters, CDK_VALIDATION=true)`,
            perStack.get(`validation-on/${big}`)!.median,
            'ms',
          ),
        ]
      : []),
    figure(
      `fleet-${big}-wall`,
      `${big}-cluster fleet synth in one thread (--synth-threads 0), wall`,
      summarize(bigRuns.map((r) => r.fleetWallMs / 1000)).median,
      's',
      at1000 ? { op: '<=', value: 30 } : undefined,
    ),
    figure(
      `fleet-${big}-rss`,
      `${big}-cluster fleet synth in one thread (--synth-threads 0), peak RSS`,
      Math.max(...bigRuns.map((r) => mb(r.maxRssBytes))),
      'MB',
      at1000 ? { op: '<=', value: 2048 } : undefined,
    ),
    figure(
      'synth-per-stack-nag-share',
      `cdk-nag's cost per synthesis, paired in one process (${pairedSize} clusters, median of on - off)`,
      nagDelta.median,
      'ms',
    ),
    ...cdkSizes.map((n) =>
      figure(
        `cdk-synth-${n}-ratio`,
        `npx cdk synth / in-process, ${n} clusters`,
        Number(cdkRows[cdkSizes.indexOf(n)][4]),
        'x',
      ),
    ),
  ];
  return {
    id: 'synth',
    title: 'Synth: in-process (reconciler path) vs npx cdk synth',
    mode: opts.quick ? 'quick' : 'full',
    date: new Date().toISOString(),
    loadavg: [load0, loadavg1()],
    code,
    figures,
    tables: [inProcess, pairedTable, cdkTable],
    notes: [
      'In-process: one child process per fleet size and variant (lib/ through ts-node, one thread that is never recycled, as --synth-threads 0 runs; the pool benchmark below measures the daemon\'s default, build/ in recycled threads); each cluster is validated, rendered, fingerprinted and synthesized with lib/engines/synthesis/synthesize.ts synthesizeStack (one App per cluster, as the reconciler does). "fleet wall" covers load+validate+render+synth of all; "process wall" adds node, ts-node and module load. Warm = every stack but the first of each run. "heap after GC" is the V8 heap still in use after a forced full GC at the end of the run: memory the process holds, not garbage.',
      `Fleets come from bench/generate-fleet.ts (seeded): 5-20 listeners, 10-60 rules, both templates, 3 accounts, 4 regions; median template ${fmt(summarize(bigRuns.flatMap((r) => r.templateBytes)).median / 1024)} KB.`,
      `npx cdk synth: the whole fleet in one app (plus one bootstrap stack per account/region), nag on, CDK_VALIDATION unset, cdk.json's app (the bin/cdk-app.js launcher; build/ was ${current ? 'current, so the precompiled app ran' : 'missing or stale, so ts-node ran'}); run once per size. Peak RSS is the largest process in the tree (GNU time). The ratio compares whole commands (process wall of the in-process child).`,
      'Paired (second table): between runs of the same code, this machine drifted by more than what nag costs, so separate "nag on" and "nag off" processes (the first table) cannot show its share reliably. The paired child synthesizes every cluster twice in a row in one process, with and without nag, alternating which goes first; the share is the median of the per-cluster differences.',
      "CDK_VALIDATION: lib/engines/stacks/app.ts turns aws-cdk-lib's built-in CloudFormationValidatePlugin off unless CDK_VALIDATION=true; the validation-on row shows what opting in costs.",
    ],
    data: { sizes, variants: VARIANTS, runs: Object.fromEntries(runs), paired, cdk: Object.fromEntries(cdk) },
  };
}
