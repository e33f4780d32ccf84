import { KubeClient } from '../../platform/kube/client';
import { postEvent } from '../../platform/kube/events';
import { KubeWorkerCluster, namespaceOf, shownName } from '../../platform/kube/resource';
import { ObjectEvent } from '../../model/ports/event-sink';

// The Kubernetes store's events, apart from its reads and status writes: which objects an event of a cluster goes
// to (a name several namespaces share fans out to the objects its last status write changed), and the posts still
// under way, which the daemon waits for before it exits (flush).

/** What the events need of the store: its reads of a name's objects. */
export interface KubernetesEventsProps {
  readonly client: KubeClient;
  /** Every object of the name, as the store reads them (its cache once it has listed). */
  readonly objects: (name: string) => Promise<KubeWorkerCluster[]>;
  /** The one object of the name the store acts on (refused when the name is ambiguous). */
  readonly locate: (name: string) => Promise<KubeWorkerCluster>;
}

/** core/v1 Events on WorkerCluster objects (what `kubectl describe wc <name>` lists). */
export class KubernetesEvents {
  private readonly pending = new Set<Promise<void>>();
  /** Per duplicated name, the objects (`namespace/name`) whose conditions its last status write changed: they get its events. */
  private readonly lastFanOut = new Map<string, ReadonlySet<string>>();

  constructor(private readonly props: KubernetesEventsProps) {}

  public emit(cluster: string, event: ObjectEvent): Promise<void> {
    const p = this.post(cluster, event);
    this.pending.add(p);
    return p.finally(() => this.pending.delete(p));
  }

  public async flush(): Promise<void> {
    await Promise.allSettled([...this.pending]);
  }

  /** A status write of a duplicated name changed the conditions of `changed` (`namespace/name`): its events go to them. */
  public fannedOut(name: string, changed: ReadonlySet<string>): void {
    this.lastFanOut.set(name, changed);
  }

  private async post(cluster: string, event: ObjectEvent): Promise<void> {
    const all = (await this.props.objects(cluster)).filter((o) => o.metadata.name === cluster);
    // A duplicated name: the objects whose status the last write changed (each learns it is refused once).
    const changed = this.lastFanOut.get(cluster);
    const targets =
      all.length > 1 ? all.filter((o) => !changed || changed.has(shownName(o))) : [await this.props.locate(cluster)];
    for (const o of targets) {
      await postEvent(
        this.props.client,
        {
          apiVersion: o.apiVersion,
          kind: o.kind,
          name: cluster,
          namespace: namespaceOf(o),
          uid: o.metadata.uid,
          resourceVersion: o.metadata.resourceVersion,
        },
        event,
      );
    }
  }
}
