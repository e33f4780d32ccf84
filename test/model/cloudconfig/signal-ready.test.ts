/**
 * The node's health signal, run for real: the rendered script (bash, curl --aws-sigv4) against a loopback stand-in
 * for IMDS, the kubelet, the API server and CloudFormation. It must send one correctly shaped, correctly signed
 * SignalResource (SUCCESS when the node is up, FAILURE when it is not within the timeout) and never put a credential
 * in a URL, an argument list or its output.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { renderConfig } from '../../../lib/model/cloudconfig/render';
import { WORKER_GROUP_LOGICAL_ID } from '../../../lib/core/naming';
import { example, tempDir } from '../../helpers/clusters';
import { requireCommand, runAsync } from '../../fixtures/cloudconfig/boot';
import {
  ApiServer,
  FAKE,
  KubePki,
  makeKubePki,
  NodeEndpoints,
  NOT_EXPECTED_XML,
  SIGNAL_OK_XML,
  startApiServer,
  startNodeEndpoints,
  verifySigV4,
} from '../../fixtures/cloudconfig/node-endpoints';
import { defaultTemplates } from '../../../lib/platform/files/template-directory';

const SCRIPT = '/opt/bin/worker-stacks-signal-ready';
const SECRETS = [FAKE.secretAccessKey, FAKE.sessionToken, FAKE.imdsToken];

/** curl's --aws-sigv4 appeared in 7.75.0. */
function requireSigV4Curl(): string {
  const curl = requireCommand('curl');
  const v = /^curl (\d+)\.(\d+)/.exec(spawnSync(curl, ['--version'], { encoding: 'utf8' }).stdout);
  if (!v || Number(v[1]) * 1000 + Number(v[2]) < 7075)
    throw new Error(
      `curl ${v?.[1]}.${v?.[2]} has no --aws-sigv4 (needs 7.75 or newer); install a newer curl: apt-get install -y curl`,
    );
  const bash = spawnSync('sh', ['-c', 'command -v bash'], { encoding: 'utf8' });
  if (bash.status !== 0) throw new Error('bash is not installed; install it with: apt-get install -y bash');
  return curl;
}

