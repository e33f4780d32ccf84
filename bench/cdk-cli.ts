/** `npx cdk synth` as a CDK user runs it, timed from outside, with the peak RSS of the whole process tree. */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { msSince, now } from './stats';

export const ROOT = path.resolve(__dirname, '..');
const GNU_TIME = '/usr/bin/time';

export interface CdkRun {
  readonly wallMs: number;
  /** Largest RSS of any process in the tree (the CDK app child is the big one); NaN without GNU time. */
  readonly maxRssBytes: number;
  readonly exitCode: number | null;
  readonly stderrTail: string;
}

export interface CdkSynthOptions {
  /** WORKER_STACKS_CLUSTERS; the repository's clusters/ when undefined. */
  readonly clustersDir?: string;
  /** CDK_VALIDATION; unset when undefined (the shipped default: aws-cdk-lib's built-in validation off, see lib/engines/stacks/app.ts). */
  readonly validation?: 'true' | 'false';
  readonly nag: boolean;
  /** Replaces cdk.json's app command (e.g. a precompiled app). */
  readonly app?: string;
  readonly extraEnv?: Record<string, string>;
  readonly timeoutMs?: number;
}

export function cdkSynth(opts: CdkSynthOptions): CdkRun {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-bench-cdk-'));
  const env: NodeJS.ProcessEnv = { ...process.env, CDK_DISABLE_VERSION_CHECK: '1', ...opts.extraEnv };
  // Inherited settings would silently change what is measured.
  for (const k of ['CDK_VALIDATION', 'WORKER_STACKS_NAG', 'WORKER_STACKS_CLUSTERS', 'NODE_OPTIONS'])
    Reflect.deleteProperty(env, k);
  if (opts.validation) env.CDK_VALIDATION = opts.validation;
  if (!opts.nag) env.WORKER_STACKS_NAG = 'false';
  if (opts.clustersDir) env.WORKER_STACKS_CLUSTERS = opts.clustersDir;
  const cdk = [
    'npx',
    'cdk',
    'synth',
    '--quiet',
    '--output',
    path.join(tmp, 'cdk.out'),
    ...(opts.app ? ['--app', opts.app] : []),
  ];
  const timeFile = path.join(tmp, 'time');
  const useTime = fs.existsSync(GNU_TIME);
  const [cmd, ...args] = useTime ? [GNU_TIME, '-o', timeFile, '-f', '%M', ...cdk] : cdk;
  const start = now();
  const r = spawnSync(cmd, args, {
    cwd: ROOT,
    env,
    encoding: 'utf8',
    timeout: opts.timeoutMs ?? 15 * 60_000,
    maxBuffer: 256 * 1024 * 1024,
  });
  const wallMs = msSince(start);
  let maxRssBytes = NaN;
  if (useTime && fs.existsSync(timeFile)) {
    const kb = Number(fs.readFileSync(timeFile, 'utf8').trim().split('\n').pop());
    if (Number.isFinite(kb)) maxRssBytes = kb * 1024;
  }
  fs.rmSync(tmp, { recursive: true, force: true });
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- null when the process could not be started (r.error), whatever the type says
  const stderr = (r.stderr ?? '').split('\n').filter((l) => l && !/^npm warn/.test(l));
  return { wallMs, maxRssBytes, exitCode: r.status, stderrTail: stderr.slice(-5).join('\n') };
}

/** The launcher's own test (bin/launch.js): build/bin/app.js newer than every source. */
export function buildIsCurrent(): boolean {
  // The launcher's own test, so that the benchmark measures what `node bin/cdk-app.js` would run.
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- bin/launch.js is plain JavaScript, without types
  return (require('../bin/launch') as { isBuildCurrent: (name: string) => boolean }).isBuildCurrent('app');
}
