import * as fs from 'node:fs';
import * as path from 'node:path';
import { getCondition } from '../../lib/model/cluster/schema/status';
import { KubeClient } from '../../lib/platform/kube/client';
import { KubeWorkerCluster, objectPath, RETRY_ANNOTATION } from '../../lib/platform/kube/resource';
import { workerStackName } from '../../lib/core/naming';
import { tempDir } from '../helpers/clusters';
import { KubeApiServer } from '../helpers/kube-apiserver';
import { KubeWithCrd, startKubeWithCrd } from '../helpers/kube-crd';
import { applyObject } from '../helpers/kube-objects';
import {
  AWS_FLAGS,
  bucketVersions,
  cli,
  launchTemplateUserData,
  motoCluster,
  stackActivity,
  startWorld,
  stopWorld,
  World,
} from './harness';
import { Json } from '../helpers/json';
import { DEFAULT_TEMPLATES_DIR } from '../../lib/platform/files/template-directory';

// The moto lifecycle with the cluster object as a WorkerCluster custom resource in a real API server: create →
// checksum recorded in .status → a config template change rolls → an unchanged pass writes nothing (not even status).
// The tests run in order and each starts from the state the previous one left, as lifecycle.test.ts does.

const NAME = 'kube-life';
const NS = 'fleet';
const STACK = workerStackName(NAME);
let world: World;
let server: KubeWithCrd;
let api: KubeApiServer;
let admin: KubeClient;
let templates: string;
const kube = () => ['--store', 'kubernetes', '--kubeconfig', api.kubeconfig, '--namespace', NS];
const reconcile = () => cli(['reconcile', '--once', '--templates', templates, ...kube(), ...AWS_FLAGS]);
/** The object's events (what `kubectl describe wc` lists): [type, reason, message]. */
const events = async () => {
  const { body } = await admin.request<{
    items: { reason: string; message: string; type: string; involvedObject: { name: string; kind: string } }[];
  }>('GET', `/api/v1/namespaces/${NS}/events?fieldSelector=involvedObject.name=${NAME}`);
  return body.items.filter((e) => e.involvedObject.kind === 'WorkerCluster').map((e) => [e.type, e.reason, e.message]);
};
const object = async () =>
  (await admin.request<KubeWorkerCluster & { status?: Json }>('GET', objectPath(NS, NAME))).body;

beforeAll(async () => {
  [world, server] = await Promise.all([startWorld(), startKubeWithCrd()]);
  ({ api, admin } = server);
  await server.namespace(NS);
  templates = tempDir('templates');
  fs.cpSync(DEFAULT_TEMPLATES_DIR, templates, { recursive: true });
}, 180_000);
afterAll(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when the setup failed before it; the teardown must not hide that failure
  await Promise.all([stopWorld(world), server?.stop()]);
});

