/**
 * `worker-stacks review` at fleet size (issue 10, item 21): a git repository
 * holding this project and a generated fleet (base), then two pull requests
 * reviewed by the installed command as CI runs it (`--format markdown`):
 *
 * - one cluster's object changes: only that cluster is synthesized;
 * - a shared config template changes: every cluster is synthesized and rolls,
 *   and the markdown still fits a pull-request comment.
 *
 * Wall time and the peak resident memory of the whole process tree (review
 * and both synthesizing CDK apps, summed, sampled every 50 ms from /proc).
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ROOT } from './cdk-cli';
import { stringify } from 'yaml';
import { validateCluster } from '../lib/model/cluster/validate';
import { listTemplates } from '../lib/model/cloudconfig/templates';
import { formatProblem } from '../lib/core/errors';
import { generateCluster } from './generate-fleet';
import { BenchOptions, codeState, figure, loadavg1, Section } from './report';
import { fmt, table } from './stats';
import { Json } from '../test/helpers/json';
import { defaultTemplates } from '../lib/platform/files/template-directory';

/** What the fixture repository holds of the project: what synthesis reads. */
const PROJECT_PARTS = [
  'bin',
  'lib',
  'cloudconfig',
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'cdk.json',
];

interface Run {
  readonly wallMs: number;
  readonly peakMiB: number;
  readonly exitCode: number | null;
  readonly markdownBytes: number;
  readonly synthesized: string;
}

