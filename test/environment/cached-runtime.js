// jest's runtime, with a V8 code cache kept by each jest worker for the modules its test files load.
//
// Why: jest gives every test file a fresh module registry, so each file compiles again every module it loads
// (aws-cdk-lib, the AWS SDK, this project's lib/), and V8's own cache does not help: jest compiles each module with
// an import() callback of its own, which V8 counts as a different script. With 270 files in four workers, most of
// them loading the same few thousand modules, that compile was a large part of the suite's CPU (docs/testing.md).
// Here the code V8 compiled for a module (after the file that first loaded it ran, so its functions are in it too)
// is handed to V8 the next time a file of this worker loads the same module with the same code.
//
// Nothing else changes: the same transformed code runs in the file's own context with its own registry and mocks,
// and V8 checks each cache entry against the source before it uses it (a rejected entry is compiled as usual).
const crypto = require('node:crypto');
const vm = require('node:vm');
const Runtime = require('jest-runtime').default;

/** Compiled code by module path and code hash, for the life of this worker process. */
const cache = new Map();

function keyOf(filename, code) {
  return `${filename}\0${crypto.createHash('sha1').update(code).digest('base64')}`;
}

class CachedRuntime extends Runtime {
  constructor(...args) {
    super(...args);
    /** Scripts this file compiled without a usable entry: cached at its teardown, once they ran. */
    this.uncached = [];
  }

  createScriptFromCode(scriptSource, filename) {
    if (process.env.WORKER_STACKS_JEST_CODE_CACHE === '0') return super.createScriptFromCode(scriptSource, filename);
    const key = keyOf(filename, scriptSource);
    const cachedData = cache.get(key);
    // jest-runtime builds the script with vm.Script (its own options: the wrapper, the import() callback): the
    // cached code is added to them for this one call.
    const Script = vm.Script;
    vm.Script = function CachedScript(code, options) {
      return new Script(code, { ...options, cachedData });
    };
    let script;
    try {
      script = super.createScriptFromCode(scriptSource, filename);
    } finally {
      vm.Script = Script;
    }
    if (cachedData === undefined || script.cachedDataRejected) this.uncached.push({ key, script });
    return script;
  }

  teardown() {
    for (const { key, script } of this.uncached.splice(0)) {
      try {
        cache.set(key, script.createCachedData());
      } catch {
        // A script V8 cannot serialize is compiled again next time.
      }
    }
    super.teardown();
  }
}

module.exports = CachedRuntime;
