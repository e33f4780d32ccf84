import { canonicalJson } from '../../../model/cloudconfig/canonical-json';
import { sha256Hex } from '../../../model/cloudconfig/checksum';
import { WorkerCluster } from '../../../model/cluster/schema';
import { codeFingerprint } from '../runtime/code-version';

export { codeFingerprint } from '../runtime/code-version';

/**
 * Everything that feeds the template: code, spec and the config's bytes (through its checksum). `spec.paused` is left
 * out: pausing and resuming a cluster is not a change to deploy.
 */
export function inputsFingerprint(
  cluster: WorkerCluster,
  configChecksum: string,
  code: string = codeFingerprint(),
): string {
  const { paused, ...spec } = cluster.spec;
  return sha256Hex(canonicalJson({ code, name: cluster.metadata.name, spec, configChecksum }));
}
