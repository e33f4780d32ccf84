import * as fs from 'node:fs';
import * as path from 'node:path';
import { canonicalJson } from '../../../model/cloudconfig/canonical-json';
import { sha256Hex } from '../../../model/cloudconfig/checksum';
import { WorkerStacksError } from '../../../core/errors';
import { PROJECT_ROOT } from '../../../core/paths';

/**
 * Which code turns objects into templates: the package version, a hash of the template code as it was built, and the
 * versions of the libraries that synthesize. It feeds every inputs fingerprint, so a new release re-applies (the
 * change set then says whether anything really changed), and it is recorded on the status of what a daemon applied,
 * so an older daemon knows it is older.
 *
 * Compiled code (build/) reads `build/code-version.json`, written by `npm run build` from the sources it compiled:
 * an image with only build/ runs, and the version cannot drift from the code beside it. TypeScript run in place
 * (ts-node, jest) hashes the sources it is running, which are then the code.
 */
export interface CodeVersion {
  /** package.json's version. */
  readonly version: string;
  /** SHA-256 over the template code's sources (TEMPLATE_CODE_DIRS), as built. */
  readonly templateCode: string;
  /** `name@version` of the libraries whose output is the template. */
  readonly libraries: readonly string[];
}

/** The folders whose code turns an object into a template and a config (the reconciler's own code does not); lib/core holds the stack naming. */
export const TEMPLATE_CODE_DIRS = [
  'lib/core',
  'lib/model/cluster',
  'lib/model/cloudconfig',
  'lib/engines/constructs',
  'lib/engines/stacks',
];
const SYNTH_LIBRARIES = ['aws-cdk-lib', 'constructs', 'cdk-nag'];
export const STAMP_FILE = 'code-version.json';

/** Computes the version from a source tree (the build does this once; ts-node runs do it at start). */
export function sourceCodeVersion(root: string = PROJECT_ROOT): CodeVersion {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.ts$/.test(e.name) && !e.name.endsWith('.d.ts')) files.push(p);
    }
  };
  for (const dir of TEMPLATE_CODE_DIRS) walk(path.join(root, dir));
  const templateCode = sha256Hex(
    canonicalJson(files.map((f) => [path.relative(root, f).split(path.sep).join('/'), sha256Hex(fs.readFileSync(f))])),
  );
  const version = packageVersion(path.join(root, 'package.json'));
  const libraries = SYNTH_LIBRARIES.map((m) => `${m}@${packageVersion(require.resolve(`${m}/package.json`))}`);
  return { version, templateCode, libraries };
}

function packageVersion(packageJson: string): string {
  return (JSON.parse(fs.readFileSync(packageJson, 'utf8')) as { version: string }).version;
}

/**
 * Writes the stamp into a build directory (`npm run build` runs this after tsc).
 * @public scripts/stamp-build.js calls it in the compiled build/ tree, by a path knip cannot follow.
 */
export function writeStamp(buildDir: string, root: string = PROJECT_ROOT): CodeVersion {
  const v = sourceCodeVersion(root);
  fs.writeFileSync(path.join(buildDir, STAMP_FILE), canonicalJson(v) + '\n');
  return v;
}

let cached: CodeVersion | undefined;

/**
 * The running code's version: the build's stamp when this module runs compiled, else the sources'.
 * `compiledDir` is for tests. @default this module's own location
 */
export function codeVersion(moduleFile: string = __filename): CodeVersion {
  if (cached && moduleFile === __filename) return cached;
  let v: CodeVersion;
  if (moduleFile.endsWith('.js')) {
    // build/lib/engines/reconciler/workflow/code-version.js → build/code-version.json (beside build/lib/, however deep
    // this module sits under it)
    const stamp = path.join(path.dirname(libFolderOf(moduleFile)), STAMP_FILE);
    if (!fs.existsSync(stamp)) {
      throw new WorkerStacksError(`${stamp} is missing: this build of worker-stacks does not say which code it is`, {
        hint: 'build with `npm run build` (it writes the stamp after compiling), or run from the sources',
      });
    }
    v = JSON.parse(fs.readFileSync(stamp, 'utf8')) as CodeVersion;
  } else {
    v = sourceCodeVersion();
  }
  if (moduleFile === __filename) cached = v;
  return v;
}

/** The nearest folder named lib above a module (build/lib for the compiled code). */
function libFolderOf(moduleFile: string): string {
  let dir = path.dirname(moduleFile);
  while (path.basename(dir) !== 'lib' && path.dirname(dir) !== dir) dir = path.dirname(dir);
  return dir;
}

/** What feeds inputs fingerprints. */
export function codeFingerprint(v: CodeVersion = codeVersion()): string {
  return sha256Hex(canonicalJson(v));
}

/**
 * -1, 0 or 1 as `a` is older than, the same release as, or newer than `b` (semver's x.y.z order; a pre-release is
 * older than its release). Unparseable versions compare as equal: nothing can be said of them.
 */
export function compareVersions(a: string, b: string): number {
  const parse = (v: string) => /^v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?/.exec(v);
  const pa = parse(a);
  const pb = parse(b);
  if (!pa || !pb) return 0;
  for (let i = 1; i <= 3; i++) {
    const d = Number(pa[i]) - Number(pb[i]);
    if (d !== 0) return Math.sign(d);
  }
  // The pre-release group is optional: undefined when the version has none.
  const [ra, rb] = [pa.at(4), pb.at(4)];
  if (ra === rb) return 0;
  if (ra === undefined) return 1;
  if (rb === undefined) return -1;
  return ra < rb ? -1 : 1;
}
