// Runs an entry point (bin/<name>.ts) from its precompiled JavaScript in build/ when that is newer than every
// TypeScript source (`npm run build`, which `npm ci` runs), else from the sources, transpiled file by file as ts-node
// --transpile-only does, with a compile cache (ts-require.js). The precompiled
// path saves ts-node's compile of the whole program (~1 s of every `cdk synth`); a stale build is never used.
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');

function newestSource() {
  let newest = 0;
  const visit = (p) => {
    const st = fs.statSync(p, { throwIfNoEntry: false });
    if (!st) return;
    if (st.isDirectory()) for (const e of fs.readdirSync(p)) visit(path.join(p, e));
    else if (/\.(ts|json)$/.test(p)) newest = Math.max(newest, st.mtimeMs);
  };
  for (const p of ['bin', 'lib', 'tsconfig.json', 'tsconfig.build.json', 'package.json']) visit(path.join(root, p));
  return newest;
}

/** Whether build/bin/<name>.js exists and is newer than every source. */
function isBuildCurrent(name) {
  const stat = fs.statSync(path.join(root, 'build', 'bin', `${name}.js`), { throwIfNoEntry: false });
  return Boolean(stat) && stat.mtimeMs >= newestSource();
}
exports.isBuildCurrent = isBuildCurrent;

exports.run = function run(name) {
  if (isBuildCurrent(name) && process.env.WORKER_STACKS_TS_NODE !== '1') {
    require(path.join(root, 'build', 'bin', `${name}.js`));
    return;
  }
  require('./ts-require').register(path.join(root, 'tsconfig.json'));
  require(path.join(root, 'bin', `${name}.ts`));
};
