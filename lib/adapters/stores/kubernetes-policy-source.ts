import { KubeApiError, WorkerStacksError } from '../../core/errors';
import { KubeClient } from '../../platform/kube/client';
import { postEvent } from '../../platform/kube/events';
import {
  KubeRolloutPolicy,
  policyCollectionPath,
  policyObjectPath,
  policyRaw,
} from '../../platform/kube/policy-resource';
import { Informer, InformerOptions, WatchLogger } from '../../platform/kube/watch';
import {
  PolicyEvent,
  PolicyRef,
  LoadedPolicies,
  LoadedPolicy,
  PolicyProblem,
  RolloutPolicySource,
  validatePolicy,
} from '../../engines/rollout';
import { POLICY_KIND } from '../../model/cluster/schema/policy-schema';

export interface KubernetesPolicySourceProps {
  readonly client: KubeClient;
  /** One namespace, or undefined for all namespaces (the store's). */
  readonly namespace?: string;
  /** List + watch settings. @default see InformerOptions */
  readonly informer?: Omit<InformerOptions, 'labelSelector'>;
  /** close() closes the client too (the source made it). @default false */
  readonly ownsClient?: boolean;
  /** Where the watch logs its failures. @default JSON lines on stderr */
  readonly log?: WatchLogger;
}

/**
 * Rollout policies as `workerrolloutpolicies.worker-stacks.io` custom resources (lib/platform/kube/policy-crd.ts), in the
 * namespaces the Kubernetes store reads. Like the store: reads come from a list + watch cache once `watch()` has
 * started it (the daemon: a look at the fleet costs no request), straight from the API server otherwise (a CLI
 * command); the watch relists on 410 Gone and restarts with backoff (lib/platform/kube/watch.ts). Each object is validated as
 * a policy file is, and named `WorkerRolloutPolicy/<name>` where the file store names its file (with every
 * namespace watched, `WorkerRolloutPolicy/<namespace>/<name>`). A policy governs the clusters of its own namespace.
 */
export class KubernetesPolicySource implements RolloutPolicySource {
  private readonly client: KubeClient;
  private informer?: Informer<KubeRolloutPolicy>;
  private readonly listeners = new Set<() => void>();
  private readonly pending = new Set<Promise<void>>();
  private waitedForSync = false;

  constructor(private readonly props: KubernetesPolicySourceProps) {
    this.client = props.client;
  }

  public async load(): Promise<LoadedPolicies> {
    const objects = (await this.objects()).sort((a, b) => key(a).localeCompare(key(b)));
    const policies: LoadedPolicy[] = [];
    const problems: PolicyProblem[] = [];
    for (const o of objects) {
      const source = this.sourceOf(o);
      const namespace = o.metadata.namespace;
      const r = validatePolicy(policyRaw(o), source);
      problems.push(...r.problems.map((p) => ({ ...p, namespace })));
      if (r.policy) policies.push({ policy: r.policy, source, namespace });
    }
    return { policies, problems };
  }

  /** spec.paused by merge patch (resume removes the field, as the file store does). */
  public async setPaused(name: string, paused: boolean): Promise<void> {
    const o = await this.locate(name);
    const { body } = await this.client.request<KubeRolloutPolicy>(
      'PATCH',
      policyObjectPath(namespaceOf(o), name),
      { spec: { paused: paused ? true : null } },
      'application/merge-patch+json',
    );
    this.informer?.observe(body);
    for (const l of this.listeners) l();
  }

  public watch(onChange: () => void): () => void {
    this.listeners.add(onChange);
    this.startInformer();
    return () => {
      this.listeners.delete(onChange);
      if (this.listeners.size === 0) this.stopInformer();
    };
  }

  /** A core/v1 Event on the policy object (`kubectl describe wrp <name>`). */
  public emit(policy: PolicyRef, event: PolicyEvent): Promise<void> {
    const p = this.postOn(policy, event);
    this.pending.add(p);
    return p.finally(() => this.pending.delete(p));
  }

  public async flush(): Promise<void> {
    await Promise.allSettled([...this.pending]);
  }

  public close(): void {
    this.stopInformer();
    if (this.props.ownsClient) this.client.close();
  }

  private async postOn(policy: PolicyRef, event: PolicyEvent): Promise<void> {
    const namespace = policy.namespace ?? this.props.namespace;
    // The watch cache has the object (and its uid, which kubectl describe matches events on); else it is read.
    const o =
      (namespace && this.informer?.items.get(`${namespace}/${policy.name}`)) ||
      (await this.locate(policy.name, namespace));
    await postEvent(
      this.client,
      {
        apiVersion: o.apiVersion,
        kind: o.kind ?? POLICY_KIND,
        name: o.metadata.name,
        namespace: namespaceOf(o),
        uid: o.metadata.uid,
        resourceVersion: o.metadata.resourceVersion,
      },
      event,
    );
  }

