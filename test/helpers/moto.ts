import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { answers, freePort, MOTO_WRAPPER } from '../../lib/adapters/playground/moto-server';
import { PINS, requireTool } from './tools';

/**
 * The moto server (the AWS emulator the machine's Python ships) on a free loopback port: under jest, the worker's
 * shared one, reset for this file (test/environment/shared-moto.js), or the file's own. A missing moto fails the
 * test with the install command; it never skips.
 */
export interface Moto {
  readonly port: number;
  readonly endpoint: string;
  /** Environment for the SDK (in-process or a child process) to talk to this server. */
  readonly env: Readonly<Record<string, string>>;
  /** Runs a Python snippet with boto3 clients `ec2`, `cfn`, `s3` bound to the server; `args` is a JSON value; the snippet sets `out`. */
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- the caller names the shape of the JSON its Python snippet prints; the test or bench reads it as such
  python<T = unknown>(snippet: string, args?: unknown): T;
  /** Kills the file's own server; gives a shared one back (it stays up, and the next file to take it resets it). */
  stop(): Promise<void>;
}

export const MOTO_ACCOUNT = '123456789012';
export const MOTO_REGION = 'eu-west-1';
const INSTALL = `bash .ci/install-tools (or python3 -m pip install 'moto[server]==${PINS.moto}', Python 3.11)`;

export { freePort };

/** tools/moto/server.py instead of plain moto: change sets that take time and roll back, and the other patches it documents. */
export interface MotoWrapper {
  /** How long an executed change set keeps its stack *_IN_PROGRESS. @default 0 */
  readonly inProgressSeconds?: number;
}

/** The jest worker's servers, one of each kind, kept across its test files (test/environment/shared-moto.js). */
interface SharedMoto {
  running(kind: string): boolean;
  acquire(spec: {
    kind: string;
    command: string[];
    inProgressSeconds?: number;
    timeoutMs: number;
  }): Promise<{ port: number; endpoint: string; pid: number }>;
  release(kind: string): void;
}

/**
 * `shared`: the jest worker's server of the same kind (plain moto or the wrapper), reset for this file: no stack,
 * bucket, VPC, image or change set of an earlier file, the wrapper's in-progress seconds as asked; stop() hands it
 * back without killing it. `own`: a process of the file's own, killed by stop(): for a file that runs several
 * servers at once, or one whose server must start afresh. A custom `env` always gets its own server.
 */
export type MotoSharing = 'shared' | 'own';

/**
 * Starts `python3 -m moto.server` (or, with `wrapper`, tools/moto/server.py) and waits until GET /moto-api/ answers. `env` is added to the server's
 * environment (MOTO_RECORDER_FILEPATH, say, for a test that reads the requests moto received): such a server is the
 * file's own, as is every server outside jest's worker environment (test/environment/measured-node.js).
 */
export async function startMoto(
  timeoutMs = 30_000,
  env: Readonly<Record<string, string>> = {},
  wrapper?: MotoWrapper,
  sharing: MotoSharing = 'shared',
): Promise<Moto> {
  const python = requireTool('python3');
  const shared =
    sharing === 'shared' && Object.keys(env).length === 0
      ? (globalThis as { __wsSharedMoto?: SharedMoto }).__wsSharedMoto
      : undefined;
  const kind = wrapper ? 'wrapper' : 'moto';
  if (!shared?.running(kind)) checkVersion(python);
  if (shared) {
    const command = [python, ...(wrapper ? [MOTO_WRAPPER] : ['-m', 'moto.server'])];
    const inProgressSeconds = wrapper ? (wrapper.inProgressSeconds ?? 0) : undefined;
    const { port } = await shared.acquire({ kind, command, inProgressSeconds, timeoutMs });
    return motoAt(port, python, async () => shared.release(kind));
  }
  let lastError = '';
  // The port can be taken between freePort() and moto's bind: try a few.
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const server = wrapper
      ? [MOTO_WRAPPER, '--in-progress-seconds', String(wrapper.inProgressSeconds ?? 0)]
      : ['-m', 'moto.server'];
    const child = spawn(python, [...server, '-H', '127.0.0.1', '-p', String(port)], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, ...env },
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr = (stderr + String(d)).slice(-4000)));
    const endpoint = `http://127.0.0.1:${port}`;
    if (await answers(endpoint, child, timeoutMs)) return motoAt(port, python, () => kill(child));
    await kill(child);
    lastError = stderr.trim();
  }
  throw new Error(
    `moto server did not answer on /moto-api/: ${lastError || 'no output'}; install or repair it with: ${INSTALL}`,
  );
}

function checkVersion(python: string): void {
  // The installed version from its metadata, without importing moto (~0.2 s of CPU instead of ~0.8 s): a server whose
  // imports fail (flask missing, say) does not answer, and that error below names the install command too.
  const probe = spawnSync(python, ['-c', 'import importlib.metadata as m; print(m.version("moto"))'], {
    encoding: 'utf8',
  });
  if (probe.status !== 0)
    throw new Error(
      `moto is not installed for ${python} (${probe.stderr.trim().split('\n').pop()}); install it with: ${INSTALL}`,
    );
  // The tests rely on what this moto version emulates (S3's ExpectedBucketOwner, CloudFormation change sets).
  if (probe.stdout.trim() !== PINS.moto)
    throw new Error(`moto is at ${probe.stdout.trim()}, not the pinned ${PINS.moto}; install it with: ${INSTALL}`);
}

function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const hard = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(hard);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

const CLIENTS = { ec2: 'ec2', cfn: 'cloudformation', s3: 's3' } as const;

/** boto3, and the clients the snippet names (each costs ~0.13 s of CPU to create: most snippets use one or two). */
function prelude(snippet: string): string {
  const clients = Object.entries(CLIENTS)
    .filter(([name]) => new RegExp(`\\b${name}\\b`).test(snippet))
    .map(([name, service]) => `${name} = boto3.client('${service}', **_kw)`);
  return `
import json, sys, base64, boto3
_kw = dict(endpoint_url=sys.argv[1], region_name=sys.argv[2], aws_access_key_id='testing', aws_secret_access_key='testing')
${clients.join('\n')}
args = json.loads(sys.argv[3])
out = None
`;
}

function motoAt(port: number, python: string, stop: () => Promise<void>): Moto {
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    port,
    endpoint,
    env: {
      AWS_ENDPOINT_URL: endpoint,
      AWS_ACCESS_KEY_ID: 'testing',
      AWS_SECRET_ACCESS_KEY: 'testing',
      AWS_REGION: MOTO_REGION,
      AWS_EC2_METADATA_DISABLED: 'true',
      NODE_NO_WARNINGS: '1',
    },
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- the caller names the shape of the JSON its Python snippet prints; the test or bench reads it as such
    python<T>(snippet: string, args: unknown = null): T {
      const script = `${prelude(snippet)}\n${snippet}\nprint(json.dumps(out, default=str))\n`;
      const r = spawnSync(python, ['-c', script, endpoint, MOTO_REGION, JSON.stringify(args)], {
        encoding: 'utf8',
        timeout: 60_000,
      });
      if (r.status !== 0) throw new Error(`boto3 against moto failed: ${r.stderr || r.error}`);
      return JSON.parse(r.stdout.trim().split('\n').pop()!) as T;
    },
    stop,
  };
}
