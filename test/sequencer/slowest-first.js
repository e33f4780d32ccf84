// Starts the slowest test files first, so that no long file is left running alone at the end (issue 34: the suite's
// time budget). jest's own sequencer does this from the durations in its cache; a clean clone (CI) has no cache, and
// jest then orders by file size, which puts test/sim/simulator.test.ts (22 lines, ~2 minutes) last. Without a cached
// duration, a file's time is the one durations.json measured (`node test/sequencer/durations.js <jest --json output>`
// writes it); a file in neither is started after them, biggest first, as jest would. Only the order changes: every
// file still runs, alone in its worker's module registry.
const Sequencer = require('@jest/test-sequencer').default;
const fs = require('node:fs');
const path = require('node:path');

const MEASURED = JSON.parse(fs.readFileSync(path.join(__dirname, 'durations.json'), 'utf8')).seconds;

class SlowestFirst extends Sequencer {
  sort(tests) {
    const size = new Map();
    const sizeOf = (t) => {
      if (!size.has(t.path)) size.set(t.path, t.context.hasteFS.getSize(t.path) ?? 0);
      return size.get(t.path);
    };
    const seconds = (t) => {
      const cached = this.time(t);
      if (cached != null) return cached / 1000;
      return MEASURED[path.relative(t.context.config.rootDir, t.path).split(path.sep).join('/')];
    };
    for (const t of tests) t.duration = this.time(t);
    return tests
      .map((t) => ({ t, failed: this.hasFailed(t), s: seconds(t) }))
      .sort((a, b) => {
        if (a.failed !== b.failed) return a.failed ? -1 : 1;
        if ((a.s == null) !== (b.s == null)) return a.s == null ? 1 : -1;
        if (a.s != null && b.s != null && a.s !== b.s) return b.s - a.s;
        return sizeOf(b.t) - sizeOf(a.t);
      })
      .map((x) => x.t);
  }
}

module.exports = SlowestFirst;
