import { ClusterStatus } from '../../../lib/model/cluster/schema/status';
import { ClusterStore, ConflictError } from '../../../lib/model/ports/cluster-store';
import { ownSecret, rawExample } from '../../helpers/clusters';
import { eventually } from '../../helpers/eventually';
import { recordSuite } from './contract-coverage';

/**
 * The store contract: what the reconciler and the CLI rely on, whatever holds the objects. Every registered store
 * runs it unchanged (test/adapters/stores/store-contracts.test.ts); it talks to the store only through ClusterStore, and to the objects
 * only as a user would (writing a file, `kubectl apply`), through the fixture.
 */
export interface StoreFixture {
  readonly store: ClusterStore;
  /** Creates or replaces the object as a user would (its status is left alone). */
  put(raw: UserObject): Promise<void>;
  /** Deletes the object as a user would. */
  remove(name: string): Promise<void>;
  /** Removes what the fixture made. */
  dispose(): Promise<void>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a user's object, reshaped freely by the tests
export type UserObject = any;

/** An example object under another name (each test has its own objects: no test depends on another's). */
export function objectNamed(name: string, mutate: (raw: UserObject) => void = () => undefined): UserObject {
  const raw = rawExample('prod-eu1');
  raw.metadata = { name };
  ownSecret(raw);
  mutate(raw);
  return raw;
}

const status = (reason: string, observedGeneration = 1, extra: Partial<ClusterStatus> = {}): ClusterStatus => ({
  conditions: [
    {
      type: 'Ready',
      status: 'True',
      reason,
      message: `m ${reason}`,
      lastTransitionTime: '2024-01-02T03:04:05.000Z',
      observedGeneration,
    },
  ],
  ...extra,
});

export function storeContract(kind: string, makeFixture: () => Promise<StoreFixture>): void {
  recordSuite(kind, 'base');
  describe(`${kind} store contract`, () => {
    let f: StoreFixture;
    // What to dispose of: unset when makeFixture threw.
    let made: StoreFixture | undefined;
    beforeEach(async () => {
      f = made = await makeFixture();
    });
    afterEach(async () => {
      await made?.dispose();
      made = undefined;
    });

    test('list and get return every object with its spec, a generation and an opaque resourceVersion', async () => {
      // GIVEN two objects
      await f.put(objectNamed('alpha'));
      await f.put(objectNamed('beta', (r) => (r.spec.pool.maxSize = 7)));

      // WHEN listing and getting
      const listed = await f.store.list();
      const beta = await f.store.get('beta');

      // THEN both are there, sorted by name, as the user wrote them, with no status yet
      expect(listed.map((r) => r.name)).toEqual(['alpha', 'beta']);
      expect(beta).toBeDefined();
      expect((beta!.raw as UserObject).spec.pool.maxSize).toBe(7);
      expect((beta!.raw as UserObject).metadata.name).toBe('beta');
      expect(beta!.parseProblems).toEqual([]);
      expect(beta!.generation).toBeGreaterThanOrEqual(1);
      expect(typeof beta!.resourceVersion).toBe('string');
      expect(beta!.status).toBeUndefined();
      expect(await f.store.get('gamma')).toBeUndefined();
    });

    test('generation moves on a spec change, not on a label change nor a status write', async () => {
      // GIVEN an object whose status was written at its generation
      await f.put(objectNamed('alpha'));
      const first = (await f.store.get('alpha'))!;
      await f.store.writeStatus('alpha', status('Recorded', first.generation), first.resourceVersion);
      expect((await f.store.get('alpha'))!.generation).toBe(first.generation);

      // WHEN only a label changes, THEN the generation stays
      await f.put(objectNamed('alpha', (r) => (r.metadata.labels = { tier: 'canary' })));
      expect((await f.store.get('alpha'))!.generation).toBe(first.generation);

      // WHEN the spec changes, THEN the generation is greater
      await f.put(objectNamed('alpha', (r) => ((r.metadata.labels = { tier: 'canary' }), (r.spec.pool.maxSize = 9))));
      expect((await f.store.get('alpha'))!.generation).toBeGreaterThan(first.generation);
    });

    test('writeStatus needs the current resourceVersion: a stale one is a ConflictError and changes nothing', async () => {
      // GIVEN an object read once
      await f.put(objectNamed('alpha'));
      const read = (await f.store.get('alpha'))!;

      // WHEN a status is written with that version
      const v2 = await f.store.writeStatus('alpha', status('First'), read.resourceVersion);

      // THEN it is recorded under a new version
      expect(v2).not.toBe(read.resourceVersion);
      const after = (await f.store.get('alpha'))!;
      expect(after.status?.conditions[0].reason).toBe('First');
      expect(after.resourceVersion).toBe(v2);

      // WHEN another writer uses the old version, THEN it conflicts and the status stays
      await expect(f.store.writeStatus('alpha', status('Stale'), read.resourceVersion)).rejects.toBeInstanceOf(
        ConflictError,
      );
      expect((await f.store.get('alpha'))!.status?.conditions[0].reason).toBe('First');

      // WHEN the version returned is used, THEN the write goes through
      await f.store.writeStatus('alpha', status('Second', 1, { cloudConfigChecksum: 'a'.repeat(64) }), v2);
      const last = (await f.store.get('alpha'))!;
      expect(last.status?.conditions[0].reason).toBe('Second');
      expect(last.status?.cloudConfigChecksum).toBe('a'.repeat(64));
    });

    test('a status write replaces the status: fields left out are gone', async () => {
      // GIVEN a status with a checksum and a stack name
      await f.put(objectNamed('alpha'));
      const v = await f.store.writeStatus(
        'alpha',
        status('First', 1, { cloudConfigChecksum: 'b'.repeat(64), stackName: 'WorkerStack-alpha' }),
        (await f.store.get('alpha'))!.resourceVersion,
      );

      // WHEN the next status has no checksum
      await f.store.writeStatus('alpha', status('Second', 1, { stackName: 'WorkerStack-alpha' }), v);

      // THEN the checksum is not there any more
      const s = (await f.store.get('alpha'))!.status!;
      expect(s.cloudConfigChecksum).toBeUndefined();
      expect(s.stackName).toBe('WorkerStack-alpha');
    });

    test('an invalid status is refused before it is written', async () => {
      // GIVEN an object with a valid status
      await f.put(objectNamed('alpha'));
      const v = await f.store.writeStatus('alpha', status('Good'), (await f.store.get('alpha'))!.resourceVersion);

      // WHEN a status breaking the schema is written (a reason that is not CamelCase)
      const bad = status('not camel case');

      // THEN the write is refused and the valid status stays
      await expect(f.store.writeStatus('alpha', bad, v)).rejects.toThrow(/invalid status/);
      expect((await f.store.get('alpha'))!.status?.conditions[0].reason).toBe('Good');
    });

    test('a user edit between the read and the status write loses nothing', async () => {
      // GIVEN an object read by the reconciler
      await f.put(objectNamed('alpha'));
      const read = (await f.store.get('alpha'))!;

      // WHEN the user changes the spec before the reconciler writes status for what it read
      await f.put(objectNamed('alpha', (r) => (r.spec.pool.maxSize = 11)));
      const written = await f.store
        .writeStatus('alpha', status('ForOldSpec', read.generation), read.resourceVersion)
        .then(
          () => 'written',
          (e: unknown) => {
            if (e instanceof ConflictError) return 'conflict';
            throw e;
          },
        );

      // THEN the edit is there, and the store says it is newer than what the status (if written) was computed for
      const now = (await f.store.get('alpha'))!;
      expect(['written', 'conflict']).toContain(written);
      expect((now.raw as UserObject).spec.pool.maxSize).toBe(11);
      expect(now.generation).toBeGreaterThan(
        now.status?.observedGeneration ?? now.status?.conditions[0].observedGeneration ?? 0,
      );
    });

    test('clearStatus removes the status', async () => {
      // GIVEN an object with a status
      await f.put(objectNamed('alpha'));
      const v = await f.store.writeStatus('alpha', status('Recorded'), (await f.store.get('alpha'))!.resourceVersion);

      // WHEN it is cleared
      await f.store.clearStatus('alpha', v);

      // THEN no status is left, and the object is still there
      const r = (await f.store.get('alpha'))!;
      expect(r.status).toBeUndefined();
      expect((r.raw as UserObject).metadata.name).toBe('alpha');
    });

    test('requestRetry sets a token the record carries; a later request replaces it', async () => {
      // GIVEN an object
      await f.put(objectNamed('alpha'));
      expect((await f.store.get('alpha'))!.retryRequest).toBeUndefined();

      // WHEN an operator asks for a retry, twice
      await f.store.requestRetry('alpha', 'token-1');
      const one = (await f.store.get('alpha'))!.retryRequest;
      await f.store.requestRetry('alpha', 'token-2');

      // THEN the record carries the latest token, and the spec is untouched
      expect(one).toBe('token-1');
      const r = (await f.store.get('alpha'))!;
      expect(r.retryRequest).toBe('token-2');
      expect((r.raw as UserObject).spec.pool.maxSize).toBe(objectNamed('alpha').spec.pool.maxSize);
    });

    test('setPaused sets and clears spec.paused, and names an unknown object', async () => {
      // GIVEN an object
      await f.put(objectNamed('alpha'));

      // WHEN paused, THEN spec.paused is true
      await f.store.setPaused('alpha', true);
      expect((await f.store.get('alpha'))!.raw).toMatchObject({ spec: { paused: true } });

      // WHEN resumed, THEN it is not paused, and the rest of the spec is unchanged (a store may add its defaults)
      await f.store.setPaused('alpha', false);
      const r = (await f.store.get('alpha'))!;
      expect((r.raw as UserObject).spec.paused ?? false).toBe(false);
      expect((r.raw as UserObject).spec.pool).toMatchObject(objectNamed('alpha').spec.pool);

      // WHEN the object does not exist, THEN the error names it
      await expect(f.store.setPaused('nope', true)).rejects.toThrow(/nope/);
    });

    test('a removed object is no longer listed', async () => {
      // GIVEN two objects
      await f.put(objectNamed('alpha'));
      await f.put(objectNamed('beta'));

      // WHEN one is removed
      await f.remove('alpha');

      // THEN only the other is listed
      expect((await f.store.list()).map((r) => r.name)).toEqual(['beta']);
    });

    test('watch calls back with the name of an edited object, and stops when told', async () => {
      // GIVEN a watch on a store holding one object
      await f.put(objectNamed('alpha'));
      const seen: string[] = [];
      const stop = f.store.watch((name) => seen.push(name));
      await new Promise((r) => setTimeout(r, 300)); // the watch is established (a file watch or a list + watch)

      // WHEN the spec is edited, THEN the callback gets its name
      seen.length = 0;
      await f.put(objectNamed('alpha', (r) => (r.spec.pool.maxSize = 13)));
      await eventually(() => seen.includes('alpha'), 'the watch reports the edit of alpha');

      // WHEN a retry is requested, THEN the callback gets its name too
      seen.length = 0;
      await f.store.requestRetry('alpha', 'token-w');
      await eventually(() => seen.includes('alpha'), 'the watch reports the retry request of alpha');

      // WHEN the watch is stopped and the object edited again, THEN nothing more is reported
      stop();
      await new Promise((r) => setTimeout(r, 200));
      seen.length = 0;
      await f.put(objectNamed('alpha', (r) => (r.spec.pool.maxSize = 14)));
      await new Promise((r) => setTimeout(r, 1000));
      expect(seen).toEqual([]);
    });
  });
}
