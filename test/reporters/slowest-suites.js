// Prints the slowest test files at the end of every jest run (CI's log included), so that a suite that grows past the
// budget (jest within 600 s on 2 cores: docs/testing.md) is seen where it happens, not guessed at.
class SlowestSuites {
  constructor(_globalConfig, options = {}) {
    this.count = options.count ?? 15;
  }

  onRunComplete(_contexts, results) {
    const rows = results.testResults
      .map((r) => ({ file: r.testFilePath.replace(`${process.cwd()}/`, ''), ms: r.perfStats.end - r.perfStats.start }))
      .filter((r) => Number.isFinite(r.ms) && r.ms > 0)
      .sort((a, b) => b.ms - a.ms);
    if (rows.length === 0) return;
    const total = rows.reduce((n, r) => n + r.ms, 0);
    const lines = rows.slice(0, this.count).map((r) => `  ${(r.ms / 1000).toFixed(1).padStart(7)} s  ${r.file}`);
    process.stderr.write(
      `\nSlowest test files (of ${rows.length}, ${(total / 1000).toFixed(0)} s of worker time in all):\n${lines.join('\n')}\n`,
    );
  }
}

module.exports = SlowestSuites;
