import { spawn, spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { REPO } from '../../helpers/clusters';
import { run, RunResult } from '../../helpers/tools';

/** The installed command, run as a user runs it. */
export const BIN = path.join(REPO, 'bin', 'worker-stacks.js');

/** The environment without anything that would choose colours for the command. */
export function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const k of ['NO_COLOR', 'FORCE_COLOR', 'WORKER_STACKS_CLUSTERS', 'WORKER_STACKS_TEMPLATES'])
    Reflect.deleteProperty(env, k);
  return { ...env, ...extra };
}

/** `worker-stacks review ...` with stdout a pipe. */
export function reviewBin(cwd: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): RunResult {
  return run(process.execPath, [BIN, 'review', ...args], { cwd, env: cleanEnv(env), timeout: 180_000 });
}

/**
 * `worker-stacks review ...` with stdout a terminal: util-linux `script` gives
 * it a pseudo-terminal. A missing `script` fails the test, it never skips.
 * The terminal turns `\n` into `\r\n`; that is undone.
 */
export function reviewTty(cwd: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): RunResult {
  if (spawnSync('sh', ['-c', 'command -v script']).status !== 0) {
    throw new Error(
      '`script` (util-linux) is not installed; install it with: apt-get install -y util-linux — or run bash .ci/run, which installs everything',
    );
  }
  const command = [process.execPath, BIN, 'review', ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ');
  const r = run('script', ['-qec', command, '/dev/null'], { cwd, env: cleanEnv(env), timeout: 180_000 });
  return { ...r, stdout: r.stdout.replace(/\r\n/g, '\n') };
}

/**
 * Starts `worker-stacks review ...` as the leader of its own process group,
 * as a shell starts a foreground job, so that `interrupt` reaches it and its
 * children as Ctrl-C in a terminal does.
 */
export function startReview(cwd: string, args: readonly string[], env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, [BIN, 'review', ...args], {
    cwd,
    env: cleanEnv(env),
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stderr })),
  );
  return { exited, interrupt: () => process.kill(-child.pid!, 'SIGINT') };
}

/** Waits until `check` holds, polling; fails after `ms`. */
export async function waitFor(what: string, check: () => boolean, ms = 60_000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Whether text holds a terminal escape sequence: the ESC byte, or ESC as JSON escapes it. */
export function hasEscapes(text: string): boolean {
  return text.includes('\x1b') || /\\u001b\[/i.test(text);
}
