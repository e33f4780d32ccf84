import { GROUP, VERSION } from './crd';
import { CHANNEL_PLURAL } from './channel-crd';
import { KubeObjectMeta } from './resource';

/** A WorkerImageChannel as the API server returns it (only the fields read). */
export interface KubeImageChannel {
  apiVersion?: string;
  kind?: string;
  metadata: KubeObjectMeta;
  spec?: Record<string, unknown>;
  status?: unknown;
}

/** The collection path, in one namespace or all. */
export function channelCollectionPath(namespace: string | undefined): string {
  return namespace
    ? `/apis/${GROUP}/${VERSION}/namespaces/${encodeURIComponent(namespace)}/${CHANNEL_PLURAL}`
    : `/apis/${GROUP}/${VERSION}/${CHANNEL_PLURAL}`;
}

export function channelObjectPath(namespace: string, name: string): string {
  return `${channelCollectionPath(namespace)}/${encodeURIComponent(name)}`;
}
