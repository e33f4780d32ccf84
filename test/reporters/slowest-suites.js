// Prints the slowest test files at the end of every jest run (CI's log included), so that a suite that grows past the
// budget (jest within 600 s on 2 cores: docs/testing.md) is seen where it happens, not guessed at.
// Each row also says the file's CPU time (test/environment/measured-node.js): wall time well above it is waiting.
const fs = require('node:fs');
const { cpuLogOf } = require('../environment/measured-node');

/** CPU seconds per test file path, as the measured environment logged them for this run (and the log removed). */
function cpuByFile() {
  const log = cpuLogOf(process.pid);
  const cpu = new Map();
  if (!fs.existsSync(log)) return cpu;
  for (const line of fs.readFileSync(log, 'utf8').split('\n').filter(Boolean)) {
    const { file, cpu: s } = JSON.parse(line);
    cpu.set(file, s);
  }
  fs.rmSync(log, { force: true });
  return cpu;
}

class SlowestSuites {
  constructor(_globalConfig, options = {}) {
    this.count = options.count ?? 15;
  }

  onRunComplete(_contexts, results) {
    const cpu = cpuByFile();
    const rows = results.testResults
      .map((r) => ({
        file: r.testFilePath.replace(`${process.cwd()}/`, ''),
        ms: r.perfStats.end - r.perfStats.start,
        cpu: cpu.get(r.testFilePath),
      }))
      .filter((r) => Number.isFinite(r.ms) && r.ms > 0)
      .sort((a, b) => b.ms - a.ms);
    if (rows.length === 0) return;
    // Every row as JSON too, for a look at the whole suite (test/sequencer/durations.js reads jest's own --json).
    if (process.env.WORKER_STACKS_JEST_TIMES)
      fs.writeFileSync(process.env.WORKER_STACKS_JEST_TIMES, `${JSON.stringify(rows, null, 1)}\n`);
    const total = rows.reduce((n, r) => n + r.ms, 0);
    const cpuTotal = rows.reduce((n, r) => n + (r.cpu ?? 0), 0);
    const cpuText = (s) => (s === undefined ? '     -' : `${s.toFixed(1).padStart(6)}`);
    const lines = rows
      .slice(0, this.count)
      .map((r) => `  ${(r.ms / 1000).toFixed(1).padStart(7)} s wall ${cpuText(r.cpu)} s CPU  ${r.file}`);
    process.stderr.write(
      `\nSlowest test files (of ${rows.length}, ${(total / 1000).toFixed(0)} s of worker time and ${cpuTotal.toFixed(0)} s of CPU in all):\n${lines.join('\n')}\n`,
    );
  }
}

module.exports = SlowestSuites;
