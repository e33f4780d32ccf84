import type { WatchLogger } from '../kube/watch';
import { ClusterStore } from '../ports/cluster-store';
import { FileStore } from './file-store';

/** Which store holds the cluster objects. A new store is one file plus one entry here. */
export interface StoreOptions {
  /** @default file */
  readonly kind?: 'file' | 'kubernetes';
  /** Directory of `<name>.yaml` cluster objects (the file store). */
  readonly clustersDir: string;
  /** Where the file store keeps status. @default <clustersDir>/.status */
  readonly stateDir?: string;
  /** Directory file names are shown relative to. @default process.cwd() */
  readonly relativeTo?: string;
  /** The Kubernetes store: which API server, namespace(s) and shard. @default kubeconfig's, its namespace, all objects */
  readonly kubernetes?: KubernetesStoreOptions;
  /** Where a store's watch logs its failures (the daemon's logger). @default JSON lines on stderr */
  readonly log?: WatchLogger;
}

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

/** The file store's extras: the names of clusters whose object is gone but whose status stays. */
export interface StoreWithHistory extends ClusterStore {
  statusNames(): string[];
  /** Releases connections and watches (a CLI command then exits at once). @default nothing to release */
  close?(): void;
}

/** The one place a store is constructed. */
export function createStore(opts: StoreOptions): StoreWithHistory {
  switch (opts.kind ?? 'file') {
    case 'file':
      return new FileStore({ clustersDir: opts.clustersDir, stateDir: opts.stateDir, relativeTo: opts.relativeTo });
    case 'kubernetes': {
      // Loaded only when asked for: a file-store run never loads the Kubernetes client.
      const { KubeClient } = require('../kube/client') as typeof import('../kube/client');
      const { KubernetesStore } = require('./kubernetes-store') as typeof import('./kubernetes-store');
      const k = opts.kubernetes ?? {};
      const client = KubeClient.fromOptions({ kubeconfig: k.kubeconfig });
      return new KubernetesStore({ client, namespace: k.allNamespaces ? undefined : (k.namespace ?? client.defaultNamespace), labelSelector: k.labelSelector, log: opts.log });
    }
  }
}
