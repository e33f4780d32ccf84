import { Problem } from '../../core/errors';
import { KubeClient } from '../../platform/kube/client';
import { channelCollectionPath, channelObjectPath, KubeImageChannel } from '../../platform/kube/channel-resource';
import { ChannelStore, validateChannelObject } from '../../engines/channels';
import { API_VERSION } from '../../model/cluster/schema/schema';
import { CHANNEL_KIND } from '../../model/channel/channel-schema';
import { asChannelStatus, ChannelStatus, EMPTY_CHANNEL_STATUS } from '../../model/channel/channel-status';
import { KnownChannel } from '../../model/channel/image-pins';

export interface KubernetesChannelStoreProps {
  readonly client: KubeClient;
  /** One namespace, or undefined for all namespaces (the store's). */
  readonly namespace?: string;
  /** close() closes the client too (the store made it). @default false */
  readonly ownsClient?: boolean;
}

/**
 * Image channels as `workerimagechannels.worker-stacks.io` custom resources (lib/platform/kube/channel-crd.ts) in the
 * namespaces the Kubernetes store reads, their releases in the status subresource: the daemon reads them once a pass,
 * straight from the API server (one list; a pass reads them once, whatever the fleet's size). Each object is validated
 * as a channel file is and named `WorkerImageChannel/<name>` where the file store names its file. With every namespace
 * read, a channel name must be unique across them, as a WorkerCluster's is: a name two namespaces define is a problem
 * and neither channel pins anything.
 */
export class KubernetesChannelStore implements ChannelStore {
  /** Where each channel was found at the last load (its status is written there). */
  private readonly namespaces = new Map<string, string>();

  constructor(private readonly props: KubernetesChannelStoreProps) {}

  public async load(): Promise<{ channels: (KnownChannel & { source: string })[]; problems: Problem[] }> {
    const { body } = await this.props.client.request<{ items: KubeImageChannel[] }>(
      'GET',
      channelCollectionPath(this.props.namespace),
    );
    const items = [...body.items].sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1));
    const byName = new Map<string, KubeImageChannel[]>();
    for (const o of items) byName.set(o.metadata.name, [...(byName.get(o.metadata.name) ?? []), o]);
    const channels: (KnownChannel & { source: string })[] = [];
    const problems: Problem[] = [];
    this.namespaces.clear();
    for (const [name, found] of byName) {
      const source = `${CHANNEL_KIND}/${name}`;
      if (found.length > 1) {
        problems.push({
          file: source,
          path: 'metadata.name',
          message: `is defined in namespaces ${found.map((o) => o.metadata.namespace).join(', ')}; with --all-namespaces a channel name must be unique across them (rename one)`,
        });
        channels.push({ name, source, status: EMPTY_CHANNEL_STATUS });
        continue;
      }
      const o = found[0];
      if (o.metadata.namespace) this.namespaces.set(name, o.metadata.namespace);
      const checked = validateChannelObject(
        {
          apiVersion: o.apiVersion ?? API_VERSION,
          kind: o.kind ?? CHANNEL_KIND,
          metadata: { name },
          spec: o.spec ?? {},
        },
        source,
      );
      problems.push(...checked.problems);
      const status = o.status === undefined ? EMPTY_CHANNEL_STATUS : asChannelStatus(o.status);
      if (!status)
        problems.push({
          file: source,
          path: 'status',
          message:
            'is not a channel status the daemon wrote; remove it (kubectl patch --subresource status) and the releases are read again (a halt is lost)',
        });
      channels.push({
        name,
        source,
        status: status ?? EMPTY_CHANNEL_STATUS,
        ...(checked.spec ? { spec: checked.spec } : {}),
      });
    }
    return { channels, problems };
  }

  /**
   * The whole status, through the status subresource (a JSON patch that adds it: a halt lifted is a key removed,
   * which a merge patch would keep).
   */
  public async writeStatus(name: string, status: ChannelStatus): Promise<void> {
    const namespace = this.namespaces.get(name) ?? this.props.namespace ?? this.props.client.defaultNamespace;
    await this.props.client.request(
      'PATCH',
      `${channelObjectPath(namespace, name)}/status`,
      [{ op: 'add', path: '/status', value: status }],
      'application/json-patch+json',
    );
  }

  public close(): void {
    if (this.props.ownsClient) this.props.client.close();
  }
}
