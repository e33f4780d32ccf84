import { FilePolicySource } from '../rollout/policy-source';
import type { RolloutPolicySource } from '../rollout/policy-source';
import { StoreOptions } from './create-store';

/**
 * The one place a rollout-policy source is constructed, from the store the flags name (--store): the file store's
 * policies are `<clusters>/rollout-policies/*.yaml`, the Kubernetes store's are WorkerRolloutPolicy objects in the
 * same namespace(s) as its WorkerClusters (its label selector shards clusters, not policies).
 */
export function createPolicySource(opts: StoreOptions): RolloutPolicySource {
  switch (opts.kind ?? 'file') {
    case 'file':
      return new FilePolicySource({ clustersDir: opts.clustersDir, relativeTo: opts.relativeTo });
    case 'kubernetes': {
      // Loaded only when asked for: a file-store run never loads the Kubernetes client.
      const { KubeClient } = require('../kube/client') as typeof import('../kube/client');
      const { KubernetesPolicySource } = require('./kubernetes-policy-source') as typeof import('./kubernetes-policy-source');
      const k = opts.kubernetes ?? {};
      const client = KubeClient.fromOptions({ kubeconfig: k.kubeconfig });
      return new KubernetesPolicySource({ client, namespace: k.allNamespaces ? undefined : (k.namespace ?? client.defaultNamespace), ownsClient: true, log: opts.log });
    }
  }
}
