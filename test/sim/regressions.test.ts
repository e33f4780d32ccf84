import { CMD, replay } from './commands';

/**
 * Schedules the simulator found breaking an invariant, each shrunk by fast-check and pinned here: the world's
 * options, the scheduler's order of calls (as printed; once used up, or when the code no longer makes a call, the
 * oldest waiting call goes next) and the commands. Found with `npm run sim -- --runs N --seed S`; each names the
 * seed and path it was found at. Each fails while its bug is there, and passes once the invariant holds.
 */
describe('schedules the simulator found', () => {
  test('Ready before the update: a non-config edit is recorded Ready from the listing taken before our own execute (issue 25 #1; seed 23, path 191:4:7:3)', async () => {
    // GIVEN two stacks created and complete  WHEN pool.maxSize changes and the change set is executed
    // THEN the next look must not record Ready from the cached listing older than that execute
    await replay({ clusters: 2, concurrency: 2, maxUpdateAttempts: 1 }, [1, 2, 3, 4, 6, 7, 5, 9, 8, 10, 11, 12, 14, 13, 15, 18, 19, 20, 21, 17, 22, 23, 24, 16, 25, 27, 26, 28, 29, 30, 31, 32, 33, 34, 35], [
      CMD.advance(15000),
      CMD.edit(0, { field: 'maxSize', value: 5 }),
    ]);
  });
});
