import { ChildProcess, ChildProcessByStdio, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { WorkerStacksError } from '../../core/errors';
import { asRecord } from '../../core/json';
import { PROJECT_ROOT } from '../../core/paths';
import { readExamples, rewriteExample, wantedIds } from './examples';
import { freePort, MotoServer, startMotoServer, stopChild } from './moto-server';
import { seedNetwork } from './network';
import { requestHandlerOptions } from '../../platform/aws/clients';

export interface SessionOptions {
  /** How long each stack operation stays *_IN_PROGRESS in the emulator. @default 3 */
  readonly inProgressSeconds?: number;
  /** The daemon's --max-update-attempts. @default 2 */
  readonly maxUpdateAttempts?: number;
  /** Where the example objects come from. @default the repository's clusters/ */
  readonly examplesDir?: string;
  /** Where the config templates come from. @default the repository's cloudconfig/ */
  readonly templatesDir?: string;
  /** One line of progress for the user. */
  readonly progress: (line: string) => void;
  /** A line the daemon logged (JSON, as written). */
  readonly daemonLog?: (line: string) => void;
}

/** Everything one playground started: the emulator, a scratch directory and the daemon. */
export interface Session {
  readonly moto: MotoServer;
  /** Scratch directory: clusters/ (the moved examples and their .status/), cloudconfig/ (a copy), daemon.log, moto.log. */
  readonly dir: string;
  readonly clustersDir: string;
  readonly templatesDir: string;
  /** The daemon's ops endpoints (/healthz, /readyz, /metrics). */
  readonly opsUrl: string;
  readonly daemonPid: number;
  /** The environment that points the SDK (and the CLI) at the emulator. */
  readonly env: Readonly<Record<string, string>>;
  /** Stack status and outputs, as CloudFormation (the emulator) lists them, by `<region>/<stack name>`. */
  stacks(): Promise<Record<string, { status?: string; outputs: Record<string, string> }>>;
  /** Stops the daemon (SIGTERM, its grace period), then the emulator; removes the scratch directory unless `keep`. */
  stop(keep: boolean): Promise<void>;
}

/** Where the CLI's STS client goes (any region: moto answers every one with its account). */
const STS_REGION = 'us-east-1';

/**
 * Starts the playground: moto (tools/moto/server.py) on a free loopback port, the examples' network in it, the
 * repository's own examples moved onto it in a scratch directory, `worker-stacks bootstrap`, then
 * `worker-stacks reconcile --watch` with its ops port: the production CLI, as child processes. Anything started
 * before a failure is stopped again before the error is thrown.
 */
export async function startSession(opts: SessionOptions): Promise<Session> {
  const cleanups: (() => Promise<void> | void)[] = [];
  let removeDir = true;
  const undo = async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  };
  try {
    const dir = fs.mkdtempSync(path.join(fs.realpathSync(os.tmpdir()), 'worker-stacks-playground-'));
    cleanups.push(() => (removeDir ? fs.rmSync(dir, { recursive: true, force: true }) : undefined));
    opts.progress(`scratch directory ${dir}`);
    opts.progress('starting moto (tools/moto/server.py) on a free loopback port ...');
    const moto = await startMotoServer({
      inProgressSeconds: opts.inProgressSeconds ?? 3,
      logFile: path.join(dir, 'moto.log'),
    });
    cleanups.push(() => moto.stop());
    opts.progress(`moto ${moto.endpoint} (pid ${moto.pid})`);
    const clustersDir = path.join(dir, 'clusters');
    const templatesDir = path.join(dir, 'cloudconfig');
    fs.mkdirSync(clustersDir);
    fs.cpSync(opts.templatesDir ?? path.join(PROJECT_ROOT, 'cloudconfig'), templatesDir, { recursive: true });

    const examples = readExamples(opts.examplesDir ?? path.join(PROJECT_ROOT, 'clusters'));
    const wants = wantedIds(examples);
    opts.progress(
      `creating the examples' VPCs, subnets, images and certificates in ${Object.keys(wants).sort().join(', ')} ...`,
    );
    const ids = seedNetwork(moto.endpoint, wants);
    for (const e of examples) fs.writeFileSync(path.join(clustersDir, e.file), rewriteExample(e, ids));
    opts.progress(
      `${examples.length} example clusters (${examples.map((e) => String(asRecord(asRecord(e.raw).metadata).name)).join(', ')}) moved to account 123456789012 in ${clustersDir}`,
    );

    const env: Record<string, string> = {
      AWS_ENDPOINT_URL: moto.endpoint,
      AWS_ACCESS_KEY_ID: 'testing',
      AWS_SECRET_ACCESS_KEY: 'testing',
      AWS_REGION: STS_REGION,
      AWS_EC2_METADATA_DISABLED: 'true',
      WORKER_STACKS_S3_FORCE_PATH_STYLE: 'true',
      WORKER_STACKS_CLUSTERS: clustersDir,
      WORKER_STACKS_TEMPLATES: templatesDir,
    };
    opts.progress('worker-stacks bootstrap (the config bucket of each region) ...');
    const boot = await runCli(['bootstrap'], env);
    if (boot.code !== 0)
      throw new WorkerStacksError(
        `worker-stacks bootstrap failed (exit ${boot.code}): ${boot.err.trim().split('\n').slice(-3).join(' ')}`,
      );
    for (const line of boot.out.trim().split('\n')) opts.progress(`  ${line.replace(/\t/g, '  ')}`);

    const port = await freePort();
    const logFile = fs.openSync(path.join(dir, 'daemon.log'), 'a');
    let logOpen = true;
    cleanups.push(() => {
      logOpen = false;
      fs.closeSync(logFile);
    });
    const args = [
      'reconcile',
      '--watch',
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--poll-seconds',
      '1',
      '--max-update-attempts',
      String(opts.maxUpdateAttempts ?? 2),
    ];
    opts.progress(`worker-stacks ${args.join(' ')} ...`);
    const daemon = spawnCli(args, env);
    const daemonPid = daemon.pid;
    if (daemonPid === undefined) throw new WorkerStacksError(`could not start ${process.execPath} for the daemon`);
    cleanups.push(() => stopChild(daemon, 30_000));
    let partial = '';
    daemon.stderr.on('data', (d: Buffer) => {
      if (!logOpen) return;
      fs.writeSync(logFile, d);
      const lines = (partial + d.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      for (const l of lines) opts.daemonLog?.(l);
    });
    daemon.stdout.resume();
    const opsUrl = `http://127.0.0.1:${port}`;
    await untilServing(opsUrl, daemon);
    opts.progress(`daemon pid ${daemon.pid}, ops ${opsUrl}/metrics`);

    const regions = Object.keys(wants).sort();
    return {
      moto,
      dir,
      clustersDir,
      templatesDir,
      opsUrl,
      daemonPid,
      env,
      stacks: () => listStacks(moto.endpoint, regions),
      async stop(keep: boolean) {
        removeDir = !keep;
        await undo();
      },
    };
  } catch (e) {
    await undo();
    throw e;
  }
}

function spawnCli(
  args: readonly string[],
  env: Readonly<Record<string, string>>,
): ChildProcessByStdio<null, Readable, Readable> {
  return spawn(process.execPath, [path.join(PROJECT_ROOT, 'bin', 'worker-stacks.js'), ...args], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** `worker-stacks <args>` as a child process, to its end. */
export function runCli(
  args: readonly string[],
  env: Readonly<Record<string, string>>,
): Promise<{ code: number; out: string; err: string }> {
  const child = spawnCli(args, env);
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += String(d)));
  child.stderr.on('data', (d: Buffer) => (err += String(d)));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code: code ?? 1, out, err })));
}

