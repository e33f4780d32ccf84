import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse, stringify } from 'yaml';
import { KubeApiError } from '../../lib/core/errors';
import { KubeClient } from '../../lib/platform/kube/client';
import { ownSecret, REPO } from '../helpers/clusters';
import { KubeApiServer } from '../helpers/kube-apiserver';

/**
 * What a pod of the chart's Deployment would run, run here as a process (no kubelet in the tests): the container's
 * arguments and env as the API server stored the Deployment, the downward API's values filled in, authenticated as
 * the chart's ServiceAccount with a token from the TokenRequest API, so the chart's RBAC and admission policies are
 * what it lives with. AWS points at a closed loopback port: nothing may leave the machine.
 */

import { Json } from '../helpers/json';

export interface PodProcess {
  readonly child: ChildProcess;
  /** Everything it wrote to stdout and stderr so far. */
  logs(): string;
  /** Polls `probe` until it returns something truthy; fails with the logs after `ms` or if the process exits. */
  eventually<T>(what: string, ms: number, probe: () => Promise<T | undefined> | T | undefined): Promise<T>;
  /** SIGTERM, as the kubelet sends it; resolves with the exit code. */
  terminate(): Promise<number | null>;
  /** SIGKILL if still running (afterAll). */
  kill(): Promise<void>;
}

/** A GET that answers undefined on 404. */
export async function getOrUndefined(client: KubeClient, p: string): Promise<Record<string, Json> | undefined> {
  try {
    return (await client.request<Json>('GET', p)).body;
  } catch (e) {
    if (e instanceof KubeApiError && e.statusCode === 404) return undefined;
    throw e;
  }
}

/** An example object whose template does not exist: the daemon stalls it (InvalidSpec) without any AWS call. */
export async function createUnrenderable(
  admin: KubeClient,
  namespace: string,
  name: string,
  labels: Record<string, string> = {},
): Promise<void> {
  const raw = parse(fs.readFileSync(path.join(REPO, 'clusters', 'prod-eu1.yaml'), 'utf8'));
  raw.metadata = { name, namespace, labels };
  ownSecret(raw); // a cluster names only its own secrets
  raw.spec.cloudConfig.template = 'no-such-template';
  await admin.request('POST', `/apis/worker-stacks.io/v1alpha1/namespaces/${namespace}/workerclusters`, raw);
}

/** Starts the Deployment's container as a process named `pod`, in `scratch` (its TMPDIR and HOME). */
export async function runDeploymentAsPod(
  api: KubeApiServer,
  admin: KubeClient,
  namespace: string,
  deploymentName: string,
  pod: string,
  scratch: string,
): Promise<PodProcess> {
  const deployment = (
    await admin.request<Json>('GET', `/apis/apps/v1/namespaces/${namespace}/deployments/${deploymentName}`)
  ).body;
  const sa = deployment.spec.template.spec.serviceAccountName;
  const token = (
    await admin.request<Json>('POST', `/api/v1/namespaces/${namespace}/serviceaccounts/${sa}/token`, {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { expirationSeconds: 3600 },
    })
  ).body.status.token;
  const kubeconfig = path.join(scratch, `${pod}.kubeconfig`);
  fs.writeFileSync(
    kubeconfig,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name: 'test',
          cluster: { server: api.server, 'certificate-authority-data': Buffer.from(api.caPem).toString('base64') },
        },
      ],
      users: [{ name: 'sa', user: { token } }],
      contexts: [{ name: 'sa', context: { cluster: 'test', user: 'sa', namespace } }],
      'current-context': 'sa',
    }),
  );
  const container = deployment.spec.template.spec.containers[0];
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    KUBECONFIG: kubeconfig,
    AWS_ACCESS_KEY_ID: 'testing',
    AWS_SECRET_ACCESS_KEY: 'testing',
    AWS_REGION: 'eu-west-1',
    AWS_EC2_METADATA_DISABLED: 'true',
    AWS_ENDPOINT_URL: 'http://127.0.0.1:9',
  };
  const downward: Record<string, string> = { 'metadata.name': pod, 'metadata.namespace': namespace };
  for (const e of container.env) env[e.name] = e.value ?? downward[e.valueFrom.fieldRef.fieldPath];
  env.TMPDIR = scratch;
  env.HOME = scratch;
  const child = spawn(process.execPath, [path.join(REPO, 'bin', 'worker-stacks.js'), ...container.args], {
    cwd: REPO,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let logs = '';
  child.stdout.on('data', (d) => (logs += String(d)));
  child.stderr.on('data', (d) => (logs += String(d)));
  const exited = () =>
    new Promise<number | null>((resolve) =>
      child.exitCode !== null || child.signalCode !== null ? resolve(child.exitCode) : child.once('exit', resolve),
    );
  return {
    child,
    logs: () => logs,
    async eventually(what, ms, probe) {
      const deadline = Date.now() + ms;
      for (;;) {
        const v = await probe();
        if (v) return v;
        if (Date.now() > deadline)
          throw new Error(`timed out after ${ms} ms waiting for ${what}; daemon output:\n${logs.slice(-4000)}`);
        if (child.exitCode !== null)
          throw new Error(`the daemon exited (${child.exitCode}) while waiting for ${what}:\n${logs.slice(-4000)}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    },
    async terminate() {
      child.kill('SIGTERM');
      return exited();
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited();
      }
    },
  };
}
