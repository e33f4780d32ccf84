/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  rootDir: '.',
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] },
  // Each worker loads aws-cdk-lib (~300 MB); two workers fit the 2-core machine.
  maxWorkers: 2,
  testTimeout: 120000,
  setupFiles: ['<rootDir>/test/setup-env.ts'],
};
