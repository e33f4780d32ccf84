import * as fs from 'node:fs';
import * as path from 'node:path';
import { workerStackName } from '../../core/naming';

// Where syntheses go under a work dir, apart from synthesize.ts: the reconciler names and drops assemblies without
// loading aws-cdk-lib, which it needs only when it synthesizes (tasks/roll-key.ts loads the synthesis at first use).

/**
 * The directory name of one stack's assemblies under a work dir: the cluster's name for its shared stack (as before
 * pools), the stack's own name for a pool's stack (a cluster name is a DNS label, never `WorkerStack-...`), so the
 * stacks of one cluster can be synthesized at once without removing each other's assemblies.
 */
export function assemblyKey(cluster: string, stackName: string = workerStackName(cluster)): string {
  return stackName === workerStackName(cluster) ? cluster : stackName;
}

/** Where the assemblies of one stack (`assemblyKey`) go under a work dir. */
export function assemblyDir(workDir: string, key: string): string {
  return path.join(workDir, key);
}

/**
 * Drops the assembly of one stack (`key` from assemblyKey: the cluster's name for its shared stack). It is scratch once its assets are published (the change set takes the template from
 * memory or S3), and the work dir may be memory (/dev/shm). Never throws: a directory that cannot be removed must
 * not turn a reconcile's outcome into an error; it is reported and overwritten by the next synthesis.
 */
export function removeAssembly(workDir: string, key: string, warn: (msg: string) => void = () => undefined): void {
  try {
    fs.rmSync(assemblyDir(workDir, key), { recursive: true, force: true });
  } catch (e) {
    warn(`could not remove the assembly of ${key} in ${workDir}: ${(e as Error).message}`);
  }
}