export async function runReview(opts: BenchOptions): Promise<Section> {
  const load0 = loadavg1();
  const code = codeState();
  const n = opts.quick ? 100 : 1_000;
  const dir = path.join(opts.tmp, 'review', 'project');
  const setup = Date.now();
  createRepo(dir, n);
  // As after `npm ci` (prepare): the precompiled app, so that the measured runs start as a user's checkout does.
  buildProject(dir);
  process.stderr.write(`  review: ${n} clusters committed and built in ${fmt((Date.now() - setup) / 1000)} s\n`);

  const one = path.join(dir, 'clusters', fs.readdirSync(path.join(dir, 'clusters')).sort()[Math.floor(n / 2)]);
  const oneCluster = await pullRequest(dir, one, (t) =>
    t.replace(
      /clusterDNS: (\S+)\.(\d+)$/m,
      (_m, net: string, host: string) => `clusterDNS: ${net}.${Number(host) + 1}`,
    ),
  );
  const shared = path.join(dir, 'cloudconfig', '_shared', 'kubelet-config.yaml.hbs');
  const sharedTemplate = await pullRequest(
    dir,
    shared,
    (t) => `${t.replace(/\n*$/, '\n')}serializeImagePulls: false\n`,
  );

  const label = `${n.toLocaleString('en-US')} clusters`;
  const figures = [
    figure(
      'review.one.wall',
      `review, one-cluster change in ${label}: wall`,
      oneCluster.wallMs / 1000,
      's',
      opts.quick ? undefined : { op: '<=', value: 5 },
    ),
    figure(
      'review.one.rss',
      `review, one-cluster change in ${label}: peak memory of all its processes`,
      oneCluster.peakMiB,
      'MiB',
      opts.quick ? undefined : { op: '<=', value: 500 },
    ),
    figure(
      'review.shared.wall',
      `review, shared-template change across ${label}: wall`,
      sharedTemplate.wallMs / 1000,
      's',
      opts.quick ? undefined : { op: '<=', value: 60 },
    ),
    figure(
      'review.shared.markdown',
      `review, shared-template change across ${label}: markdown`,
      sharedTemplate.markdownBytes,
      'bytes',
      { op: '<=', value: 60_000 },
    ),
  ];
  const rows = [
    [
      "one cluster's object",
      fmt(oneCluster.wallMs / 1000, 's'),
      fmt(oneCluster.peakMiB, 'MiB'),
      oneCluster.synthesized,
      fmt(oneCluster.markdownBytes),
      String(oneCluster.exitCode),
    ],
    [
      'shared template (_shared/)',
      fmt(sharedTemplate.wallMs / 1000, 's'),
      fmt(sharedTemplate.peakMiB, 'MiB'),
      sharedTemplate.synthesized,
      fmt(sharedTemplate.markdownBytes),
      String(sharedTemplate.exitCode),
    ],
  ];
  return {
    id: 'review',
    title: `Review of a pull request in a ${label} fleet`,
    mode: opts.quick ? 'quick' : 'full',
    date: new Date().toISOString(),
    loadavg: [load0, loadavg1()],
    code,
    figures,
    tables: [
      table(
        [
          'change',
          'wall',
          'peak memory (all processes)',
          'synthesized base / head / skipped',
          'markdown bytes',
          'exit',
        ],
        rows,
      ),
    ],
    notes: [
      '`worker-stacks review --base base --format markdown` run once per change as a separate process on an uncommitted working tree; memory is the sum of the resident sets of the review and both CDK apps, sampled every 50 ms.',
      "A cluster whose object, templates and code are byte-identical at base and head is not synthesized; when the code differs every cluster is (not measured here: that is the shared-template figure plus the base's own ts-node start).",
    ],
    data: { n, oneCluster, sharedTemplate },
  };
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync(
    'git',
    [
      '-c',
      'user.name=bench',
      '-c',
      'user.email=bench@example.com',
      '-c',
      'commit.gpgsign=false',
      '-c',
      'init.defaultBranch=main',
      ...args,
    ],
    {
      cwd,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
}

function createRepo(dir: string, n: number): void {
  fs.mkdirSync(dir, { recursive: true });
  for (const part of PROJECT_PARTS)
    if (fs.existsSync(path.join(ROOT, part)))
      fs.cpSync(path.join(ROOT, part), path.join(dir, part), { recursive: true });
  writeAdaptedFleet(path.join(dir, 'clusters'), n);
  fs.writeFileSync(path.join(dir, '.gitignore'), 'node_modules\nbuild/\ncdk.out/\n');
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  git(dir, 'init', '--quiet');
  git(dir, 'add', '-A');
  git(dir, 'commit', '--quiet', '-m', 'base');
  git(dir, 'tag', 'base');
}

/**
 * The bench fleet, adapted as test/engines/synthesis/synthesis-check.test.ts adapts it
 * to the listener rules the generator predates (node ports outside the
 * NodePort range opted in, UDP listeners with an explicit TCP probe), and
 * validated: a review of refused objects would measure something else.
 */
function writeAdaptedFleet(dir: string, n: number): void {
  fs.mkdirSync(dir, { recursive: true });
  const templates = listTemplates(defaultTemplates());
  for (let i = 0; i < n; i++) {
    const raw = generateCluster(i) as Json;
    for (const l of raw.spec.listeners ?? []) {
      l.hostPort = true;
      if (l.protocol === 'UDP' && l.healthCheck?.port === undefined)
        l.healthCheck = { protocol: 'TCP', port: Number(l.nodePort) + 3000 };
    }
    const file = path.join(dir, `${raw.metadata.name}.yaml`);
    const result = validateCluster(raw, { file, templates });
    if (!result.cluster)
      throw new Error(`review bench: cluster ${i} is invalid:\n${result.problems.map(formatProblem).join('\n')}`);
    fs.writeFileSync(
      file,
      `# Generated by bench/review.ts from bench/generate-fleet.ts (cluster ${i}).\n${stringify(raw)}`,
    );
  }
}

function buildProject(dir: string): void {
  // Type errors elsewhere (work in progress) still emit JavaScript; the launcher decides whether the build is current.
  try {
    execFileSync(
      process.execPath,
      [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'],
      { cwd: dir, stdio: 'ignore' },
    );
  } catch {
    /* emitted anyway */
  }
}

/** Edits one file (left uncommitted), reviews, and puts the file back. */
async function pullRequest(dir: string, file: string, change: (text: string) => string): Promise<Run> {
  const before = fs.readFileSync(file, 'utf8');
  const after = change(before);
  if (after === before) throw new Error(`review bench: the edit of ${file} changed nothing`);
  fs.writeFileSync(file, after);
  try {
    const json = path.join(dir, '..', 'review.json');
    const run = await measure(
      process.execPath,
      [path.join(dir, 'bin', 'worker-stacks.js'), 'review', '--base', 'base', '--format', 'markdown'],
      dir,
    );
    // The figures of what was synthesized come from a second, unmeasured run's JSON.
    const fd = fs.openSync(json, 'w');
    try {
      spawnSync(process.execPath, ['bin/worker-stacks.js', 'review', '--base', 'base', '--format', 'json'], {
        cwd: dir,
        stdio: ['ignore', fd, 'inherit'],
      });
    } finally {
      fs.closeSync(fd);
    }
    const s = (
      JSON.parse(fs.readFileSync(json, 'utf8')) as { synthesis: { base: number; head: number; skipped: number } }
    ).synthesis;
    return { ...run, synthesized: `${s.base} / ${s.head} / ${s.skipped}` };
  } finally {
    fs.writeFileSync(file, before);
  }
}

/** Runs a command in its own process group; wall time and the peak sum of the group's resident sets. */
function measure(command: string, args: readonly string[], cwd: string): Promise<Omit<Run, 'synthesized'>> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(command, args, {
      cwd,
      detached: true,
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, NO_COLOR: '1' },
    });
    let bytes = 0;
    child.stdout.on('data', (d: Buffer) => (bytes += d.length));
    let peak = 0;
    const timer = setInterval(() => (peak = Math.max(peak, groupRss(child.pid!))), 50);
    child.on('error', reject);
    child.on('close', (exitCode) => {
      clearInterval(timer);
      resolve({
        wallMs: Number(process.hrtime.bigint() - started) / 1e6,
        peakMiB: peak / 2 ** 20,
        exitCode,
        markdownBytes: bytes,
      });
    });
  });
}

/** Bytes resident in every process of a process group (from /proc/<pid>/stat: pgrp is field 5, rss pages field 24). */
function groupRss(pgid: number): number {
  let total = 0;
  for (const pid of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pgid) total += Number(fields[21]) * 4096;
    } catch {
      /* the process ended meanwhile */
    }
  }
  return total;
}
