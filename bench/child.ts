/** Runs a bench/*-child.ts script in a fresh Node process and returns the JSON line it prints last. */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { workDirParent } from '../lib/adapters/cli/wiring';
import { ROOT } from './cdk-cli';

export interface ChildOptions {
  /** Environment changes; undefined values remove a variable. */
  readonly env?: Record<string, string | undefined>;
  /** Write a V8 CPU profile of the child here (node --cpu-prof). */
  readonly profileDir?: string;
}

// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- the caller names the shape of the JSON the child prints; the test or bench reads it as such
export function runChild<T>(script: string, args: readonly string[], opts: ChildOptions = {}): T {
  const env: NodeJS.ProcessEnv = { ...process.env };
  // A --cpu-prof meant for bench/run.ts would otherwise profile (and slow) every child.
  delete env.NODE_OPTIONS;
  for (const [k, v] of Object.entries(opts.env ?? {})) {
    if (v === undefined) Reflect.deleteProperty(env, k);
    else env[k] = v;
  }
  const prof = opts.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${opts.profileDir}`] : [];
  const r = spawnSync(
    process.execPath,
    [...prof, '-r', 'ts-node/register/transpile-only', path.join(__dirname, script), ...args],
    {
      cwd: ROOT,
      env,
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
    },
  );
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- null when the process could not be started (r.error), whatever the type says
  const last = (r.stdout ?? '').trim().split('\n').pop() ?? '';
  if (r.status !== 0 || !last.startsWith('{')) {
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- null when the process could not be started (r.error), whatever the type says
    const stderr = (r.stderr ?? '').slice(-3000);
    throw new Error(`${script} ${args.join(' ')} failed (exit ${r.status}):\n${stderr}`);
  }
  return JSON.parse(last) as T;
}

/** A fresh synthesis work dir where the daemon puts its own (lib/adapters/cli/wiring.ts: /dev/shm when there is one). */
export function daemonWorkDir(label: string): string {
  return fs.mkdtempSync(path.join(workDirParent(), `ws-bench-${label}-`));
}