  private sourceOf(o: KubeRolloutPolicy): string {
    return this.props.namespace
      ? `${POLICY_KIND}/${o.metadata.name}`
      : `${POLICY_KIND}/${o.metadata.namespace}/${o.metadata.name}`;
  }

  private startInformer(): void {
    if (this.informer) return;
    // The first list delivers every object as ADDED, and a resync all of them again: neither is a change (the daemon
    // looks at every cluster when it starts and at each resync anyway).
    let primed = false;
    const informer = new Informer<KubeRolloutPolicy>(
      this.client,
      policyCollectionPath(this.props.namespace),
      (type) => {
        if (!primed || type === 'RESYNC') return;
        for (const l of this.listeners) l();
      },
      { ...this.props.informer, store: 'kubernetes-policies', log: this.props.log },
    );
    void informer.synced().then(() => (primed = true));
    this.informer = informer;
    informer.start();
  }

  private stopInformer(): void {
    this.informer?.stop();
    this.informer = undefined;
  }

  /** From the watch cache once it has listed; otherwise a (paginated) list from the API server. */
  private async objects(): Promise<KubeRolloutPolicy[]> {
    // The daemon's first look waits for the cache's first list (once: a watch that cannot list, the CRD not
    // installed say, must not slow every later look; those list directly until it has).
    if (this.informer && !this.informer.hasSynced && !this.waitedForSync) {
      this.waitedForSync = true;
      await Promise.race([this.informer.synced(), delay(SYNC_WAIT_MS)]);
    }
    if (this.informer?.hasSynced) return [...this.informer.items.values()];
    try {
      return await this.list();
    } catch (e) {
      // No WorkerRolloutPolicy resource (its CRD is not installed): there is no policy, as with no policy directory.
      if (e instanceof KubeApiError && e.statusCode === 404) return [];
      throw e;
    }
  }

  private async list(fieldSelector?: string, namespace = this.props.namespace): Promise<KubeRolloutPolicy[]> {
    const q = new URLSearchParams({ limit: '500' });
    if (fieldSelector) q.set('fieldSelector', fieldSelector);
    const out: KubeRolloutPolicy[] = [];
    for (let cont: string | undefined; ;) {
      if (cont) q.set('continue', cont);
      const { body } = await this.client.request<{
        metadata: { continue?: string };
        items: KubeRolloutPolicy[] | null;
      }>('GET', `${policyCollectionPath(namespace)}?${q.toString()}`);
      out.push(...(body.items ?? []));
      cont = body.metadata.continue || undefined;
      if (!cont) return out;
    }
  }

  /** The one policy of that name (in the namespace, or in all of them, where it must then be unique). */
  private async locate(name: string, namespace = this.props.namespace): Promise<KubeRolloutPolicy> {
    const where = namespace ? `namespace ${namespace}` : 'any namespace';
    let found: KubeRolloutPolicy[];
    if (namespace) {
      try {
        found = [(await this.client.request<KubeRolloutPolicy>('GET', policyObjectPath(namespace, name))).body];
      } catch (e) {
        if (!(e instanceof KubeApiError && e.statusCode === 404)) throw e;
        found = [];
      }
    } else {
      found = await this.list(`metadata.name=${name}`, undefined);
    }
    if (found.length === 0)
      throw new WorkerStacksError(`no rollout policy ${name} (${POLICY_KIND}) in ${where}`, {
        hint: `kubectl get wrp ${namespace ? `-n ${namespace}` : '-A'} lists them (worker-stacks rollout status --store kubernetes shows their waves)`,
      });
    if (found.length > 1)
      throw new WorkerStacksError(
        `rollout policy ${name} is in several namespaces (${found.map((o) => o.metadata.namespace).join(', ')})`,
        { hint: `name one: <namespace>/${name}, or pass --namespace` },
      );
    return found[0];
  }
}

const SYNC_WAIT_MS = 30_000;

/** The API server sets a namespaced object's namespace; a policy read without one is a broken response. */
function namespaceOf(o: KubeRolloutPolicy): string {
  const ns = o.metadata.namespace;
  if (!ns) {
    throw new WorkerStacksError(`rollout policy ${o.metadata.name} came back from the API server without a namespace`, {
      hint: 'WorkerRolloutPolicy is namespaced: apply the CRDs that `worker-stacks crd` prints',
    });
  }
  return ns;
}

function key(o: KubeRolloutPolicy): string {
  return `${o.metadata.namespace ?? ''}/${o.metadata.name}`;
}

function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms).unref());
}
