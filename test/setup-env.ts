import * as os from 'node:os';

// aws-cdk-lib's built-in template validation costs ~1.7 s and ~350 MB per synth; cfn-lint covers the same
// ground in test/engines/stacks/cfn-lint.test.ts, and the `cdk synth` CLI test runs with it on.
process.env.CDK_VALIDATION = process.env.CDK_VALIDATION ?? 'false';
// Processes of the tests that are killed (jest's own workers at the end of a run) leave their synthesis work dirs
// behind: in the temp dir, not in /dev/shm (memory) where the daemon puts them by default (test/adapters/cli/wiring.test.ts).
process.env.WORKER_STACKS_WORK_DIR = process.env.WORKER_STACKS_WORK_DIR ?? os.tmpdir();
// The stores' fsync (lib/core/durable.ts) flushes files every test throws away: on this shared disk it was a fifth of
// a fleet rollout's wall time. test/adapters/stores/file-store-crash.test.ts keeps it (its kills aim at a slow write).
process.env.WORKER_STACKS_UNSAFE_NO_FSYNC = process.env.WORKER_STACKS_UNSAFE_NO_FSYNC ?? '1';
// Each task of the reconciler runs on a context whose dependencies throw on one it did not declare
// (lib/engines/reconciler/workflow/deps-guard.ts): every test that runs a reconcile checks the tasks' `deps` lists.
process.env.WORKER_STACKS_CHECK_DEPS = process.env.WORKER_STACKS_CHECK_DEPS ?? '1';
