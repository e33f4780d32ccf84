import { Command } from 'commander';
import { runCli } from '../../../lib/adapters/cli/program';
import { clusterArgument, storeFlags, storeOptions } from '../../../lib/adapters/cli/store-flags';
import { STORE_KINDS, STORES } from '../../../lib/adapters/stores/registry';
import { UsageError } from '../../../lib/core/errors';

/** Which store the flags choose, and the misuses refused before anything is read (exit 2, naming the flag). */

const dirs = { clustersDir: '/c', templatesDir: '/t' };

test.each([
  ['file by default', {}, {}, { kind: 'file', options: { clustersDir: '/c' } }],
  [
    'kubernetes, one namespace',
    { store: 'kubernetes', namespace: 'platform', kubeconfig: 'k.yaml' },
    {},
    { kind: 'kubernetes', options: { namespace: 'platform', kubeconfig: 'k.yaml', allNamespaces: false } },
  ],
  [
    'kubernetes from the environment, all namespaces, a shard',
    { allNamespaces: true, selector: 'tier=canary' },
    { WORKER_STACKS_STORE: 'kubernetes' },
    { kind: 'kubernetes', options: { allNamespaces: true, labelSelector: 'tier=canary' } },
  ],
])('%s', (_what, opts, env, expected) => {
  // GIVEN flags and environment, WHEN the store options are derived, THEN they name that store
  expect(storeOptions(opts, dirs, env)).toMatchObject(expected);
});

test.each([
  ['an unknown store', { store: 'etcd' }, /--store etcd: give file or kubernetes/],
  ['a Kubernetes flag with the file store', { namespace: 'platform' }, /--namespace is for --store kubernetes/],
  [
    'both namespace flags',
    { store: 'kubernetes', namespace: 'a', allNamespaces: true },
    /--namespace or --all-namespaces, not both/,
  ],
  [
    'a selector term that is not one',
    { store: 'kubernetes', selector: 'tier=canary,tier in (a' },
    /-l "tier in \(a": not a label selector term/,
  ],
])('refused: %s', (_what, opts, message) => {
  // GIVEN a misuse, WHEN the options are derived, THEN a usage error names the flag
  expect(() => storeOptions(opts, dirs, {})).toThrow(UsageError);
  expect(() => storeOptions(opts, dirs, {})).toThrow(message);
});

test('namespace/name picks that namespace with the Kubernetes store, and is refused with the file store', () => {
  // GIVEN the Kubernetes store over all namespaces, WHEN a namespace/name is given, THEN that namespace alone is used
  const k = storeOptions({ store: 'kubernetes', allNamespaces: true }, dirs, {});
  expect(clusterArgument('platform/prod-eu1', k)).toMatchObject({
    name: 'prod-eu1',
    store: { kind: 'kubernetes', options: { namespace: 'platform', allNamespaces: false } },
  });
  expect(clusterArgument('prod-eu1', k)).toMatchObject({ name: 'prod-eu1', store: k });
  // AND with the file store it is a usage error
  expect(() => clusterArgument('platform/prod-eu1', storeOptions({}, dirs, {}))).toThrow(
    /namespace\/name is for --store kubernetes/,
  );
});

test('through the CLI: exit 2 and one line naming the flag, nothing read', async () => {
  // GIVEN status with a Kubernetes flag but the file store, WHEN run, THEN exit 2 with the flag named
  let err = '';
  const code = await runCli(['status', '--namespace', 'platform'], { out: () => undefined, err: (t) => (err += t) });
  expect(code).toBe(2);
  expect(err).toBe('error: --namespace is for --store kubernetes\n');
});

describe('from the registry (lib/adapters/stores/registry.ts)', () => {
  const longOf = (flags: string) => /--[a-z-]+/.exec(flags)?.[0] ?? flags;
  const keyOf = (flags: string) =>
    longOf(flags)
      .slice(2)
      .replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
  const registered = STORE_KINDS.flatMap((kind) => STORES[kind].flags.map((f) => [kind, f.flags] as const));

  test('every registered store is a --store choice, and every flag of each is on the store commands', () => {
    // GIVEN a command with the store flags, WHEN its options are read, THEN --store names every kind, and every flag is there
    const options = storeFlags(new Command('status')).options;
    const store = options.find((o) => o.long === '--store');
    for (const kind of STORE_KINDS) expect(store?.description).toContain(`${kind} (${STORES[kind].description})`);
    expect(options.map((o) => o.flags)).toEqual(['--store <kind>', ...registered.map(([, flags]) => flags)]);
  });

  test.each(
    registered.flatMap(([kind, flags]) =>
      STORE_KINDS.filter((k) => k !== kind).map((other) => [flags, kind, other] as const),
    ),
  )('%s (a %s flag) is refused with --store %s', (flags, kind, other) => {
    // GIVEN a store's flag with another store chosen, WHEN the options are derived, THEN a usage error names both
    expect(() => storeOptions({ store: other, [keyOf(flags)]: 'x' }, dirs, {})).toThrow(
      `${longOf(flags)} is for --store ${kind}`,
    );
  });

  test("a name that is not a registry key is no store, even one every object has ('toString')", () => {
    // GIVEN --store toString, WHEN the options are derived, THEN it is refused naming the registered kinds
    expect(() => storeOptions({ store: 'toString' }, dirs, {})).toThrow(
      `--store toString: give ${STORE_KINDS.join(' or ')}`,
    );
  });
});
