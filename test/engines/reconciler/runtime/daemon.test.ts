import { Controller } from '../../../../lib/engines/reconciler/runtime/controller';
import { runDaemon } from '../../../../lib/engines/reconciler/runtime/daemon';
import { Harness } from '../../../fakes/harness';

/** The daemon's one scheduling path (issue 25, item 4): its first pass and each resync go through its work queue. */

let h: Harness;
afterEach(() => h.cleanup());

test('the first pass and every resync go through the queue, and each ends with its own "pass done" line', async () => {
  // GIVEN a daemon over two settled clusters, resyncing every 50 ms
  h = new Harness({ clusters: ['a-one', 'b-two'] });
  await h.pass();
  h.log.entries.length = 0;
  const deps = h.deps();
  const abort = new AbortController();
  const outcomes: string[] = [];
  let passes = 0;

  // WHEN it runs until its third pass is done
  await runDaemon(new Controller(deps), deps, abort.signal, {
    resyncMs: 50,
    onOutcome: (name, result) => outcomes.push(`${name} ${result}`),
    onPass: () => {
      if (++passes === 3) abort.abort();
    },
  });

  // THEN every pass reconciled both clusters through the queue (the first pass too) and said so once
  expect(outcomes.slice(0, 6).sort()).toEqual([
    'a-one unchanged',
    'a-one unchanged',
    'a-one unchanged',
    'b-two unchanged',
    'b-two unchanged',
    'b-two unchanged',
  ]);
  const done = h.log.entries.filter((e) => e.msg === 'pass done');
  expect(done.length).toBeGreaterThanOrEqual(3);
  for (const d of done) expect(d.obj).toMatchObject({ clusters: 2, reconciled: 2, results: { unchanged: 2 } });
});
