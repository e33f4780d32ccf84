/**
 * The eks-al2023 node's own CloudFormation signal, run for real: the user data's signal part (bash) against a loopback
 * stand-in for IMDS, the kubelet and CloudFormation, a TLS stand-in for the EKS API server that takes only a bearer
 * token, and a stub `aws` that prints that token. It must signal SUCCESS once the node's Ready condition is True and
 * FAILURE when it never is, and never put the token or a credential in an argument list, a URL or its output.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { WORKER_GROUP_LOGICAL_ID } from '../../../lib/core/naming';
import { MIME_BOUNDARY, NODECONFIG_PATH } from '../../../lib/model/cloudconfig/nodeadm';
import { renderConfig } from '../../../lib/model/cloudconfig/render';
import { configUserData } from '../../../lib/model/cloudconfig/user-data';
import { WorkerCluster } from '../../../lib/model/cluster/schema/schema';
import { tempDir } from '../../helpers/clusters';
import { eksCluster } from '../../helpers/eks';
import { requireCommand, runAsync } from '../../fixtures/cloudconfig/boot';
import { EKS_TOKEN, EksApiServer, startEksApiServer } from '../../fixtures/cloudconfig/eks-api-server';
import {
  FAKE,
  KubePki,
  makeKubePki,
  NodeEndpoints,
  SIGNAL_OK_XML,
  startNodeEndpoints,
  verifySigV4,
} from '../../fixtures/cloudconfig/node-endpoints';
import { defaultTemplates } from '../../../lib/platform/files/template-directory';

const SECRETS = [EKS_TOKEN, FAKE.secretAccessKey, FAKE.sessionToken, FAKE.imdsToken];

/** The user data's parts, by RFC 2046 (the newline before each delimiter belongs to it). */
function mimeParts(userData: string): Array<{ headers: string; body: string }> {
  const rest = userData.split(`\n--${MIME_BOUNDARY}`).slice(1, -1);
  return rest.map((p) => ({ headers: p.slice(1, p.indexOf('\n\n')), body: p.slice(p.indexOf('\n\n') + 2) }));
}

