import { ObjectEvent } from '../../../lib/model/ports/event-sink';
import { CapabilityFixture, required } from './capability-fixture';
import { recordSuite } from './contract-coverage';
import { objectNamed } from './store-contract';

const byReason = (events: readonly ObjectEvent[]) => [...events].sort((a, b) => a.reason.localeCompare(b.reason));

/** The events capability: what the reconciler emits is on the object as a user reads it (`kubectl describe`). */
export function eventsContract(kind: string, makeFixture: () => Promise<CapabilityFixture>): void {
  recordSuite(kind, 'events');
  describe(`${kind} store: events contract`, () => {
    let f: CapabilityFixture | undefined;
    afterEach(async () => {
      await f?.dispose();
      f = undefined;
    });

    test('events emitted and not awaited are on the object once flushed, with their type, reason and message', async () => {
      // GIVEN an object and the store's event sink
      f = await makeFixture();
      const sink = required(f.opened.events, "the store opened with its provider's events");
      const seen = required(
        f.world.events?.bind(f.world),
        'StoreWorld.events in test/adapters/stores/store-harnesses.ts',
      );
      await f.world.put(objectNamed('alpha'));
      const sent: ObjectEvent[] = [
        { type: 'Normal', reason: 'RollStarted', message: 'executing change set cs-1' },
        { type: 'Warning', reason: 'Stalled', message: 'UpdateFailed: the stack rolled back' },
      ];

      // WHEN both are emitted without waiting, then flushed (as `reconcile --once` does before it exits)
      const posts = sent.map((e) => sink.emit('alpha', e));
      await sink.flush?.();

      // THEN the user sees both on the object
      expect(byReason(await seen('alpha'))).toEqual(byReason(sent));
      await Promise.all(posts);
    });

    test('an event for an object that does not exist is refused, naming it', async () => {
      // GIVEN the sink of a store without that object
      f = await makeFixture();
      const sink = required(f.opened.events, "the store opened with its provider's events");

      // WHEN an event is emitted for it, THEN the error names it
      await expect(sink.emit('nope', { type: 'Normal', reason: 'StackComplete', message: 'm' })).rejects.toThrow(
        /nope/,
      );
    });
  });
}
