import { canonicalJson } from '../../../model/cloudconfig/canonical-json';
import { sha256Hex } from '../../../model/cloudconfig/checksum';
import { WorkerCluster } from '../../../model/cluster/schema/schema';
import { DEFAULT_POOL } from '../../../model/cluster/pools/pools';
import { codeFingerprint } from './code-version';

/**
 * Everything that feeds one stack's template: code, spec and the config's bytes (through its checksum). `spec.paused`
 * is left out: pausing and resuming a cluster is not a change to deploy. Of spec.pools, a stack sees its own pool
 * whole (the pool default for the shared stack) and of every other pool only its name and taints (whether there are
 * pools to export to, which pools a listener takes): an edit of one pool changes that pool's stack's inputs only, so
 * no other stack of the cluster gets a change set. A spec.pool object's fingerprint is what it was before pools.
 */
export function inputsFingerprint(
  cluster: WorkerCluster,
  configChecksum: string,
  code: string = codeFingerprint(),
  pool: string = DEFAULT_POOL,
): string {
  const { paused, ...whole } = cluster.spec;
  const spec = whole.pools
    ? { ...whole, pools: whole.pools.map((p) => (p.name === pool ? p : { name: p.name, taints: p.taints })) }
    : whole;
  return sha256Hex(canonicalJson({ code, name: cluster.metadata.name, spec, configChecksum }));
}