/** The fixture's user data and stored NodeConfig, for an API server at `apiEndpoint` with the CA `clusterCA`. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the raw object is reshaped freely
function render(mutate: (raw: any) => void = () => undefined) {
  const cluster: WorkerCluster = eksCluster(mutate);
  const config = renderConfig(cluster, defaultTemplates());
  const userData = configUserData(config, `s3://b/${config.checksum}.${config.extension}`, defaultTemplates());
  return { cluster, config, userData, parts: mimeParts(userData) };
}

describe('the user data carries the signal part', () => {
  test('third, after the NodeConfig and its check, naming its cluster, region, API server and stack', () => {
    // GIVEN the EKS fixture (cluster eks-eu1 in eu-west-1)
    // WHEN
    const { cluster, userData, parts } = render();
    // THEN
    expect(parts.map((p) => p.headers.split(';')[0])).toEqual([
      'Content-Type: application/node.eks.aws',
      'Content-Type: text/x-shellscript',
      'Content-Type: text/x-shellscript',
    ]);
    const script = parts[2].body;
    expect(script.startsWith('#!/bin/bash\n')).toBe(true);
    expect(script).toContain("\nregion='eu-west-1'\n");
    expect(script).toContain("\ncluster='eks-eu1'\n");
    expect(script).toContain(`\napi='${cluster.spec.cloudConfig.values.apiEndpoint}'\n`);
    expect(script).toContain("\nstack='WorkerStack-eks-eu1'\n");
    expect(script).toContain(`\nresource='${WORKER_GROUP_LOGICAL_ID}'\n`);
    expect(script).toContain(`:-'${NODECONFIG_PATH}'}`);
    expect(script).toContain('aws eks get-token --cluster-name "$cluster" --region "$region"');
    // Handed to systemd after nodeadm-run: cloud-final, where cloud-init runs it, comes before the kubelet.
    expect(script).toMatch(/systemd-run --no-block .*\n.*--property=After=nodeadm-run\.service/);
    expect(Buffer.byteLength(userData)).toBeLessThanOrEqual(16384);
  });

  test("the object's nodeReadyTimeoutSeconds is the script's timeout", () => {
    // WHEN
    const { parts } = render((raw) => (raw.spec.cloudConfig.values.nodeReadyTimeoutSeconds = 300));
    // THEN
    expect(parts[2].body).toContain('\ndefault_timeout=300\n');
  });
});

describe('the signal part, run', () => {
  let endpoints: NodeEndpoints;
  let api: EksApiServer;
  let pkiDir: string;
  let pki: KubePki;
  let dir: string;
  beforeAll(async () => {
    endpoints = await startNodeEndpoints();
    pkiDir = tempDir('eks-pki');
    pki = makeKubePki(pkiDir, FAKE.nodeName);
    api = await startEksApiServer(pki);
  });
  afterAll(async () => {
    await endpoints.close();
    await api.close();
    fs.rmSync(pkiDir, { recursive: true, force: true });
  });
  beforeEach(() => {
    dir = tempDir('eks-signal');
    endpoints.requests.length = 0;
    api.requests.length = 0;
    Object.assign(endpoints.state, { kubeletHealthy: true, cfnStatus: 200, cfnBody: SIGNAL_OK_XML });
    Object.assign(api.state, { registered: true, ready: 'True' });
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** The part as rendered for the stand-in API server and its CA, run with stub `aws` and argv-logging `curl`. */
  async function runPart(opts: { timeoutSeconds?: number; args?: string[]; whileRunning?: () => void } = {}) {
    const curl = requireCommand('curl');
    const { parts, config } = render((raw) =>
      Object.assign(raw.spec.cloudConfig.values, {
        apiEndpoint: api.url,
        clusterCA: fs.readFileSync(pki.caFile, 'utf8'),
      }),
    );
    const script = path.join(dir, 'part-003');
    fs.writeFileSync(script, parts[2].body, { mode: 0o700 });
    // The NodeConfig as the check part keeps it on the node: the script reads the cluster CA from it.
    const nodeconfig = path.join(dir, 'nodeconfig.yaml');
    fs.writeFileSync(nodeconfig, config.bytes);
    const bin = path.join(dir, 'bin');
    fs.mkdirSync(bin);
    const log = (name: string) => path.join(dir, `${name}-argv.log`);
    fs.writeFileSync(
      path.join(bin, 'curl'),
      `#!/bin/bash\nprintf '%s\\n' "$*" >> '${log('curl')}'\nexec '${curl}' "$@"\n`,
      {
        mode: 0o755,
      },
    );
    // The AWS CLI's ExecCredential, pretty-printed as it prints it.
    const credential = JSON.stringify(
      {
        kind: 'ExecCredential',
        apiVersion: 'client.authentication.k8s.io/v1beta1',
        spec: {},
        status: { expirationTimestamp: '2026-11-28T16:00:00Z', token: EKS_TOKEN },
      },
      null,
      4,
    );
    fs.writeFileSync(
      path.join(bin, 'aws'),
      `#!/bin/bash\nprintf '%s\\n' "$*" >> '${log('aws')}'\ncat <<'JSON'\n${credential}\nJSON\n`,
      {
        mode: 0o755,
      },
    );
    fs.writeFileSync(path.join(bin, 'systemd-run'), `#!/bin/bash\nprintf '%s\\n' "$*" >> '${log('systemd-run')}'\n`, {
      mode: 0o755,
    });
    const tmp = path.join(dir, 'tmp');
    fs.mkdirSync(tmp);
    const stamp = path.join(dir, 'state', 'signalled');
    const env = {
      PATH: `${bin}:${process.env.PATH}`,
      TMPDIR: tmp,
      WS_READY_TIMEOUT_SECONDS: String(opts.timeoutSeconds ?? 30),
      WS_POLL_SECONDS: '0.2',
      WS_IMDS_ENDPOINT: endpoints.url,
      WS_KUBELET_HEALTHZ: `${endpoints.url}/healthz`,
      WS_CLOUDFORMATION_ENDPOINT: `${endpoints.url}/cloudformation/`,
      WS_SIGNAL_STAMP: stamp,
      WS_NODECONFIG: nodeconfig,
    };
    const running = runAsync('bash', [script, ...(opts.args ?? ['--now'])], { env, timeoutMs: 60_000 });
    opts.whileRunning?.();
    const result = await running;
    const read = (name: string) => (fs.existsSync(log(name)) ? fs.readFileSync(log(name), 'utf8') : '');
    const signals = endpoints.requests.filter((r) => r.url === '/cloudformation/');
    const seen = [result.stdout, result.stderr, read('curl'), read('aws'), ...endpoints.requests.map((r) => r.url)];
    return {
      result,
      script,
      signals,
      aws: read('aws'),
      systemdRun: read('systemd-run'),
      seen: seen.join('\n'),
      stamped: fs.existsSync(stamp),
      leftovers: fs.readdirSync(tmp),
    };
  }

  const form = (body: string) => Object.fromEntries(new URLSearchParams(body));

  test('SUCCESS once the node turns Ready: a token from aws eks get-token, its own Node read with it', async () => {
    // GIVEN a node that registers NotReady, and turns Ready a second later
    Object.assign(api.state, { registered: true, ready: 'False' });
    // WHEN
    const run = await runPart({ whileRunning: () => setTimeout(() => (api.state.ready = 'True'), 1000) });
    // THEN one signed SUCCESS for its stack, group and instance
    expect({ status: run.result.status, stderr: run.result.stderr }).toEqual({ status: 0, stderr: '' });
    expect(run.signals.map((s) => form(s.body))).toEqual([
      {
        Action: 'SignalResource',
        Version: '2010-05-15',
        StackName: 'WorkerStack-eks-eu1',
        LogicalResourceId: WORKER_GROUP_LOGICAL_ID,
        UniqueId: FAKE.instanceId,
        Status: 'SUCCESS',
      },
    ]);
    expect(verifySigV4(run.signals[0], FAKE.secretAccessKey).valid).toBe(true);
    // the token was asked for its own cluster and region, and the API server saw it on the node's own object only
    expect(run.aws.trim().split('\n')[0]).toBe('eks get-token --cluster-name eks-eu1 --region eu-west-1 --output json');
    expect(new Set(api.requests.map((r) => `${r.url} ${r.authorized}`))).toEqual(
      new Set([`/api/v1/nodes/${FAKE.nodeName} true`]),
    );
    expect(api.requests.length).toBeGreaterThan(1); // it waited through NotReady
    expect(run.result.stdout).toContain(`node ${FAKE.nodeName} Ready; signalling SUCCESS`);
    expect(run.stamped).toBe(true);
    expect(run.leftovers).toEqual([]);
    for (const secret of SECRETS) expect(run.seen).not.toContain(secret);
  });

  test.each([
    {
      what: 'the node registers but never turns Ready',
      state: { registered: true, ready: 'False' },
      log: /registered but not Ready \(Ready=False\)/,
    },
    {
      what: 'the node never registers',
      state: { registered: false, ready: 'Unknown' },
      log: /is not registered with the API server/,
    },
  ] as const)('FAILURE after its timeout when $what', async ({ state, log }) => {
    // GIVEN
    Object.assign(api.state, state);
    // WHEN
    const run = await runPart({ timeoutSeconds: 1 });
    // THEN the unit fails, and CloudFormation hears FAILURE for this instance
    expect(run.result.status).toBe(1);
    expect(run.signals.map((s) => form(s.body))).toEqual([
      expect.objectContaining({ Status: 'FAILURE', StackName: 'WorkerStack-eks-eu1', UniqueId: FAKE.instanceId }),
    ]);
    expect(verifySigV4(run.signals[0], FAKE.secretAccessKey).valid).toBe(true);
    expect(run.result.stdout).toMatch(log);
    expect(run.result.stdout).toContain('signalling FAILURE');
    for (const secret of SECRETS) expect(run.seen).not.toContain(secret);
  });

  test('FAILURE when the kubelet never gets healthy, without asking for a token', async () => {
    // GIVEN
    endpoints.state.kubeletHealthy = false;
    // WHEN
    const run = await runPart({ timeoutSeconds: 1 });
    // THEN
    expect(run.result.status).toBe(1);
    expect(run.signals.map((s) => form(s.body).Status)).toEqual(['FAILURE']);
    expect(run.result.stdout).toMatch(/the kubelet is not healthy/);
    expect(run.aws).toBe('');
  });

  test('run by cloud-init (no --now), it hands itself to systemd after nodeadm-run and returns at once', async () => {
    // WHEN
    const run = await runPart({ args: [] });
    // THEN
    expect(run.result.status).toBe(0);
    expect(run.systemdRun).toContain('--no-block');
    expect(run.systemdRun).toContain('--property=After=nodeadm-run.service');
    expect(run.systemdRun.trim().endsWith(`/bin/bash ${fs.realpathSync(run.script)} --now`)).toBe(true);
    expect(run.signals).toEqual([]);
    expect(api.requests).toEqual([]);
  });
});
