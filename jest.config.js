// @kubernetes/client-node 1.x and the OpenID modules it imports are ES modules; Node 20 requires them natively, but
// jest's module loader does not: ts-jest compiles them to CommonJS (once; jest caches the result).
const ESM = ['@kubernetes/client-node', 'openid-client', 'oauth4webapi', 'jose'];

/** @type {import('jest').Config} */
module.exports = {
  // node, measuring each file's CPU time for the slowest-suites report
  testEnvironment: '<rootDir>/test/environment/measured-node.js',
  // jest's runtime with a per-worker V8 code cache of the modules test files load (the file says why)
  runtime: '<rootDir>/test/environment/cached-runtime.js',
  roots: ['<rootDir>/test'],
  rootDir: '.',
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { diagnostics: false }],
    [`^.+/node_modules/(${ESM.join('|')})/.+\\.m?js$`]: [
      'ts-jest',
      { diagnostics: false, tsconfig: { allowJs: true, module: 'commonjs', target: 'ES2022' } },
    ],
  },
  transformIgnorePatterns: [`/node_modules/(?!(${ESM.join('|')})/)`],
  // Four workers on the 2-core machine: about half the suite's worker time is waiting (a lease to expire, a stack in
  // progress, a process to start: the slowest-suites report prints wall and CPU per file), and the extra workers fill
  // it (measured, warm caches: 2 workers ~1,000 s, 3 ~750 s, 4 ~640 s). Each worker loads aws-cdk-lib (~300 MB); four
  // fit the machine's 24 GiB many times over.
  maxWorkers: 4,
  testTimeout: 120000,
  setupFiles: ['<rootDir>/test/setup-env.ts'],
  // The slowest files at the end of every run (issue 34: the suite's time budget).
  reporters: ['default', ['<rootDir>/test/reporters/slowest-suites.js', { count: 15 }]],
  // Slowest files first, from jest's cache or, on a clean clone, from test/sequencer/durations.json.
  testSequencer: '<rootDir>/test/sequencer/slowest-first.js',
};
