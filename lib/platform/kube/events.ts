import * as os from 'node:os';
import { KubeClient } from './client';

/** The object an event is about (`involvedObject`): kind, name, namespace, and the uid kubectl describe matches on. */
export interface InvolvedObject {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly name: string;
  readonly namespace: string;
  readonly uid?: string;
  readonly resourceVersion?: string;
}

export interface KubeEvent {
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly message: string;
}

/** This replica, as the events it posts name it (the pod's name in a cluster). */
export const REPORTING_INSTANCE = process.env.POD_NAME ?? os.hostname();

/**
 * Posts a core/v1 Event on an object (what `kubectl describe` lists under Events). The message is cut at 1 KiB.
 * `name`: a fixed name instead of a generated one, so that a second post of the same event (another replica, another
 * shard) is refused (409) rather than repeated. @default generated
 */
export async function postEvent(
  client: KubeClient,
  on: InvolvedObject,
  event: KubeEvent,
  name?: string,
): Promise<void> {
  const now = new Date().toISOString();
  await client.request('POST', `/api/v1/namespaces/${encodeURIComponent(on.namespace)}/events`, {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { ...(name ? { name } : { generateName: `${on.name}.` }), namespace: on.namespace },
    involvedObject: {
      apiVersion: on.apiVersion,
      kind: on.kind,
      name: on.name,
      namespace: on.namespace,
      uid: on.uid,
      resourceVersion: on.resourceVersion,
    },
    type: event.type,
    reason: event.reason,
    message: event.message.slice(0, 1024),
    source: { component: 'worker-stacks' },
    reportingComponent: 'worker-stacks.io/reconciler',
    reportingInstance: REPORTING_INSTANCE,
    firstTimestamp: now,
    lastTimestamp: now,
    count: 1,
  });
}
