// Writes test/sequencer/durations.json from a jest run's JSON (`npx jest --json --outputFile=run.json`): each test
// file that took 5 s or more, in whole seconds. test/sequencer/slowest-first.js starts those first on a clean clone.
const fs = require('node:fs');
const path = require('node:path');

const run = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const root = path.resolve(__dirname, '..', '..');
const seconds = {};
for (const r of run.testResults.sort((a, b) => b.endTime - b.startTime - (a.endTime - a.startTime))) {
  const s = Math.round((r.endTime - r.startTime) / 1000);
  if (s >= 5) seconds[path.relative(root, r.name).split(path.sep).join('/')] = s;
}
const out = path.join(__dirname, 'durations.json');
fs.writeFileSync(out, `${JSON.stringify({ note: 'written by node test/sequencer/durations.js', seconds }, null, 2)}\n`);
console.log(`${Object.keys(seconds).length} files of 5 s or more written to ${path.relative(root, out)}`);
