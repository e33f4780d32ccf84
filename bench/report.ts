/**
 * Results of a run: bench/results.json (machine-readable, gitignored) and
 * bench/RESULTS.md (the short human table that is committed). Each benchmark
 * returns a Section; a run that covers only some benchmarks keeps the other
 * sections of the previous results.json, each with its own date and code.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export interface Target {
  readonly op: '<=' | '==';
  readonly value: number;
}

export interface Figure {
  readonly id: string;
  readonly label: string;
  readonly value: number;
  readonly unit: string;
  readonly target?: Target;
  readonly pass?: boolean;
  readonly note?: string;
}

export interface Section {
  readonly id: string;
  readonly title: string;
  readonly mode: 'quick' | 'full';
  readonly date: string;
  /** 1-minute load average before and after: another process on 2 cores skews every figure. */
  readonly loadavg: readonly [number, number];
  /** The code measured: lib/ changes while people work on it. */
  readonly code: CodeState;
  readonly figures: Figure[];
  /** Markdown tables, as printed. */
  readonly tables: string[];
  readonly notes: string[];
  /** Raw per-run data for anyone who wants to recompute. */
  readonly data: unknown;
}

export interface CodeState {
  readonly commit: string;
  /** Files under bin/, lib/ or cloudconfig/ that differ from the commit. */
  readonly modified: string[];
}

export function codeState(): CodeState {
  // Not trimmed: porcelain lines start with a status column that may be a space.
  // stdout is null when git cannot be spawned, whatever the typings say.
  const git = (...args: string[]) =>
    (spawnSync('git', args, { cwd: path.resolve(__dirname, '..'), encoding: 'utf8' }) as { stdout: string | null })
      .stdout ?? '';
  const modified = git('status', '--porcelain', '--', 'bin', 'lib', 'cloudconfig')
    .split('\n')
    .filter(Boolean)
    .map((l) => l.slice(3));
  return { commit: git('rev-parse', '--short', 'HEAD').trim() || 'unknown', modified };
}

export interface Results {
  readonly machine: { cpus: number; cpuModel: string; memoryGiB: number; node: string; platform: string };
  readonly updated: string;
  /** Latest full run of each benchmark: what RESULTS.md shows. */
  readonly sections: Record<string, Section>;
  /** Latest quick (smoke) run of each, kept apart so that it never replaces a full figure. */
  readonly quick: Record<string, Section>;
}

export const RESULTS_JSON = path.join(__dirname, 'results.json');
export const RESULTS_MD = path.join(__dirname, 'RESULTS.md');

export function figure(id: string, label: string, value: number, unit: string, target?: Target, note?: string): Figure {
  const pass = target === undefined ? undefined : target.op === '<=' ? value <= target.value : value === target.value;
  return { id, label, value, unit, target, pass, note };
}

export function machine(): Results['machine'] {
  return {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
  };
}

export function writeResults(sections: readonly Section[]): Results {
  let previous: Results | undefined;
  try {
    previous = JSON.parse(fs.readFileSync(RESULTS_JSON, 'utf8')) as Results;
  } catch {
    previous = undefined;
  }
  const merged: Results = {
    machine: machine(),
    updated: new Date().toISOString(),
    sections: { ...(previous?.sections ?? {}) },
    quick: { ...(previous?.quick ?? {}) },
  };
  for (const s of sections) (s.mode === 'quick' ? merged.quick : merged.sections)[s.id] = s;
  fs.writeFileSync(RESULTS_JSON, `${JSON.stringify(merged, undefined, 2)}\n`);
  return merged;
}

// admission-cost is written by hand from bench/admission-cost.ts (not part of `npm run bench`): listed so that a run keeps it.
const ORDER = [
  'synth',
  'synth-pool',
  'cdk-examples',
  'unchanged',
  'kube-unchanged',
  'latency',
  'kube-watch-latency',
  'rollout',
  'review',
  'in-progress',
  'fleet-rollout',
  'pools',
  'pools-edit',
  'pools-rollout',
  'channels-rollout',
  'sim',
  'admission-cost',
];

/**
 * RESULTS.md from the full-mode sections only: a quick smoke run must never overwrite committed figures. A benchmark
 * with no full run in this machine's results.json (which is not committed) keeps its block and target rows from the
 * RESULTS.md already there: running one benchmark never drops the others' figures.
 */
