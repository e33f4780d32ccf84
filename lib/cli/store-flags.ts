import { UsageError } from '../core/errors';
import { LabelSelector } from '../kube/label-selector';
import { StoreOptions } from '../stores/create-store';
import { InputDirs } from './context';

/**
 * The flags that choose the store, on every command that reads or writes cluster objects: the file store (the
 * default) or WorkerCluster custom resources in a Kubernetes API server.
 */
export function storeFlags<C extends { option: (flags: string, description: string) => C }>(c: C): C {
  return c
    .option('--store <kind>', 'where the cluster objects are: file (clusters/ and its .status) or kubernetes (WorkerCluster custom resources) (env WORKER_STACKS_STORE, default file)')
    .option('--kubeconfig <file>', '--store kubernetes: the kubeconfig (default $KUBECONFIG, ~/.kube/config, or the pod service account)')
    .option('-n, --namespace <ns>', "--store kubernetes: the namespace of the objects (default the kubeconfig context's)")
    .option('-A, --all-namespaces', '--store kubernetes: every namespace (names must then be unique across them)')
    .option('-l, --selector <labels>', '--store kubernetes: only objects with these labels (tier=canary): one daemon per shard');
}

/** The store the flags name; a bad combination is a usage error (exit 2) naming the flag. */
export function storeOptions(opts: Record<string, any>, dirs: InputDirs, env: NodeJS.ProcessEnv = process.env): StoreOptions {
  const kind = opts.store ?? env.WORKER_STACKS_STORE ?? 'file';
  if (kind !== 'file' && kind !== 'kubernetes') throw new UsageError(`--store ${kind}: give file or kubernetes`);
  if (kind === 'file') {
    const k8sOnly = ['kubeconfig', 'namespace', 'allNamespaces', 'selector'].filter((k) => opts[k] !== undefined);
    if (k8sOnly.length) throw new UsageError(`--${k8sOnly[0].replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} is for --store kubernetes`);
    return { kind, clustersDir: dirs.clustersDir, stateDir: opts.stateDir };
  }
  if (opts.namespace && opts.allNamespaces) throw new UsageError('give --namespace or --all-namespaces, not both');
  // A bad selector is refused here, naming the term, rather than by the API server at the first list.
  if (opts.selector !== undefined) LabelSelector.parse(opts.selector);
  return {
    kind,
    clustersDir: dirs.clustersDir,
    kubernetes: { kubeconfig: opts.kubeconfig, namespace: opts.namespace, allNamespaces: Boolean(opts.allNamespaces), labelSelector: opts.selector },
  };
}

/**
 * A cluster argument: `name`, or kubectl's `namespace/name` with the Kubernetes store (which then looks in that
 * namespace). Stack names come from metadata.name alone, so the name is what the store and the reconciler key on.
 */
export function clusterArgument(arg: string, store: StoreOptions, what = 'a cluster'): { name: string; store: StoreOptions } {
  const slash = arg.indexOf('/');
  if (slash < 0) return { name: arg, store };
  if (store.kind !== 'kubernetes') throw new UsageError(`${arg}: namespace/name is for --store kubernetes; the file store names ${what} by its file name`);
  const namespace = arg.slice(0, slash);
  return { name: arg.slice(slash + 1), store: { ...store, kubernetes: { ...store.kubernetes, namespace, allNamespaces: false } } };
}
