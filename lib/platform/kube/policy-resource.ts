import { API_VERSION } from '../../model/cluster/schema/schema';
import { POLICY_KIND } from '../../model/cluster/schema/policy-schema';
import { GROUP, VERSION } from './crd';
import { POLICY_PLURAL } from './policy-crd';
import { KubeObjectMeta } from './resource';

/** A WorkerRolloutPolicy as the API server returns it (only the fields read). */
export interface KubeRolloutPolicy {
  apiVersion?: string;
  kind?: string;
  metadata: KubeObjectMeta;
  spec?: Record<string, unknown>;
}

/** The collection path, in one namespace or all. */
export function policyCollectionPath(namespace: string | undefined): string {
  return namespace
    ? `/apis/${GROUP}/${VERSION}/namespaces/${encodeURIComponent(namespace)}/${POLICY_PLURAL}`
    : `/apis/${GROUP}/${VERSION}/${POLICY_PLURAL}`;
}

export function policyObjectPath(namespace: string, name: string): string {
  return `${policyCollectionPath(namespace)}/${encodeURIComponent(name)}`;
}

/**
 * The policy as the file format has it: apiVersion, kind, name, labels and spec. The API server's own metadata (uid,
 * managedFields, kubectl's last-applied annotation) is not part of the policy and would only make its schema refuse it.
 */
export function policyRaw(o: KubeRolloutPolicy): unknown {
  return {
    apiVersion: o.apiVersion ?? API_VERSION,
    kind: o.kind ?? POLICY_KIND,
    metadata: {
      name: o.metadata.name,
      ...(o.metadata.generation ? { generation: o.metadata.generation } : {}),
      ...(o.metadata.labels ? { labels: o.metadata.labels } : {}),
    },
    spec: o.spec ?? {},
  };
}
