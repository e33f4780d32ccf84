// Runs TypeScript sources without a build (launch.js when build/ is stale, the synthesis threads of a process that runs
// from sources): each .ts file is transpiled alone, as `ts-node --transpile-only` does, and the JavaScript is kept in
// a per-user cache keyed by the file's name and bytes, TypeScript's version and tsconfig.json. A process whose files
// are all cached never loads the compiler: ~1 s instead of ~4 s of CPU per start (issue 34: the review tests
// synthesize both sides of a revision from sources, dozens of times). A changed file is a new key; nothing is stale.
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

/** WORKER_STACKS_TS_CACHE, else $XDG_CACHE_HOME/worker-stacks/ts (~/.cache/...): the user's own, never a shared dir. */
function cacheDir() {
  if (process.env.WORKER_STACKS_TS_CACHE) return process.env.WORKER_STACKS_TS_CACHE;
  const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(base, 'worker-stacks', 'ts');
}

let registered = false;

const diagnosticHost = {
  getCanonicalFileName: (f) => f,
  getCurrentDirectory: () => process.cwd(),
  getNewLine: () => '\n',
};

/** Makes require() run .ts files, compiled with the compiler options of `project` (a tsconfig.json). */
exports.register = function register(project) {
  if (registered) return;
  registered = true;
  const dir = cacheDir();
  const salt = [require('typescript/package.json').version, fs.readFileSync(project, 'utf8')].join('\0');
  let options;
  const compile = (source, filename) => {
    const ts = require('typescript');
    if (!options) {
      const { config, error } = ts.readConfigFile(project, ts.sys.readFile);
      if (error) throw new Error(ts.flattenDiagnosticMessageText(error.messageText, '\n'));
      const parsed = ts.convertCompilerOptionsFromJson(config.compilerOptions ?? {}, path.dirname(project));
      options = { ...parsed.options, noEmit: false, declaration: false, sourceMap: false, inlineSourceMap: true };
    }
    const out = ts.transpileModule(source, { compilerOptions: options, fileName: filename, reportDiagnostics: true });
    // A syntax error fails the require, as under ts-node (types are tsc's business, not a start's).
    const errors = (out.diagnostics ?? []).filter((d) => d.category === ts.DiagnosticCategory.Error);
    if (errors.length > 0) throw new Error(`${filename}: ${ts.formatDiagnostics(errors, diagnosticHost)}`);
    return out.outputText;
  };
  // Stack traces name the .ts lines, as under ts-node.
  process.setSourceMapsEnabled(true);
  require.extensions['.ts'] = (module, filename) => {
    const source = fs.readFileSync(filename, 'utf8');
    // The output depends on the bytes and the base name only (the inline source map names the file beside it), so a
    // copy of the project elsewhere (review's worktree of a revision) reads the same entries.
    const key = crypto.createHash('sha256').update(salt).update('\0').update(path.basename(filename));
    key.update('\0').update(source);
    const file = path.join(dir, `${key.digest('hex')}.js`);
    let js;
    try {
      js = fs.readFileSync(file, 'utf8');
    } catch {
      js = compile(source, filename);
      try {
        fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
        const tmp = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}`;
        fs.writeFileSync(tmp, js, { mode: 0o600 });
        fs.renameSync(tmp, file);
      } catch {
        // A cache that cannot be written only costs the next start its compile.
      }
    }
    module._compile(js, filename);
  };
};
