import { WorkQueue } from '../../../../lib/engines/reconciler/runtime/work-queue';

test('a key is queued once however often it is added, and never handed out twice at once', async () => {
  // GIVEN a queue with a key added three times
  const q = new WorkQueue();
  q.add('a');
  q.add('a');
  q.add('b');
  q.add('a');

  // WHEN a worker takes it, and it is added again while being processed
  expect(await q.get()).toBe('a');
  q.add('a');

  // THEN the next key is b (a is in process), and a comes back only after done()
  expect(await q.get()).toBe('b');
  let next: string | undefined;
  void q.get().then((k) => (next = k));
  await new Promise((r) => setImmediate(r));
  expect(next).toBeUndefined();
  q.done('a');
  await new Promise((r) => setImmediate(r));
  expect(next).toBe('a');
  q.shutDown();
});

test('addAfter hands the key out when its time comes; an earlier add wins', async () => {
  // GIVEN a queue and a key due in 30 ms
  const q = new WorkQueue();
  const t = Date.now();
  q.addAfter('a', 30);

  // WHEN a worker waits
  const key = await q.get();

  // THEN it gets the key after the delay
  expect(key).toBe('a');
  expect(Date.now() - t).toBeGreaterThanOrEqual(25);
  q.done('a');
  q.shutDown();
});

test('rate-limited requeues grow per key and are cleared by forget', () => {
  // GIVEN a queue with a 1 s base delay and a 4 s cap
  const q = new WorkQueue({ baseDelayMs: 1000, maxDelayMs: 4000 });

  // WHEN one key fails repeatedly and another once
  const delays = [q.addRateLimited('a'), q.addRateLimited('a'), q.addRateLimited('a'), q.addRateLimited('a')];
  const other = q.addRateLimited('b');
  q.forget('a');

  // THEN a's delays double up to the cap, b's are its own, and forget starts a over
  expect(delays).toEqual([1000, 2000, 4000, 4000]);
  expect(other).toBe(1000);
  expect(q.addRateLimited('a')).toBe(1000);
  q.shutDown();
});

test('shutDown releases waiting workers', async () => {
  // GIVEN a worker waiting on an empty queue
  const q = new WorkQueue();
  const waiting = q.get();

  // WHEN the queue shuts down THEN the worker gets undefined and stops
  q.shutDown();
  expect(await waiting).toBeUndefined();
});