describe('a WorkerCluster custom resource against moto', () => {
  let created: string;

  test('is created from nothing: checksum, observedGeneration and Ready=True recorded in .status of the object', async () => {
    // GIVEN a new custom resource and no stack
    await applyObject(admin, NS, motoCluster(world, NAME));

    // WHEN one pass runs against the Kubernetes store
    const run = await reconcile();

    // THEN the stack exists and the object's status records what is live, for the API server's generation
    expect(run.err).toBe('');
    expect(run.out).toBe(`${NAME}\tapplied\n`);
    expect(run.code).toBe(0);
    const o = await object();
    created = o.status.cloudConfigChecksum;
    expect(created).toMatch(/^[0-9a-f]{64}$/);
    expect(o.metadata.generation).toBe(1);
    expect(o.status.observedGeneration).toBe(1);
    expect(o.status.stackStatus).toBe('CREATE_COMPLETE');
    expect(getCondition(o.status, 'Ready')).toMatchObject({
      status: 'True',
      reason: 'StackCreated',
      observedGeneration: 1,
    });
    expect(launchTemplateUserData(world, STACK)[0].userData).toContain(created);

    // AND `kubectl describe` shows the roll and its completion as events on the object
    expect((await events()).sort((a, b) => a[1].localeCompare(b[1]))).toEqual([
      [
        'Normal',
        'RollStarted',
        expect.stringMatching(new RegExp(`^rolling the nodes to config ${created.slice(0, 12)}: first config`)),
      ],
      ['Normal', 'StackComplete', `stack CREATE_COMPLETE, config ${created.slice(0, 12)} live`],
    ]);
  });

  test('an unchanged pass writes nothing: same resourceVersion, no change set, nothing uploaded', async () => {
    // GIVEN the created cluster and what the object, S3 and the stack hold now
    const before = await object();
    const objects = await bucketVersions(world);
    const activity = await stackActivity(world, STACK);

    // WHEN another pass runs
    const run = await reconcile();

    // THEN it is unchanged, and the object was not written (its resourceVersion is the same)
    expect(run.out).toBe(`${NAME}\tunchanged\n`);
    expect((await object()).metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    expect(await bucketVersions(world)).toEqual(objects);
    expect(await stackActivity(world, STACK)).toEqual(activity);
    expect(await events()).toHaveLength(2); // and no event
  });

  test('a config template change rolls the nodes: new checksum in the user data and in .status, same generation', async () => {
    // GIVEN a changed line in a template file every al2023 cluster renders
    const file = path.join(templates, '_shared', 'sysctl.conf.hbs');
    fs.appendFileSync(file, 'net.ipv4.tcp_keepalive_time = 600\n');

    // WHEN one pass runs
    const run = await reconcile();

    // THEN the stack was updated to the new checksum, recorded with what changed; the spec (generation) did not change
    expect(run.out).toBe(`${NAME}\tapplied\n`);
    const o = await object();
    const updated = o.status.cloudConfigChecksum;
    expect(updated).toMatch(/^[0-9a-f]{64}$/);
    expect(updated).not.toBe(created);
    expect(o.metadata.generation).toBe(1);
    expect(o.status.stackStatus).toBe('UPDATE_COMPLETE');
    expect(getCondition(o.status, 'Ready')).toMatchObject({ status: 'True', reason: 'StackUpdated' });
    expect(o.status.lastConfigChange).toBe('changed /etc/sysctl.d/90-kubernetes.conf');
    const versions = launchTemplateUserData(world, STACK);
    expect(versions).toHaveLength(2);
    expect(versions[1].userData).toContain(updated);

    // AND the roll's event says what changed in the node config
    const all = await events();
    expect(all).toHaveLength(4);
    expect(all).toEqual(
      expect.arrayContaining([
        [
          'Normal',
          'RollStarted',
          expect.stringMatching(
            new RegExp(
              `^rolling the nodes to config ${updated.slice(0, 12)}: changed /etc/sysctl.d/90-kubernetes.conf`,
            ),
          ),
        ],
        ['Normal', 'StackComplete', `stack UPDATE_COMPLETE, config ${updated.slice(0, 12)} live`],
      ]),
    );
  });

  test('status, pause, resume and retry work on the custom resource (namespace/name accepted)', async () => {
    // WHEN status is asked of the Kubernetes store
    const status = await cli(['status', '-o', 'json', '--templates', templates, ...kube()]);

    // THEN it shows the cluster in sync, from the object's status
    expect(status.code).toBe(0);
    const row = JSON.parse(status.out).clusters.find((r: { cluster: string }) => r.cluster === NAME);
    expect(row).toMatchObject({ cluster: NAME, inSync: true, ready: 'True', stackStatus: 'UPDATE_COMPLETE' });

    // WHEN the cluster is paused by namespace/name, THEN spec.paused is set on the object (a spec change: generation 2)
    expect((await cli(['pause', `${NS}/${NAME}`, '--store', 'kubernetes', '--kubeconfig', api.kubeconfig])).code).toBe(
      0,
    );
    expect((await object()).spec).toMatchObject({ paused: true });
    expect((await object()).metadata.generation).toBe(2);

    // WHEN resumed and a retry is asked, THEN paused is gone and the retry annotation carries a token
    expect((await cli(['resume', NAME, ...kube()])).code).toBe(0);
    expect((await cli(['retry', NAME, ...kube()])).code).toBe(0);
    const o = await object();
    expect(o.spec?.paused ?? false).toBe(false); // removed, or the CRD's default
    expect(o.metadata.annotations?.[RETRY_ANNOTATION]).toMatch(/^\d{4}-/);

    // WHEN an unknown cluster is named, THEN exit 2 naming it
    const unknown = await cli(['pause', 'nope', ...kube()]);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain('no cluster nope');
  });
});
