// The layers of lib/ (docs/design.md, "Layers"), enforced: `npm run lint:layers`.
//
// lib/<layer>/<concern>/ — a file may import its own concern and any concern of a lower tier, never a higher one;
// no two files import each other, directly or round a loop; every lib file is imported by something (or is an entry
// point); lib/ and bin/ never import test/, bench/ or scripts/. Tests, bench and scripts may import anything (they
// are not cruised). test/house/layers.test.ts proves each rule can fail.

/**
 * Lowest first. Folders in one tier may import each other (file cycles are still refused); a folder never imports
 * one of a later tier. bin/ is above everything.
 */
const TIERS = [
  // core: depends on nothing in lib/
  ['core'],
  // model: the objects (WorkerCluster, RolloutPolicy) and the node config formats ...
  ['model/cloudconfig', 'model/cluster', 'model/channel'],
  // ... and the ports engines and adapters meet at (ClusterStore, the CloudFormation port)
  ['model/ports'],
  // platform: typed clients of the AWS and Kubernetes APIs and of the file system (no decisions)
  ['platform/aws', 'platform/kube', 'platform/files'],
  // engines: what turns objects into stacks and keeps them in step
  ['engines/constructs'],
  ['engines/stacks'],
  ['engines/synthesis'],
  // deploying and deleting stacks: the reconciler's tasks, bootstrap and delete all go through it
  ['engines/deploy'],
  ['engines/rollout'],
  // image channels: which machine image a pool that names a channel runs (read once a poll; a failed roll halts a release)
  ['engines/channels'],
  ['engines/review'],
  // the reconciler's rooms, one direction (issue 34): the vocabulary every task speaks (context, state, conditions,
  // the task runner), the tasks, the workflows composed of them, and the runtime that drives them
  ['engines/reconciler/workflow'],
  ['engines/reconciler/tasks'],
  ['engines/reconciler/compose'],
  ['engines/reconciler/runtime', 'engines/reconciler/index.ts'],
  // adapters: the stores of objects and statuses, the playground, the CLI
  ['adapters/stores'],
  ['adapters/playground'],
  ['adapters/cli'],
];
const LAYER_FOLDERS = [...new Set(TIERS.flat().map((f) => f.split('/')[0]))];
// A tier entry is a folder, or one file (an engine's front door beside its tier folders).
const folder = (f) => (f.endsWith('.ts') ? `^lib/${f.replace(/\./g, '\\.')}$` : `^lib/${f}/`);

// (The top tier has nothing above it: an empty `to.path` would match every module.)
const upward = TIERS.slice(0, -1).flatMap((tier, i) =>
  tier.map((f) => ({
    name: `no-upward-import:${f}`,
    comment: `lib/${f} is in tier ${i} of .dependency-cruiser.cjs's TIERS: it may import only its own folder and lower tiers. Move the concept you need down (an interface to model/ports, a type to core) instead.`,
    severity: 'error',
    from: { path: folder(f) },
    to: {
      path: TIERS.slice(i + 1)
        .flat()
        .map(folder),
    },
  })),
);

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...upward,
    {
      name: 'no-file-io-in-model',
      comment:
        'lib/model/ is pure (issue 34: keep model/ free of file I/O): it parses and checks what it is given. Reading files (cluster objects, and templates through the TemplateSource port of lib/model/cloudconfig/template-source.ts: lib/platform/files/) and running processes happen above it.',
      severity: 'error',
      from: { path: '^lib/model/' },
      to: { path: '^(node:)?(fs|fs/promises|child_process)$' },
    },
    {
      name: 'no-circular',
      comment:
        'Two files that import each other (directly or round a loop): move what both need into a third file below them.',
      severity: 'error',
      from: { path: '^(lib|bin)/' },
      to: { circular: true },
    },
    {
      name: 'in-a-layer',
      comment: `Every lib/ file lives in a folder (or is a file) of TIERS (lib/{${TIERS.flat().join(',')}}): a file beside them would have no tier.`,
      severity: 'error',
      from: { path: '^lib/', pathNot: TIERS.flat().map(folder) },
      to: {},
    },
    {
      name: 'through-the-front-door',
      comment:
        "Adapters use an engine through its entry file, lib/engines/<engine>/index.ts: export what they need there (issue 34: the engines' insides can move without touching the CLI).",
      severity: 'error',
      from: { path: '^lib/adapters/' },
      to: { path: '^lib/engines/', pathNot: '^lib/engines/[^/]+/index\\.ts$' },
    },
    {
      name: 'no-orphans',
      comment: 'A lib/ file nothing imports is dead code (or an entry point: list it in pathNot).',
      severity: 'error',
      from: { orphan: true, path: '^lib/', pathNot: ['\\.d\\.ts$', '\\.json$'] },
      to: {},
    },
    {
      name: 'not-to-test',
      comment: 'Production code never imports tests, benchmarks or scripts.',
      severity: 'error',
      from: { path: '^(lib|bin)/' },
      to: { path: '^(test|bench|scripts)/' },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'An import that resolves to no file.',
      severity: 'error',
      from: { path: '^(lib|bin)/' },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: 'node_modules' },
    // `import type` is a dependency too: a type in the wrong layer is a concept in the wrong layer.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.json'] },
  },
};
