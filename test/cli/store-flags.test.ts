import { runCli } from '../../lib/cli/program';
import { clusterArgument, storeOptions } from '../../lib/cli/store-flags';
import { UsageError } from '../../lib/core/errors';

/** Which store the flags choose, and the misuses refused before anything is read (exit 2, naming the flag). */

const dirs = { clustersDir: '/c', templatesDir: '/t' };

test.each([
  ['file by default', {}, {}, { kind: 'file', clustersDir: '/c' }],
  ['kubernetes, one namespace', { store: 'kubernetes', namespace: 'platform', kubeconfig: 'k.yaml' }, {}, { kind: 'kubernetes', kubernetes: { namespace: 'platform', kubeconfig: 'k.yaml', allNamespaces: false } }],
  ['kubernetes from the environment, all namespaces, a shard', { allNamespaces: true, selector: 'tier=canary' }, { WORKER_STACKS_STORE: 'kubernetes' }, { kind: 'kubernetes', kubernetes: { allNamespaces: true, labelSelector: 'tier=canary' } }],
])('%s', (_what, opts, env, expected) => {
  // GIVEN flags and environment, WHEN the store options are derived, THEN they name that store
  expect(storeOptions(opts, dirs, env)).toMatchObject(expected);
});

test.each([
  ['an unknown store', { store: 'etcd' }, /--store etcd: give file or kubernetes/],
  ['a Kubernetes flag with the file store', { namespace: 'platform' }, /--namespace is for --store kubernetes/],
  ['both namespace flags', { store: 'kubernetes', namespace: 'a', allNamespaces: true }, /--namespace or --all-namespaces, not both/],
  ['a selector term that is not one', { store: 'kubernetes', selector: 'tier=canary,tier in (a' }, /-l "tier in \(a": not a label selector term/],
])('refused: %s', (_what, opts, message) => {
  // GIVEN a misuse, WHEN the options are derived, THEN a usage error names the flag
  expect(() => storeOptions(opts, dirs, {})).toThrow(UsageError);
  expect(() => storeOptions(opts, dirs, {})).toThrow(message);
});

test('namespace/name picks that namespace with the Kubernetes store, and is refused with the file store', () => {
  // GIVEN the Kubernetes store over all namespaces, WHEN a namespace/name is given, THEN that namespace alone is used
  const k = storeOptions({ store: 'kubernetes', allNamespaces: true }, dirs, {});
  expect(clusterArgument('platform/prod-eu1', k)).toMatchObject({ name: 'prod-eu1', store: { kubernetes: { namespace: 'platform', allNamespaces: false } } });
  expect(clusterArgument('prod-eu1', k)).toMatchObject({ name: 'prod-eu1', store: k });
  // AND with the file store it is a usage error
  expect(() => clusterArgument('platform/prod-eu1', storeOptions({}, dirs, {}))).toThrow(/namespace\/name is for --store kubernetes/);
});

test('through the CLI: exit 2 and one line naming the flag, nothing read', async () => {
  // GIVEN status with a Kubernetes flag but the file store, WHEN run, THEN exit 2 with the flag named
  let err = '';
  const code = await runCli(['status', '--namespace', 'platform'], { out: () => undefined, err: (t) => (err += t) });
  expect(code).toBe(2);
  expect(err).toBe('error: --namespace is for --store kubernetes\n');
});
