import * as fs from 'node:fs';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { runCli } from '../../../lib/adapters/cli/program';
import { rawExample, tempDir } from '../../helpers/clusters';
import { Json } from '../../helpers/json';

/**
 * Issue 32 item 19: an operator checks the live objects against a new release before upgrading to it. `validate
 * --objects` reads the custom resources as `kubectl get workerclusters -A -o yaml` prints them (a List, with the API
 * server's own metadata and a status) and applies this release's rules, naming each object as the daemon does.
 */

/** An object as the API server returns it: namespaced, with its own metadata and a status. */
function live(name: string, namespace: string, mutate: (o: Json) => void = () => undefined): Json {
  const o = rawExample(name);
  mutate(o);
  o.metadata = {
    ...o.metadata,
    namespace,
    uid: '6c1f0d0e-0000-4000-8000-000000000001',
    resourceVersion: '4242',
    generation: 3,
    creationTimestamp: '2026-11-01T00:00:00Z',
    managedFields: [{ manager: 'kubectl', operation: 'Apply' }],
    annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}' },
  };
  o.status = { observedGeneration: 3 };
  return o;
}

test('validate --objects checks a kubectl List by this release, naming each object as the daemon does', async () => {
  // GIVEN two live objects: one valid; one that an earlier release accepted and this one refuses (an x86_64 pool
  // whose kubelet is pinned for arm64 only, issue 32 item 5)
  const dir = tempDir('validate-objects');
  const file = path.join(dir, 'live.yaml');
  const list = {
    apiVersion: 'v1',
    kind: 'List',
    items: [
      live('prod-eu1', 'team-a'),
      live('staging-us1', 'team-b', (o) => (o.spec.cloudConfig.values.kubeletSha256 = { arm64: 'a'.repeat(64) })),
    ],
  };
  fs.writeFileSync(file, stringify(list));
  const out: string[] = [];
  const err: string[] = [];
  // WHEN the CLI validates them, with no cluster directory at all
  const code = await runCli(['validate', '--objects', file, '--clusters', path.join(dir, 'none')], {
    out: (t) => out.push(t),
    err: (t) => err.push(t),
  });
  // THEN exit 1; the refused object is named namespace/name with the field and the rule; the other is valid
  expect(code).toBe(1);
  expect(err.join('')).toMatch(
    /^workercluster team-b\/staging-us1: spec\.cloudConfig\.values\.kubeletSha256: has no pin for amd64, which pool default runs/,
  );
  expect(err.join('').split('\n').filter(Boolean)).toHaveLength(1);
  expect(out.join('')).toBe('1 cluster object valid, 1 invalid\n');
  fs.rmSync(dir, { recursive: true, force: true });
});

test('something other than WorkerClusters is named, not skipped', async () => {
  // GIVEN a List holding a ConfigMap
  const dir = tempDir('validate-objects');
  const file = path.join(dir, 'live.yaml');
  fs.writeFileSync(file, stringify({ kind: 'List', items: [{ kind: 'ConfigMap', metadata: { name: 'x' } }] }));
  const err: string[] = [];
  // WHEN
  const code = await runCli(['validate', '--objects', file], { out: () => undefined, err: (t) => err.push(t) });
  // THEN
  expect(code).toBe(1);
  expect(err.join('')).toContain(
    `${file}: items[0]: is not a WorkerCluster (kind "ConfigMap"); give the output of kubectl get workerclusters -A -o yaml`,
  );
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A WorkerImageChannel as kubectl prints it, with the status the daemon wrote (one release in us-east-1). */
const channel = (name: string, release = 'v20261120') => ({
  apiVersion: 'worker-stacks.io/v1alpha1',
  kind: 'WorkerImageChannel',
  metadata: { name, namespace: 'team-b', uid: 'u', resourceVersion: '7' },
  spec: { source: { ssmParameter: '/org/al2023' }, architecture: 'x86_64' },
  status: {
    sourceKind: 'ssmParameter',
    releases: [
      { release, firstSeen: '2026-11-20T00:00:00Z', images: { 'us-east-1': { imageId: 'ami-0123456789abcdef0' } } },
    ],
    problems: [],
  },
});

test.each([
  [
    'without the channels in the input: refused, naming the kubectl command that gives them',
    [] as object[],
    1,
    /workercluster team-b\/staging-us1: spec\.pool\.imageChannel: image channel "al2023-1-33" cannot be read: the input has no WorkerImageChannel objects; give them with the clusters: kubectl get workerclusters,workerimagechannels -A -o yaml \(rule image-channel\)/,
  ],
  ["with its channel in the same list: pinned from the channel's status, valid", [channel('al2023-1-33')], 0, /^$/],
  [
    'with another channel only: refused as an unknown channel',
    [channel('other')],
    1,
    /spec\.pool\.imageChannel: no WorkerImageChannel named "al2023-1-33" \(rule image-channel\)/,
  ],
])('a live object whose pool names an image channel, %s', async (_what, channels, exit, message) => {
  // GIVEN a live object whose pool names a channel instead of an AMI id, as kubectl prints it with the channels given
  const dir = tempDir('validate-objects-channel');
  const file = path.join(dir, 'live.yaml');
  const o = live('staging-us1', 'team-b', (x) => {
    delete x.spec.pool.machineImage;
    x.spec.pool.imageChannel = 'al2023-1-33';
  });
  fs.writeFileSync(file, stringify({ apiVersion: 'v1', kind: 'List', items: [...channels, o] }));
  const err: string[] = [];
  // WHEN the CLI validates it
  const code = await runCli(['validate', '--objects', file, '--clusters', path.join(dir, 'none')], {
    out: () => undefined,
    err: (t) => err.push(t),
  });
  // THEN it is pinned from the channel's status, or refused on the field saying why and what to do
  expect({ code, err: err.join('') }).toEqual({ code: exit, err: expect.stringMatching(message) });
  fs.rmSync(dir, { recursive: true, force: true });
});