export function writeMarkdown(results: Results): boolean {
  const kept = keptFromMarkdown(fs.existsSync(RESULTS_MD) ? fs.readFileSync(RESULTS_MD, 'utf8') : '');
  // Not every benchmark has a full run in this machine's results.json.
  const section = (id: string): Section | undefined => results.sections[id];
  const ids = ORDER.filter((id) => section(id) || kept.blocks.has(id));
  if (!ids.some((id) => section(id))) return false;
  const m = results.machine;
  const lines = [
    '# Benchmark results',
    '',
    `Machine of the latest run: ${m.cpus} CPUs (${m.cpuModel}), ${m.memoryGiB} GiB, Node ${m.node}, ${m.platform}. Produced by \`npm run bench\` (see bench/run.ts); raw figures in bench/results.json. Each section says when it ran; one not run since keeps its figures (possibly from another machine of the same size).`,
    '',
    '## Targets',
    '',
    '| figure | measured | target | |',
    '| --- | --- | --- | --- |',
  ];
  for (const id of ids) {
    const s = section(id);
    if (!s) lines.push(...(kept.rows.get(id) ?? []));
    else
      for (const f of s.figures.filter((x) => x.target))
        lines.push(
          `| ${f.label} | ${show(f.value, f.unit)} | ${f.target!.op === '<=' ? '≤' : '='} ${show(f.target!.value, f.unit)} | ${f.pass ? 'pass' : '**miss**'} | <!-- ${id} -->`,
        );
  }
  lines.push('');
  for (const id of ids) {
    const s = section(id);
    lines.push(`<!-- bench:${id} -->`);
    if (!s) lines.push(kept.blocks.get(id)!);
    else {
      const code = `code ${s.code.commit}${s.code.modified.length ? ` + uncommitted changes to ${s.code.modified.join(', ')}` : ''}`;
      lines.push(
        `## ${s.title}`,
        '',
        `Run ${s.date.slice(0, 16).replace('T', ' ')} UTC, ${code}, load average ${s.loadavg.map((l) => l.toFixed(2)).join(' → ')}.`,
        '',
      );
      for (const t of s.tables) lines.push(t, '');
      for (const n of s.notes) lines.push(`- ${n}`);
      while (lines.at(-1) === '') lines.pop();
    }
    lines.push(`<!-- /bench:${id} -->`, '');
  }
  // The before/after history is written by hand and kept across runs.
  const history = path.join(__dirname, 'BEFORE-AFTER.md');
  if (fs.existsSync(history)) lines.push(fs.readFileSync(history, 'utf8'));
  fs.writeFileSync(RESULTS_MD, lines.join('\n'));
  return true;
}

/** The blocks (`<!-- bench:id -->` … `<!-- /bench:id -->`) and target rows (ending `<!-- id -->`) of a RESULTS.md. */
export function keptFromMarkdown(text: string): { blocks: Map<string, string>; rows: Map<string, string[]> } {
  const blocks = new Map<string, string>();
  for (const m of text.matchAll(/<!-- bench:([a-z0-9-]+) -->\n([\s\S]*?)\n<!-- \/bench:\1 -->/g))
    blocks.set(m[1], m[2]);
  const rows = new Map<string, string[]>();
  for (const m of text.matchAll(/^(\|.*\| <!-- ([a-z0-9-]+) -->)$/gm))
    rows.set(m[2], [...(rows.get(m[2]) ?? []), m[1]]);
  return { blocks, rows };
}

function show(v: number, unit: string): string {
  const text = Math.abs(v) >= 100 ? Math.round(v).toLocaleString('en-US') : Number(v.toPrecision(3)).toString();
  return unit ? `${text} ${unit}` : text;
}

export const loadavg1 = () => Number(os.loadavg()[0].toFixed(2));

/** What every benchmark is given by bench/run.ts. */
export interface BenchOptions {
  /** Smaller sizes and fewer repetitions: a smoke run, never written to RESULTS.md. */
  readonly quick: boolean;
  /** A scratch directory for this run (removed afterwards). */
  readonly tmp: string;
  /** Write CPU profiles of the measuring child processes here (--cpu-prof). */
  readonly profileDir?: string;
}
