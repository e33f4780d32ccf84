import * as path from 'node:path';
import { KubeApiError } from '../../lib/core/errors';
import { KubeClient } from '../../lib/platform/kube/client';
import { KubeApiServer, startKubeApiServer } from '../helpers/kube-apiserver';
import * as fs from 'node:fs';
import { CHART, docs, goTool, Json, keyOf, run, runOk } from './tools';

// The real helm (v3.22, built from the Go module proxy) installs, upgrades and uninstalls the chart against a real
// kube-apiserver v1.37.2 with etcd. No kubelet or controller-manager runs here, so the Deployment's pods never start:
// the API server accepts and stores every object (admission, the CRDs' and the admission policy's CEL compiled, the
// Deployment's pod template validated) but nothing schedules them. test/ops/daemon-metrics.test.ts runs the daemon as
// the Deployment would, with the chart's rendered arguments and the chart's ServiceAccount's RBAC.
//
// The steps share one release, so they are one test: install, upgrade, uninstall, reinstall, each checked on the API
// server itself (never on helm's word).

const RELEASE = 'worker-stacks';
const RELEASE_NS = 'default';
let started: KubeApiServer | undefined;
let startedAdmin: KubeClient | undefined;
const api = (): KubeApiServer => {
  if (!started) throw new Error('the API server did not start (see beforeAll)');
  return started;
};
const admin = (): KubeClient => {
  if (!startedAdmin) throw new Error('the admin client was not made (see beforeAll)');
  return startedAdmin;
};
let helm: string;

beforeAll(async () => {
  helm = goTool('helm');
  started = await startKubeApiServer();
  startedAdmin = KubeClient.fromOptions({ kubeconfig: started.kubeconfig });
  // Stand-ins for prometheus-operator's CRDs (no network to fetch them): enough for the API server to store a
  // ServiceMonitor and a PrometheusRule; their own schema is prometheus-operator's business, not checked here.
  for (const [kind, plural] of [
    ['ServiceMonitor', 'servicemonitors'],
    ['PrometheusRule', 'prometheusrules'],
  ]) {
    await admin().request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `${plural}.monitoring.coreos.com` },
      spec: {
        group: 'monitoring.coreos.com',
        scope: 'Namespaced',
        names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
          },
        ],
      },
    });
  }
}, 180_000);

afterAll(async () => {
  startedAdmin?.close();
  await started?.stop();
});

const helmArgs = (args: readonly string[]) => [...args, '--kubeconfig', api().kubeconfig, '--namespace', RELEASE_NS];
/** Where an object of a manifest lives on the API server. */
function apiPath(o: Json): string {
  const [group, version] = o.apiVersion.includes('/') ? o.apiVersion.split('/') : ['', o.apiVersion];
  const base = group ? `/apis/${group}/${version}` : `/api/${version}`;
  const plural = PLURALS[o.kind] ?? `${o.kind.toLowerCase()}s`;
  return `${base}${o.metadata.namespace ? `/namespaces/${o.metadata.namespace}` : ''}/${plural}/${o.metadata.name}`;
}
const PLURALS: Readonly<Partial<Record<string, string>>> = {
  NetworkPolicy: 'networkpolicies',
  PodDisruptionBudget: 'poddisruptionbudgets',
  ValidatingAdmissionPolicy: 'validatingadmissionpolicies',
  ValidatingAdmissionPolicyBinding: 'validatingadmissionpolicybindings',
};

async function live(o: Json): Promise<Json | undefined> {
  try {
    return (await admin().request<Json>('GET', apiPath(o))).body;
  } catch (e) {
    if (e instanceof KubeApiError && e.statusCode === 404) return undefined;
    throw e;
  }
}
/** The objects of the release's manifest, as helm recorded them. */
const releaseObjects = (): Json[] => docs(runOk(helm, helmArgs(['get', 'manifest', RELEASE])));

