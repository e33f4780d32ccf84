import { KubeClient } from '../../platform/kube/client';
import { postEvent } from '../../platform/kube/events';
import { KubeWorkerCluster, namespaceOf } from '../../platform/kube/resource';
import { ObjectEvent } from '../../model/ports/event-sink';

// The Kubernetes store's events, apart from its reads and status writes: the object an event of a record goes to
// (the one its key names: kubernetes-duplicates.ts), and the posts still under way, which the daemon waits for before
// it exits (flush).

/** What the events need of the store: its reads of a name's objects. */
export interface KubernetesEventsProps {
  readonly client: KubeClient;
  /** The object a record key names. */
  readonly locate: (key: string) => Promise<KubeWorkerCluster>;
}

/** core/v1 Events on WorkerCluster objects (what `kubectl describe wc <name>` lists). */
export class KubernetesEvents {
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly props: KubernetesEventsProps) {}

  public emit(cluster: string, event: ObjectEvent): Promise<void> {
    const p = this.post(cluster, event);
    this.pending.add(p);
    return p.finally(() => this.pending.delete(p));
  }

  public async flush(): Promise<void> {
    await Promise.allSettled([...this.pending]);
  }

  private async post(cluster: string, event: ObjectEvent): Promise<void> {
    const o = await this.props.locate(cluster);
    await postEvent(
      this.props.client,
      {
        apiVersion: o.apiVersion,
        kind: o.kind,
        name: o.metadata.name,
        namespace: namespaceOf(o),
        uid: o.metadata.uid,
        resourceVersion: o.metadata.resourceVersion,
      },
      event,
    );
  }
}
