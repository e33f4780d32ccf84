import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import * as os from 'node:os';
import * as path from 'node:path';
import { freePort } from './moto';

/**
 * A real Kubernetes API server for tests: the etcd and kube-apiserver binaries that `scripts/kube/build.sh`
 * builds from the Go module proxy into `~/.cache/worker-stacks/kube/<version>/bin`, on free loopback ports,
 * with a CA, serving certificate, service-account key pair and two bearer tokens generated for this run.
 * A missing binary fails the test with the build command; it never skips.
 */
export const KUBE_VERSION = 'v1.37.2';
const BUILD = 'bash scripts/kube/build.sh (or bash .ci/install-tools, which runs it)';

/** Where the binaries are: `WORKER_STACKS_KUBE_CACHE` overrides the cache root, as in scripts/kube/build.sh. */
export function kubeBinDir(): string {
  const root = process.env.WORKER_STACKS_KUBE_CACHE ?? path.join(os.homedir(), '.cache', 'worker-stacks', 'kube');
  return path.join(root, KUBE_VERSION, 'bin');
}

/** The path of `etcd` or `kube-apiserver`, or an error naming the build command. */
export function requireKubeBinary(name: 'etcd' | 'kube-apiserver'): string {
  const file = path.join(kubeBinDir(), name);
  try {
    fs.accessSync(file, fs.constants.X_OK);
  } catch {
    throw new Error(
      `${name} is not built (${file} is missing); run ${BUILD} — it needs Go and the Go module proxy, and takes a while the first time`,
    );
  }
  return file;
}

export interface KubeApiServerOptions {
  /** Extra kube-apiserver flags (`--watch-cache=false`, say). @default none */
  readonly extraArgs?: readonly string[];
  /** How long to wait for /readyz. @default 90000 */
  readonly readyTimeoutMs?: number;
}

/** The non-admin identity: a user with no group but system:authenticated, for RBAC tests. */
export const RESTRICTED_USER = 'worker-stacks-test';
export const ADMIN_USER = 'worker-stacks-admin';

export interface KubeApiServer {
  /** `https://127.0.0.1:<port>` */
  readonly server: string;
  /** A kubeconfig file for the admin token (system:masters). */
  readonly kubeconfig: string;
  /** A kubeconfig file for the restricted user (`RESTRICTED_USER`, no permissions until RBAC grants some). */
  readonly restrictedKubeconfig: string;
  readonly adminToken: string;
  readonly restrictedToken: string;
  /** PEM of the CA that signed the serving certificate. */
  readonly caPem: string;
  /** The run's scratch directory (certs, tokens, etcd data). */
  readonly dir: string;
  /** The etcd client URL (for a test that talks to etcd itself). */
  readonly etcdUrl: string;
  /** Stops the API server and starts it again on the same port, keeping etcd and its data. */
  restartApiServer(): Promise<void>;
  /** Stops only the API server (a test of an unreachable server); `restartApiServer` brings it back. */
  stopApiServer(): Promise<void>;
  /** Stops both and removes the scratch directory. */
  stop(): Promise<void>;
}

