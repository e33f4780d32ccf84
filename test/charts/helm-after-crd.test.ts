import * as path from 'node:path';
import { KubeClient } from '../../lib/platform/kube/client';
import { REPO } from '../helpers/clusters';
import { KubeApiServer, startKubeApiServer } from '../helpers/kube-apiserver';
import { CHART, goTool, Json, run, runOk } from './tools';

// docs/kubernetes.md installs the CRDs with `npx worker-stacks crd | kubectl apply -f -`; a `helm install` after that
// refused them ("invalid ownership metadata": helm adopts only objects labelled for it). The chart now leaves CRDs it
// does not own to whoever installed them, and says so. Real helm, kubectl and kube-apiserver.

let api: KubeApiServer | undefined;
let admin: KubeClient | undefined;
beforeAll(async () => {
  api = await startKubeApiServer();
  admin = KubeClient.fromOptions({ kubeconfig: api.kubeconfig });
}, 180_000);
afterAll(async () => {
  admin?.close();
  await api?.stop();
});

const crd = async (name: string) =>
  (await admin!.request<Json>('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`)).body;

test('helm install after the CRDs were applied with kubectl: deployed, the CRDs left as they are, and the notes say so (and that the image is named by tag only)', async () => {
  // GIVEN the CRDs installed as the docs show, from the CLI through a pipe into kubectl
  const crds = runOk(process.execPath, [path.join(REPO, 'bin', 'worker-stacks.js'), 'crd']);
  runOk(goTool('kubectl'), ['--kubeconfig', api!.kubeconfig, 'apply', '-f', '-'], { input: crds });
  const before = await crd('workerclusters.worker-stacks.io');

  // WHEN the chart is installed with its defaults
  const helm = (args: string[]) =>
    run(goTool('helm'), [...args, '--kubeconfig', api!.kubeconfig, '--namespace', 'default']);
  const installed = helm(['install', 'worker-stacks', CHART]);

  // THEN it is deployed, the CRDs are the same objects, not taken over, and the notes say both things
  expect({ code: installed.code, err: installed.stderr }).toEqual({ code: 0, err: '' });
  expect(installed.stdout).toContain('STATUS: deployed');
  const after = await crd('workerclusters.worker-stacks.io');
  expect(after.metadata.uid).toBe(before.metadata.uid);
  expect(after.metadata.annotations?.['meta.helm.sh/release-name']).toBeUndefined();
  expect(installed.stdout).toContain(
    'The CRDs workerclusters.worker-stacks.io, workerrolloutpolicies.worker-stacks.io were already installed outside this release',
  );
  expect(installed.stdout).toContain('Note: the image is named by its tag only');

  // AND an upgrade by digest works the same way, and its notes no longer warn about the tag
  const upgraded = helm(['upgrade', 'worker-stacks', CHART, '--set', `image.digest=sha256:${'a'.repeat(64)}`]);
  expect({ code: upgraded.code, err: upgraded.stderr }).toEqual({ code: 0, err: '' });
  expect(upgraded.stdout).not.toContain('named by its tag only');
}, 300_000);
