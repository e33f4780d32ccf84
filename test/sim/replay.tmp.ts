import fc from 'fast-check';
import { simProperty } from './commands';
void (async () => {
  const r = await fc.check(simProperty({ replayPath: process.argv[4] }), { seed: Number(process.argv[2]), path: process.argv[3], numRuns: 1000, endOnFailure: true });
  console.log(r.failed, r.numRuns, String((r.errorInstance as Error)?.message ?? r.errorInstance));
})();
