import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { WorkerStacksError } from '../../core/errors';
import { PROJECT_ROOT } from '../../core/paths';

/** The version tools/moto/server.py patches (and .ci/install-tools installs). */
export const MOTO_VERSION = '5.2.5';
/** The wrapper around moto's server: change sets that take time and roll back, unknown images that fail a stack. @internal exported for the moto wrapper tests */
export const MOTO_WRAPPER = path.join(PROJECT_ROOT, 'tools', 'moto', 'server.py');
const INSTALL = `bash .ci/install-tools (or python3 -m pip install 'moto[server]==${MOTO_VERSION}')`;

export interface MotoServerOptions {
  /** How long an executed change set keeps its stack *_IN_PROGRESS. @default 0 */
  readonly inProgressSeconds?: number;
  /** The interpreter that has moto. @default python3 */
  readonly python?: string;
  /** Added to the server's environment. @default none */
  readonly env?: Readonly<Record<string, string>>;
  /** Append the server's own log (its stderr) to this file. @default not kept */
  readonly logFile?: string;
  /** How long to wait for the server to answer. @default 30 s */
  readonly timeoutMs?: number;
}

export interface MotoServer {
  readonly port: number;
  readonly endpoint: string;
  readonly pid: number;
  /** SIGTERM, then SIGKILL after 5 s; resolves once the process is gone. */
  stop(): Promise<void>;
}

/** A port nobody listens on right now: bind port 0 on loopback, read it, close. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** Checks that python has moto at the pinned version, with its server extras; throws what to install otherwise. */
export function checkMoto(python = 'python3'): void {
  const probe = spawnSync(python, ['-c', 'import moto, moto.server, boto3, flask; print(moto.__version__)'], {
    encoding: 'utf8',
  });
  if (probe.error)
    throw new WorkerStacksError(`${python} could not be run (${probe.error.message})`, {
      hint: `install Python 3 and then ${INSTALL}`,
    });
  if (probe.status !== 0)
    throw new WorkerStacksError(`moto is not installed for ${python} (${probe.stderr.trim().split('\n').pop()})`, {
      hint: INSTALL,
    });
  if (probe.stdout.trim() !== MOTO_VERSION)
    throw new WorkerStacksError(`moto is at ${probe.stdout.trim()}, not the pinned ${MOTO_VERSION}`, { hint: INSTALL });
}

/** Starts tools/moto/server.py on a free loopback port and waits until GET /moto-api/ answers. */
export async function startMotoServer(opts: MotoServerOptions = {}): Promise<MotoServer> {
  const python = opts.python ?? 'python3';
  checkMoto(python);
  let lastError = '';
  // The port can be taken between freePort() and the server's bind: try a few.
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const args = [
      MOTO_WRAPPER,
      '-H',
      '127.0.0.1',
      '-p',
      String(port),
      '--in-progress-seconds',
      String(opts.inProgressSeconds ?? 0),
    ];
    const child = spawn(python, args, { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...opts.env } });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      stderr = (stderr + String(d)).slice(-4000);
      if (opts.logFile) fs.appendFileSync(opts.logFile, d);
    });
    const endpoint = `http://127.0.0.1:${port}`;
    // No pid: the process was not started (spawn reports why on 'error'); the next attempt tries again.
    const pid = child.pid;
    if (pid !== undefined && (await answers(endpoint, child, opts.timeoutMs ?? 30_000)))
      return { port, endpoint, pid, stop: () => stopChild(child) };
    await stopChild(child);
    lastError = stderr.trim();
  }
  throw new WorkerStacksError(`the moto server did not answer on /moto-api/: ${lastError || 'no output'}`, {
    hint: INSTALL,
  });
}

/** Whether GET <endpoint>/moto-api/ answers before `timeoutMs` passes or the child exits. @internal exported for the moto wrapper tests */
export async function answers(endpoint: string, child: ChildProcess, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && child.exitCode === null && child.signalCode === null) {
    try {
      const r = await fetch(`${endpoint}/moto-api/`, { signal: AbortSignal.timeout(2000) });
      if (r.ok) return true;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 150));
  }
  return false;
}

/** SIGTERM, SIGKILL after `hardMs`; resolves when the child has exited. */
export function stopChild(child: ChildProcess, hardMs = 5000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const hard = setTimeout(() => child.kill('SIGKILL'), hardMs);
    child.once('exit', () => {
      clearTimeout(hard);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
