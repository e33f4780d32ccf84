import * as https from 'node:https';
import { Json } from './json';
import { KubeApiServer, startKubeApiServer } from './kube-apiserver';

/**
 * The Kubernetes REST calls the CRD and manifest tests make, as `kubectl` makes them (JSON over HTTPS with a
 * bearer token): what the API server answers is the point of those tests, so nothing is in between.
 */
export interface KubeResponse {
  readonly status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the API server's JSON, read by each test
  readonly body: any;
  /** The API server's Warning headers (PodSecurity, deprecated fields ...). */
  readonly warnings: readonly string[];
}

/** Requests made as another identity (the ServiceAccount), with the admin's right to impersonate. */
export interface Impersonate {
  readonly user: string;
  readonly groups: readonly string[];
}

export function kubeRequest(
  api: KubeApiServer,
  method: string,
  path: string,
  body?: unknown,
  token = api.adminToken,
  contentType = 'application/json',
  as?: Impersonate,
  accept = 'application/json',
): Promise<KubeResponse> {
  const data = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = https.request(
      `${api.server}${path}`,
      {
        method,
        ca: api.caPem,
        headers: {
          authorization: `Bearer ${token}`,
          accept,
          ...(data ? { 'content-type': contentType, 'content-length': Buffer.byteLength(data) } : {}),
          ...(as ? { 'impersonate-user': as.user, 'impersonate-group': [...as.groups] } : {}),
        },
        timeout: 30_000,
      },
      (res) => {
        let text = '';
        res.on('data', (d) => (text += String(d)));
        res.on('end', () => {
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // not JSON: kept as text
          }
          const warning = res.headers.warning;
          resolve({
            status: res.statusCode ?? 0,
            body: parsed,
            warnings: warning === undefined ? [] : Array.isArray(warning) ? warning : [warning],
          });
        });
      },
    );
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: timeout`)));
    if (data) req.write(data);
    req.end();
  });
}

/** The REST path of an object's collection: `/api/v1/namespaces/ns/serviceaccounts`, `/apis/rbac.authorization.k8s.io/v1/clusterroles`. */
export function collectionPath(apiVersion: string, kind: string, namespace?: string): string {
  const plural = PLURALS[kind];
  if (!plural) throw new Error(`kube-rest: no plural known for kind ${kind}`);
  const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  return namespace ? `${base}/namespaces/${namespace}/${plural}` : `${base}/${plural}`;
}

const PLURALS: Record<string, string> = {
  CustomResourceDefinition: 'customresourcedefinitions',
  Namespace: 'namespaces',
  ServiceAccount: 'serviceaccounts',
  ClusterRole: 'clusterroles',
  ClusterRoleBinding: 'clusterrolebindings',
  Role: 'roles',
  RoleBinding: 'rolebindings',
  Deployment: 'deployments',
  Service: 'services',
  PodDisruptionBudget: 'poddisruptionbudgets',
  NetworkPolicy: 'networkpolicies',
  WorkerCluster: 'workerclusters',
  NodeConfig: 'nodeconfigs',
  WorkerRolloutPolicy: 'workerrolloutpolicies',
  Event: 'events',
  SubjectAccessReview: 'subjectaccessreviews',
  ValidatingAdmissionPolicy: 'validatingadmissionpolicies',
  ValidatingAdmissionPolicyBinding: 'validatingadmissionpolicybindings',
};

/** Creates (or, with dryRun, checks) an object; the response is the API server's. */
export function create(
  api: KubeApiServer,
  obj: Json,
  opts: { dryRun?: boolean; token?: string } = {},
): Promise<KubeResponse> {
  const path =
    collectionPath(obj.apiVersion, obj.kind, obj.metadata?.namespace) +
    (opts.dryRun ? '?dryRun=All&fieldValidation=Strict' : '?fieldValidation=Strict');
  return kubeRequest(api, 'POST', path, obj, opts.token);
}

/** Waits until the CRD is Established (its REST endpoints serve). */
export async function waitEstablished(api: KubeApiServer, name: string, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const r = await kubeRequest(api, 'GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`);
    const established = (r.body?.status?.conditions ?? []).some(
      (c: { type: string; status: string }) => c.type === 'Established' && c.status === 'True',
    );
    if (established) return;
    if (Date.now() > until)
      throw new Error(`CRD ${name} not Established after ${timeoutMs} ms: ${JSON.stringify(r.body?.status ?? r.body)}`);
    await new Promise((res) => setTimeout(res, 200));
  }
}

/**
 * One API server for a whole test file with one CRD created and Established: started before its first test, stopped
 * after its last. The accessor throws inside a test when the start failed (the beforeAll's error says why).
 */
export function apiServerWithCrdForFile(crd: () => Json, name: string): () => KubeApiServer {
  let started: KubeApiServer | undefined;
  const api = (): KubeApiServer => {
    if (!started) throw new Error('the API server did not start (see beforeAll)');
    return started;
  };
  beforeAll(async () => {
    started = await startKubeApiServer();
    const r = await create(api(), crd());
    if (r.status !== 201) throw new Error(`CRD refused: ${JSON.stringify(r.body)}`);
    await waitEstablished(api(), name);
  }, 120_000);
  afterAll(async () => {
    await started?.stop();
  });
  return api;
}
