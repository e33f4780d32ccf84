/**
 * One event on an object, as `kubectl describe` lists it: Normal or Warning, a CamelCase reason, a message. The
 * reconciler's reasons are typed where they are decided (lib/engines/reconciler/workflow/events.ts); a sink only carries them.
 */
export interface ObjectEvent {
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly message: string;
}

/**
 * Where the events of cluster objects go: a store that can put events on its objects (the Kubernetes store) provides
 * one through its provider's `events` capability (lib/adapters/stores/store-provider.ts); the file store has none. It lives
 * beside ClusterStore, below the reconciler that emits into it, so no store imports the reconciler.
 */
export interface EventSink<E extends ObjectEvent = ObjectEvent> {
  emit(cluster: string, event: E): Promise<void>;
  /** Waits for the events in flight (`reconcile --once` exits right after). @default nothing to wait for */
  flush?(): Promise<void>;
}
