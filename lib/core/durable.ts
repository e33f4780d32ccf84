import * as fs from 'node:fs';

/**
 * fs.fsyncSync, which the stores call before a rename makes a write visible (a power cut leaves the old bytes or the
 * new ones). WORKER_STACKS_UNSAFE_NO_FSYNC=1, a test seam (not a setting: no flag, no docs), skips it, as the tests'
 * etcd runs with --unsafe-no-fsync: a test's files are thrown away, a killed process (what the crash tests do) loses
 * nothing fsync would have kept, and on a shared disk the flushes were a fifth of a fleet rollout test's wall time.
 */
export function fsyncUnlessUnsafe(fd: number): void {
  if (process.env.WORKER_STACKS_UNSAFE_NO_FSYNC === '1') return;
  fs.fsyncSync(fd);
}