test('helm install, upgrade (to shards, with the monitoring objects), uninstall and reinstall against the real API server', async () => {
  // WHEN the chart is installed with its defaults
  const installed = runOk(helm, helmArgs(['install', RELEASE, CHART]));
  // THEN helm says deployed, and every object of the release is on the API server, labelled as helm's
  expect(installed).toContain('STATUS: deployed');
  // AND its notes say where to look, and that the user roles are not aggregated
  expect(installed).toContain('kubectl get leases -n worker-stacks');
  expect(installed).toContain('worker-stacks-view and worker-stacks-edit are not aggregated');
  const first = releaseObjects();
  expect(first.map((o) => o.kind)).toEqual(
    expect.arrayContaining([
      'CustomResourceDefinition',
      'Namespace',
      'ServiceAccount',
      'ClusterRole',
      'ValidatingAdmissionPolicy',
      'Deployment',
      'PodDisruptionBudget',
      'Service',
      'NetworkPolicy',
    ]),
  );
  for (const o of first) {
    const got = await live(o);
    expect({ key: keyOf(o), releaseName: got?.metadata.annotations?.['meta.helm.sh/release-name'] }).toEqual({
      key: keyOf(o),
      releaseName: RELEASE,
    });
  }
  const deployment = (await live(first.find((o) => o.kind === 'Deployment')!))!;
  expect(deployment.spec.template.spec.containers[0].args).toContain('--all-namespaces');
  // AND the CRDs are served (their CEL rules compiled by the API server)
  const crd = (
    await admin().request<Json>(
      'GET',
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/workerclusters.worker-stacks.io',
    )
  ).body;
  expect(crd.status.conditions.find((c: Json) => c.type === 'Established').status).toBe('True');

  // WHEN the release is upgraded to two shards, with the ServiceMonitor, PrometheusRule and dashboard
  const upgraded = runOk(
    helm,
    helmArgs(['upgrade', RELEASE, CHART, '-f', path.join(CHART, 'ci', 'shards-values.yaml')]),
  );
  // THEN one Deployment per shard replaces the single one, and the Role names the shards' Leases
  expect(upgraded).toContain('STATUS: deployed');
  expect(upgraded).toContain('as 2 shards (canary: tier=canary, main: tier!=canary)');
  const second = releaseObjects();
  expect(await live(deployment)).toBeUndefined();
  const shards = second.filter((o) => o.kind === 'Deployment');
  expect(shards.map((o) => o.metadata.name)).toEqual(['worker-stacks-canary', 'worker-stacks-main']);
  for (const d of shards) expect((await live(d))!.spec.template.spec.containers[0].args).toContain('--selector');
  const role = (await live(second.find((o) => o.kind === 'Role')!))!;
  expect(role.rules[1].resourceNames).toEqual(['worker-stacks-canary', 'worker-stacks-main']);
  for (const kind of ['ServiceMonitor', 'PrometheusRule', 'ConfigMap']) {
    const o = second.find((x) => x.kind === kind)!;
    expect({ kind, stored: Boolean(await live(o)) }).toEqual({ kind, stored: true });
  }
  expect(runOk(helm, helmArgs(['history', RELEASE]))).toMatch(/^2\s.*deployed/m);

  // WHEN the release is uninstalled
  const uninstalled = runOk(helm, helmArgs(['uninstall', RELEASE]));
  // THEN everything is gone but the CRDs (helm.sh/resource-policy: keep: deleting them would delete every
  // WorkerCluster); the namespace is gone or Terminating (no controller-manager here finalizes namespaces)
  expect(uninstalled).toContain(`release "${RELEASE}" uninstalled`);
  expect(uninstalled).toMatch(/These resources were kept due to the resource policy:[\s\S]*CustomResourceDefinition/);
  for (const o of second) {
    const got = await live(o);
    const expected = o.kind === 'CustomResourceDefinition' ? 'kept' : o.kind === 'Namespace' ? 'terminating' : 'gone';
    const state = !got ? 'gone' : got.metadata.deletionTimestamp ? 'terminating' : 'kept';
    expect({ key: keyOf(o), state }).toEqual({ key: keyOf(o), state: expected });
  }

  // WHEN installed again (same release; its namespace still Terminating, so into another)
  const again = run(helm, helmArgs(['install', RELEASE, CHART, '--set', 'namespace.name=worker-stacks-2']));
  // THEN the kept CRDs are adopted again and the release is deployed
  expect({ code: again.code, err: again.stderr }).toEqual({ code: 0, err: '' });
  const crdAgain = (
    await admin().request<Json>(
      'GET',
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/workerclusters.worker-stacks.io',
    )
  ).body;
  expect(crdAgain.metadata.uid).toBe(crd.metadata.uid);
}, 300_000);

const VALUES_FILES = fs
  .readdirSync(path.join(CHART, 'ci'))
  .filter((f) => f.endsWith('-values.yaml'))
  .sort();

test.each(VALUES_FILES)(
  'the objects %s renders pass a server-side dry run with the real kubectl, without a warning',
  async (file) => {
    // GIVEN the namespaces the values name (its own daemon namespace, so that no other test's objects are in the way)
    const daemonNs = `dry-${file.replace('-values.yaml', '')}`;
    for (const name of [daemonNs, 'platform-leases']) {
      await admin()
        .request('POST', '/api/v1/namespaces', { metadata: { name } })
        .catch((e: unknown) => {
          if (!(e instanceof KubeApiError && e.statusCode === 409)) throw e;
        });
    }
    const rendered = runOk(helm, [
      'template',
      RELEASE,
      CHART,
      '-f',
      path.join(CHART, 'ci', file),
      '--set',
      `namespace.name=${daemonNs}`,
      '--set',
      'namespace.create=false',
    ]);
    // WHEN the API server dry-runs every object (admission, schemas, CEL of the policies, Pod Security)
    const r = run(goTool('kubectl'), ['--kubeconfig', api().kubeconfig, 'apply', '--dry-run=server', '-f', '-'], {
      input: rendered,
    });
    // THEN each is accepted, and the API server warns about nothing (Pod Security included); kubectl's own note on
    // cluster-scoped objects another test of this file installed with helm (no last-applied annotation) is not the
    // API server's
    const warnings = r.stderr
      .split('\n')
      .filter((l) => l.trim() && !l.includes('kubectl.kubernetes.io/last-applied-configuration'));
    expect({ code: r.code, warnings }).toEqual({ code: 0, warnings: [] });
    expect(r.stdout.trim().split('\n').length).toBe(docs(rendered).length);
    expect(
      r.stdout
        .trim()
        .split('\n')
        .every((l) => l.endsWith('(server dry run)')),
    ).toBe(true);
  },
  120_000,
);