async function untilServing(url: string, daemon: ChildProcess): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (daemon.exitCode !== null || daemon.signalCode !== null)
      throw new WorkerStacksError(
        `the daemon exited (${daemon.exitCode ?? daemon.signalCode}) before it served ${url}/healthz; see daemon.log`,
      );
    try {
      if ((await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) })).ok) return;
    } catch {
      // not serving yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new WorkerStacksError(`the daemon did not serve ${url}/healthz within 2 minutes`);
}

async function listStacks(
  endpoint: string,
  regions: readonly string[],
): Promise<Record<string, { status?: string; outputs: Record<string, string> }>> {
  const all: Record<string, { status?: string; outputs: Record<string, string> }> = {};
  for (const region of regions) {
    const cfn = new CloudFormationClient({
      region,
      endpoint,
      requestHandler: requestHandlerOptions(),
      credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
    });
    try {
      for (const s of (await cfn.send(new DescribeStacksCommand({}))).Stacks ?? []) {
        all[`${region}/${s.StackName}`] = {
          status: s.StackStatus,
          outputs: Object.fromEntries(
            (s.Outputs ?? []).flatMap((o) => (o.OutputKey === undefined ? [] : [[o.OutputKey, o.OutputValue ?? '']])),
          ),
        };
      }
    } finally {
      cfn.destroy();
    }
  }
  return all;
}