let endpoints: NodeEndpoints;
let pkiDir: string;
let pki: KubePki;
let api: ApiServer;
let dir: string;
beforeAll(async () => {
  endpoints = await startNodeEndpoints();
  pkiDir = tempDir('kube-pki');
  pki = makeKubePki(pkiDir, FAKE.nodeName);
  api = await startApiServer(pki, () => endpoints.state.nodeRegistered);
});
afterAll(async () => {
  await endpoints.close();
  await api.close();
  fs.rmSync(pkiDir, { recursive: true, force: true });
});
beforeEach(() => {
  dir = tempDir('signal-ready');
  endpoints.requests.length = 0;
  api.clients.length = 0;
  Object.assign(endpoints.state, {
    kubeletHealthy: true,
    nodeRegistered: true,
    cfnStatus: 200,
    cfnBody: SIGNAL_OK_XML,
  });
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The script as the cluster's node config carries it, run with a curl that logs its argument list first. */
async function runScript(clusterName: string, timeoutSeconds = 30, opts: { caInline?: boolean; imds?: string } = {}) {
  const curl = requireSigV4Curl();
  const config = renderConfig(example(clusterName), defaultTemplates());
  const script = config.node.files.find((f) => f.path === SCRIPT)!;
  const file = path.join(dir, 'signal-ready');
  fs.writeFileSync(file, script.contents, { mode: 0o755 });
  const bin = path.join(dir, 'bin');
  const argvLog = path.join(dir, 'curl-argv.log');
  fs.mkdirSync(bin);
  fs.writeFileSync(path.join(bin, 'curl'), `#!/bin/bash\nprintf '%s\\n' "$*" >> '${argvLog}'\nexec '${curl}' "$@"\n`, {
    mode: 0o755,
  });
  // The kubeconfig as the kubelet's TLS bootstrap writes it: the CA file, and the rotated client certificate and key in one file.
  const kubeconfig = path.join(dir, 'kubeconfig');
  fs.writeFileSync(
    kubeconfig,
    `apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n    ${opts.caInline ? `certificate-authority-data: ${fs.readFileSync(pki.caFile).toString('base64')}` : `certificate-authority: ${pki.caFile}`}\n    server: ${api.url}\n  name: default-cluster\ncontexts:\n- context:\n    cluster: default-cluster\n    namespace: default\n    user: default-auth\n  name: default-context\ncurrent-context: default-context\nkind: Config\nusers:\n- name: default-auth\n  user:\n    client-certificate: ${pki.kubeletPem}\n    client-key: ${pki.kubeletPem}\n`,
  );
  const stamp = path.join(dir, 'state', 'signalled');
  const tmp = path.join(dir, 'tmp');
  fs.mkdirSync(tmp);
  const env = {
    PATH: `${bin}:${process.env.PATH}`,
    TMPDIR: tmp,
    WS_READY_TIMEOUT_SECONDS: String(timeoutSeconds),
    WS_POLL_SECONDS: '0.2',
    WS_IMDS_ENDPOINT: opts.imds ?? endpoints.url,
    WS_KUBELET_HEALTHZ: `${endpoints.url}/healthz`,
    WS_KUBELET_KUBECONFIG: kubeconfig,
    WS_CLOUDFORMATION_ENDPOINT: `${endpoints.url}/cloudformation/`,
    WS_SIGNAL_STAMP: stamp,
    WS_NODE_NAME: FAKE.nodeName,
  };
  const result = await runAsync('bash', [file], { env, timeoutMs: 60_000 });
  const argv = fs.existsSync(argvLog) ? fs.readFileSync(argvLog, 'utf8') : '';
  const signals = endpoints.requests.filter((r) => r.url === '/cloudformation/');
  return {
    result,
    argv,
    signals,
    stamped: fs.existsSync(stamp),
    leftovers: fs.readdirSync(tmp),
    cluster: example(clusterName),
  };
}

const form = (body: string) => Object.fromEntries(new URLSearchParams(body));

function expectNoSecretLeaked(run: Awaited<ReturnType<typeof runScript>>) {
  const seen = [
    run.result.stdout,
    run.result.stderr,
    run.argv,
    ...endpoints.requests.map((r) => r.url),
    ...run.signals.map((r) => r.body),
  ].join('\n');
  for (const secret of SECRETS) expect(seen).not.toContain(secret);
}

describe('a node that comes up signals SUCCESS', () => {
  test.each(['prod-eu1', 'staging-us1'])(
    '%s: one signed SignalResource for its own stack, group and instance',
    async (name) => {
      // GIVEN the kubelet is healthy and the node object exists
      // WHEN
      const run = await runScript(name);
      // THEN
      expect({ status: run.result.status, stderr: run.result.stderr }).toEqual({ status: 0, stderr: '' });
      expect(run.signals).toHaveLength(1);
      const [signal] = run.signals;
      expect(signal.method).toBe('POST');
      expect(form(signal.body)).toEqual({
        Action: 'SignalResource',
        Version: '2010-05-15',
        StackName: `WorkerStack-${name}`,
        LogicalResourceId: WORKER_GROUP_LOGICAL_ID,
        UniqueId: FAKE.instanceId,
        Status: 'SUCCESS',
      });
      const sig = verifySigV4(signal, FAKE.secretAccessKey);
      expect(sig.credential).toMatch(
        new RegExp(`^${FAKE.accessKeyId}/\\d{8}/${run.cluster.spec.region}/cloudformation/aws4_request$`),
      );
      expect(sig.signedHeaders).toEqual(expect.arrayContaining(['host', 'x-amz-date', 'x-amz-security-token']));
      expect(sig.valid).toBe(true);
      expect(verifySigV4(signal, 'another secret').valid).toBe(false);
      expect(
        verifySigV4({ ...signal, body: signal.body.replace('SUCCESS', 'FAILURE') }, FAKE.secretAccessKey).valid,
      ).toBe(false);
      expect(signal.headers['x-amz-security-token']).toBe(FAKE.sessionToken);
      expect(run.result.stdout).toContain(
        `signalled SUCCESS for ${FAKE.instanceId} to WorkerStack-${name}/${WORKER_GROUP_LOGICAL_ID}`,
      );
      expect(run.stamped).toBe(true);
      expect(run.leftovers).toEqual([]);
      expectNoSecretLeaked(run);
    },
  );

  test('IMDSv2 only: a session token by PUT with a TTL, then every metadata GET carries it', async () => {
    // WHEN
    const run = await runScript('prod-eu1');
    // THEN
    const imds = endpoints.requests.filter((r) => r.url.startsWith('/latest/'));
    expect(imds[0]).toMatchObject({ method: 'PUT', url: '/latest/api/token' });
    expect(imds[0].headers['x-aws-ec2-metadata-token-ttl-seconds']).toBeDefined();
    const gets = imds.filter((r) => r.method === 'GET');
    expect(gets.map((r) => r.url)).toEqual(
      expect.arrayContaining([
        '/latest/meta-data/instance-id',
        `/latest/meta-data/iam/security-credentials/${FAKE.role}`,
      ]),
    );
    for (const g of gets) expect(g.headers['x-aws-ec2-metadata-token']).toBe(FAKE.imdsToken);
    expect(run.result.status).toBe(0);
  });

  test("the node object is read over mutual TLS with the kubelet's own kubeconfig (its CA, its client certificate)", async () => {
    // WHEN
    const run = await runScript('prod-eu1');
    // THEN the API server saw the kubelet's identity, and verified it against its CA
    expect(run.result.status).toBe(0);
    expect(api.clients).toContain(`system:node:${FAKE.nodeName}`);
    expect(run.argv).toContain(`--cert ${pki.kubeletPem} --key ${pki.kubeletPem} --cacert ${pki.caFile}`);
  });
});

test('a kubeconfig with the CA inline (certificate-authority-data) works too', async () => {
  // WHEN
  const run = await runScript('prod-eu1', 30, { caInline: true });
  // THEN
  expect(run.result.status).toBe(0);
  expect(api.clients).toContain(`system:node:${FAKE.nodeName}`);
  expect(run.signals.map((s) => form(s.body).Status)).toEqual(['SUCCESS']);
  expect(run.leftovers).toEqual([]); // its scratch copy of the CA is gone
});

test('without the instance metadata service nothing is sent, and the unit fails saying why', async () => {
  // GIVEN an IMDS that is not there
  // WHEN
  const run = await runScript('prod-eu1', 30, { imds: 'http://127.0.0.1:9' });
  // THEN
  expect(run.result.status).toBe(1);
  expect(run.signals).toEqual([]);
  expect(run.result.stdout).toContain(
    "cannot read the instance id or the role's credentials from the instance metadata service",
  );
  expect(run.stamped).toBe(false);
});

describe('a node that does not come up signals FAILURE after its timeout', () => {
  test.each([
    {
      what: 'the kubelet never gets healthy',
      state: { kubeletHealthy: false, nodeRegistered: false },
      log: /the kubelet is not healthy/,
    },
    {
      what: 'the kubelet is healthy but the node never registers',
      state: { kubeletHealthy: true, nodeRegistered: false },
      log: new RegExp(`node ${FAKE.nodeName} is not registered`),
    },
  ])('$what', async ({ state, log }) => {
    // GIVEN
    Object.assign(endpoints.state, state);
    // WHEN
    const run = await runScript('prod-eu1', 1);
    // THEN the unit fails, and CloudFormation hears FAILURE for this instance
    expect(run.result.status).toBe(1);
    expect(run.signals.map((s) => form(s.body))).toEqual([
      expect.objectContaining({
        Status: 'FAILURE',
        UniqueId: FAKE.instanceId,
        LogicalResourceId: WORKER_GROUP_LOGICAL_ID,
      }),
    ]);
    expect(verifySigV4(run.signals[0], FAKE.secretAccessKey).valid).toBe(true);
    expect(run.result.stdout).toMatch(log);
    expect(run.result.stdout).toContain('signalling FAILURE');
    expectNoSecretLeaked(run);
  });
});

test('a signal CloudFormation does not expect (no roll under way) is said and is not an error', async () => {
  // GIVEN
  Object.assign(endpoints.state, { cfnStatus: 400, cfnBody: NOT_EXPECTED_XML });
  // WHEN
  const run = await runScript('staging-us1');
  // THEN
  expect(run.result.status).toBe(0);
  expect(run.signals).toHaveLength(1);
  expect(run.result.stdout).toContain('CloudFormation did not take the SUCCESS signal');
  expect(run.result.stdout).toContain(
    'ValidationError Signal was not expected: the resource is in UPDATE_COMPLETE state',
  );
  expect(run.stamped).toBe(true);
  expectNoSecretLeaked(run);
});