/** Starts etcd and kube-apiserver and waits for /readyz. One per test file (a start takes a few seconds). */
export async function startKubeApiServer(opts: KubeApiServerOptions = {}): Promise<KubeApiServer> {
  const etcdBin = requireKubeBinary('etcd');
  const apiBin = requireKubeBinary('kube-apiserver');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-kube-'));
  const children: ChildProcess[] = [];
  const logs: Record<string, string> = { etcd: '', apiserver: '' };
  try {
    const pki = makePki(dir);
    const [etcdPort, peerPort, apiPort] = await distinctPorts(3);
    const etcdUrl = `http://127.0.0.1:${etcdPort}`;
    const etcd = spawnLogged(
      etcdBin,
      [
        '--name=default',
        `--data-dir=${path.join(dir, 'etcd')}`,
        `--listen-client-urls=${etcdUrl}`,
        `--advertise-client-urls=${etcdUrl}`,
        `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
        `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
        `--initial-cluster=default=http://127.0.0.1:${peerPort}`,
        // A test's etcd is thrown away: fsync buys nothing and costs seconds on a shared disk.
        '--unsafe-no-fsync',
        '--log-level=warn',
      ],
      logs,
      'etcd',
    );
    children.push(etcd);
    await waitFor(
      async () => (await httpGet(`${etcdUrl}/health`)).status === 200,
      30_000,
      etcd,
      () => `etcd did not become healthy: ${logs.etcd.slice(-2000)}`,
    );

    const server = `https://127.0.0.1:${apiPort}`;
    const apiArgs = [
      `--etcd-servers=${etcdUrl}`,
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      `--secure-port=${apiPort}`,
      `--tls-cert-file=${pki.serverCert}`,
      `--tls-private-key-file=${pki.serverKey}`,
      `--client-ca-file=${pki.caCert}`,
      `--token-auth-file=${pki.tokenFile}`,
      '--authorization-mode=RBAC',
      `--service-account-key-file=${pki.saPub}`,
      `--service-account-signing-key-file=${pki.saKey}`,
      `--service-account-issuer=${server}`,
      '--service-cluster-ip-range=10.0.0.0/24',
      // No controller-manager runs: the ServiceAccount admission plugin would wait for token controllers forever.
      '--disable-admission-plugins=ServiceAccount',
      // The kubernetes Service's endpoints would be 127.0.0.1, which the endpoint reconciler refuses; nothing here needs them.
      '--endpoint-reconciler-type=none',
      // API priority and fairness queues requests a test never sends enough of to queue; its controllers cost about
      // 0.25 s of CPU at every start and a quarter of an idle server's (measured on this machine, 3 starts each).
      '--enable-priority-and-fairness=false',
      `--cert-dir=${path.join(dir, 'certs')}`,
      '--v=0',
      ...(opts.extraArgs ?? []),
    ];
    const readyMs = opts.readyTimeoutMs ?? 90_000;
    let api: ChildProcess = await startApi(apiBin, apiArgs, server, pki, logs, readyMs);
    children.push(api);

    const kubeconfig = writeKubeconfig(dir, 'admin', server, pki.caPem, pki.adminToken);
    const restrictedKubeconfig = writeKubeconfig(dir, 'restricted', server, pki.caPem, pki.restrictedToken);
    let stopped = false;
    return {
      server,
      kubeconfig,
      restrictedKubeconfig,
      adminToken: pki.adminToken,
      restrictedToken: pki.restrictedToken,
      caPem: pki.caPem,
      dir,
      etcdUrl,
      async stopApiServer() {
        await kill(api);
      },
      async restartApiServer() {
        await kill(api);
        api = await startApi(apiBin, apiArgs, server, pki, logs, readyMs);
        children.push(api);
      },
      async stop() {
        if (stopped) return;
        stopped = true;
        await kill(api);
        await kill(etcd);
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (e) {
    await Promise.all(children.map(kill));
    fs.rmSync(dir, { recursive: true, force: true });
    throw e;
  }
}

interface Pki {
  caCert: string;
  caPem: string;
  serverCert: string;
  serverKey: string;
  saKey: string;
  saPub: string;
  tokenFile: string;
  adminToken: string;
  restrictedToken: string;
}

/**
 * A CA, a serving certificate for 127.0.0.1/localhost, a service-account key pair (ES256) and a token file, all fresh.
 * P-256 keys, not RSA: five RSA-2048 key generations cost ~1.4 s of CPU per API server start (3-4 s wall on the
 * shared 2-core machine), P-256 ~0.07 s; kube-apiserver serves and signs with either.
 */
function makePki(dir: string): Pki {
  const pki = path.join(dir, 'pki');
  fs.mkdirSync(pki, { mode: 0o700 });
  const f = (name: string) => path.join(pki, name);
  const ssl = (...args: string[]) => {
    const r = spawnSync('openssl', args, { encoding: 'utf8', cwd: pki });
    if (r.error || r.status !== 0)
      throw new Error(
        `openssl ${args[0]} failed: ${r.error?.message ?? r.stderr}; install it with: apt-get install -y openssl`,
      );
  };
  ssl(
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    f('ca.key'),
    '-out',
    f('ca.crt'),
    '-days',
    '2',
    '-subj',
    '/CN=worker-stacks-test-ca',
  );
  ssl(
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    f('server.key'),
    '-out',
    f('server.csr'),
    '-subj',
    '/CN=kube-apiserver',
  );
  fs.writeFileSync(
    f('server.ext'),
    'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,IP:10.0.0.1\nextendedKeyUsage=serverAuth\n',
  );
  ssl(
    'x509',
    '-req',
    '-in',
    f('server.csr'),
    '-CA',
    f('ca.crt'),
    '-CAkey',
    f('ca.key'),
    '-CAcreateserial',
    '-out',
    f('server.crt'),
    '-days',
    '2',
    '-extfile',
    f('server.ext'),
  );
  ssl('ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', f('sa.key'));
  ssl('ec', '-in', f('sa.key'), '-pubout', '-out', f('sa.pub'));
  const token = () => randomBytes(24).toString('hex');
  const adminToken = token();
  const restrictedToken = token();
  // token,user,uid,"groups"
  fs.writeFileSync(
    f('tokens.csv'),
    `${adminToken},${ADMIN_USER},1,"system:masters"\n${restrictedToken},${RESTRICTED_USER},2\n`,
    { mode: 0o600 },
  );
  return {
    caCert: f('ca.crt'),
    caPem: fs.readFileSync(f('ca.crt'), 'utf8'),
    serverCert: f('server.crt'),
    serverKey: f('server.key'),
    saKey: f('sa.key'),
    saPub: f('sa.pub'),
    tokenFile: f('tokens.csv'),
    adminToken,
    restrictedToken,
  };
}

function writeKubeconfig(dir: string, user: string, server: string, caPem: string, token: string): string {
  const file = path.join(dir, `kubeconfig-${user}.yaml`);
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      { name: 'test', cluster: { server, 'certificate-authority-data': Buffer.from(caPem).toString('base64') } },
    ],
    users: [{ name: user, user: { token } }],
    contexts: [{ name: user, context: { cluster: 'test', user, namespace: 'default' } }],
    'current-context': user,
  };
  // JSON is YAML: every kubeconfig reader takes it.
  fs.writeFileSync(file, JSON.stringify(config, undefined, 2), { mode: 0o600 });
  return file;
}

async function startApi(
  bin: string,
  args: string[],
  server: string,
  pki: Pki,
  logs: Record<string, string>,
  readyMs: number,
): Promise<ChildProcess> {
  logs.apiserver = '';
  const api = spawnLogged(bin, args, logs, 'apiserver');
  try {
    await waitFor(
      async () => (await httpGet(`${server}/readyz`, pki.caPem, pki.adminToken)).status === 200,
      readyMs,
      api,
      () => `kube-apiserver did not become ready on ${server}: ${logs.apiserver.slice(-3000)}`,
    );
  } catch (e) {
    await kill(api);
    throw e;
  }
  return api;
}

function spawnLogged(bin: string, args: string[], logs: Record<string, string>, key: string): ChildProcess {
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const keep = (d: Buffer) => (logs[key] = (logs[key] + String(d)).slice(-20_000));
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  return child;
}

async function distinctPorts(n: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < n) ports.add(await freePort());
  return [...ports];
}

async function waitFor(
  probe: () => Promise<boolean>,
  timeoutMs: number,
  child: ChildProcess,
  why: () => string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`${why()} (exited ${child.exitCode ?? child.signalCode})`);
    try {
      if (await probe()) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(why());
}

/** A GET with the run's CA (node's fetch cannot take a CA per request). */
export function httpGet(url: string, caPem?: string, token?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = (url.startsWith('https:') ? https : http).get(
      url,
      { ca: caPem, headers: token ? { authorization: `Bearer ${token}` } : {}, timeout: 3000 },
      (res: import('node:http').IncomingMessage) => {
        let body = '';
        res.on('data', (d) => (body += String(d)));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('timeout')));
  });
}

function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const hard = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(hard);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
