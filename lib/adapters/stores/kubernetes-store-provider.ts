import * as fs from 'node:fs';
import * as os from 'node:os';
import { UsageError } from '../../core/errors';
import { KubeClient } from '../../platform/kube/client';
import { LabelSelector } from '../../platform/kube/label-selector';
import { apiLeaseStore, LeaderElector } from '../../platform/kube/leader-election';
import { describeScope, shardGuard, shardLeaseMetadata, shardLeaseName, ShardScope } from '../../platform/kube/shards';
import { ShardMonitor } from '../../platform/kube/shard-monitor';
import { KubernetesPolicySource } from './kubernetes-policy-source';
import { KubernetesChannelStore } from './kubernetes-channel-store';
import { KubernetesStore } from './kubernetes-store';
import { ElectionLogger, flagString, LeaderSettings, StoreProvider } from './store-provider';

/** The Kubernetes store: which API server, namespace(s) and shard. */
export interface KubernetesStoreOptions {
  /** A kubeconfig file. @default $KUBECONFIG, ~/.kube/config, or the in-cluster service account */
  readonly kubeconfig?: string;
  /** One namespace; `allNamespaces` for every one. @default the kubeconfig context's namespace */
  readonly namespace?: string;
  /** Watch every namespace. @default false */
  readonly allNamespaces?: boolean;
  /** A label selector: the shard this daemon owns. @default every object */
  readonly labelSelector?: string;
}

/**
 * `--store kubernetes`: WorkerCluster custom resources (status subresource, resourceVersion), WorkerRolloutPolicy and
 * WorkerImageChannel objects in one namespace or all. It puts events on the objects, takes `namespace/name` arguments and elects a
 * leader per shard (a Lease); status lives and goes with the object (no history).
 */
export const KUBERNETES_STORE: StoreProvider<KubernetesStoreOptions, KubernetesStore> = {
  description: 'WorkerCluster custom resources',
  naming: 'metadata.name',
  flags: [
    {
      flags: '--kubeconfig <file>',
      description:
        '--store kubernetes: the kubeconfig (default $KUBECONFIG, ~/.kube/config, or the pod service account)',
    },
    {
      flags: '-n, --namespace <ns>',
      description: "--store kubernetes: the namespace of the objects (default the kubeconfig context's)",
    },
    {
      flags: '-A, --all-namespaces',
      description: '--store kubernetes: every namespace (names must then be unique across them)',
    },
    {
      flags: '-l, --selector <labels>',
      description: '--store kubernetes: only objects with these labels (tier=canary): one daemon per shard',
    },
  ],
  parseOptions(values) {
    const namespace = flagString(values, 'namespace');
    const allNamespaces = Boolean(values.allNamespaces);
    if (namespace && allNamespaces) throw new UsageError('give --namespace or --all-namespaces, not both');
    const labelSelector = flagString(values, 'selector');
    // A bad selector is refused here, naming the term, rather than by the API server at the first list.
    if (labelSelector !== undefined) LabelSelector.parse(labelSelector);
    return { kubeconfig: flagString(values, 'kubeconfig'), namespace, allNamespaces, labelSelector };
  },
  createStore(k, context) {
    const client = KubeClient.fromOptions({ kubeconfig: k.kubeconfig });
    return new KubernetesStore({
      client,
      namespace: scopeOf(k, client),
      labelSelector: k.labelSelector,
      log: context.log,
    });
  },
  createPolicySource(k, context) {
    // Policies of the same namespace(s) as the WorkerClusters: the label selector shards clusters, not policies.
    const client = KubeClient.fromOptions({ kubeconfig: k.kubeconfig });
    return new KubernetesPolicySource({ client, namespace: scopeOf(k, client), ownsClient: true, log: context.log });
  },
  createChannelStore(k) {
    // Channels of the same namespace(s) as the WorkerClusters (the label selector shards clusters, not channels).
    const client = KubeClient.fromOptions({ kubeconfig: k.kubeconfig });
    return new KubernetesChannelStore({ client, namespace: scopeOf(k, client), ownsClient: true });
  },
  close: (store) => {
    store.close();
  },
  events: (store) => store,
  qualifiedNames: { narrow: (k, namespace) => ({ ...k, namespace, allNamespaces: false }) },
  leaderElection: { elector: kubernetesElector },
};

/** One namespace (the flag's, else the kubeconfig context's), or undefined for all. */
function scopeOf(k: KubernetesStoreOptions, client: KubeClient): string | undefined {
  return k.allNamespaces ? undefined : (k.namespace ?? client.defaultNamespace);
}

const SA_NAMESPACE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

/**
 * The Kubernetes store's leader election: a coordination.k8s.io Lease per shard (the store's namespace and label
 * selector), in the pod's namespace; while leading, a monitor reports objects no shard (or two) selects.
 */
export function kubernetesElector(
  k: KubernetesStoreOptions,
  settings: LeaderSettings,
  log: ElectionLogger,
): LeaderElector {
  const client = KubeClient.fromOptions({ kubeconfig: k.kubeconfig });
  const namespace =
    settings.leaseNamespace ??
    process.env.POD_NAMESPACE ??
    readIfExists(SA_NAMESPACE) ??
    k.namespace ??
    client.defaultNamespace;
  // The shard: which objects this daemon owns. Its Lease is named from it, so two shards never share one.
  const scope: ShardScope = {
    shard: settings.shard,
    namespace: k.allNamespaces ? undefined : (k.namespace ?? client.defaultNamespace),
    selector: LabelSelector.parse(k.labelSelector),
  };
  const leaseName = settings.leaseName ?? shardLeaseName(scope);
  const lease = `${namespace}/${leaseName}`;
  // The pod name (HOSTNAME in a pod) plus the pid: two processes on one machine are two candidates.
  const identity = settings.identity ?? `${process.env.POD_NAME ?? os.hostname()}_${String(process.pid)}`;
  const shard = {
    client,
    leaseNamespace: namespace,
    leaseName,
    scope,
    log,
    checkIntervalMs: settings.shardCheckMs,
    // A shard starting a little later, or one whose Lease lapsed in an outage, is not reported as missing.
    reportAfterMs: 2 * settings.leaseDurationMs,
  };
  const elector = new LeaderElector(apiLeaseStore(client, namespace, leaseName), {
    identity,
    namespace,
    name: leaseName,
    leaseDurationMs: settings.leaseDurationMs,
    renewDeadlineMs: settings.renewDeadlineMs,
    retryPeriodMs: settings.retryPeriodMs,
    metadata: shardLeaseMetadata(scope),
    guard: shardGuard(shard),
    onNewLeader: (holder) => {
      log.info({ lease, holder, self: holder === identity }, 'leader');
    },
    onError: (e) => {
      log.warn({ lease, err: String(e) }, 'lease attempt failed');
    },
  });
  log.info({ lease, shard: describeScope(scope) }, "campaigning for the shard's Lease");
  // While leading: who owns what (objects no shard selects, or two), counted, logged and reported.
  const monitor = new ShardMonitor(shard);
  elector.subscribe((leading) => {
    if (leading) monitor.start();
    else void monitor.stop();
  });
  return elector;
}

function readIfExists(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}
