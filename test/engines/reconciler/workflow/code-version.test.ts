import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  codeVersion,
  compareVersions,
  sourceCodeVersion,
  STAMP_FILE,
  TEMPLATE_CODE_DIRS,
} from '../../../../lib/engines/reconciler/workflow/code-version';
import { PROJECT_ROOT } from '../../../../lib/core/paths';

const tmp: string[] = [];
afterEach(() => tmp.splice(0).forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
function tempDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-code-version-'));
  tmp.push(d);
  return d;
}

/** A minimal source tree: package.json and one file in each template-code folder, plus the reconciler's. */
function sourceTree(version = '1.2.3'): string {
  const root = tempDir();
  fs.writeFileSync(path.join(root, 'package.json'), JSON.stringify({ name: 'worker-stacks', version }));
  for (const dir of [...TEMPLATE_CODE_DIRS, 'lib/engines/reconciler']) {
    fs.mkdirSync(path.join(root, dir), { recursive: true });
    fs.writeFileSync(path.join(root, dir, 'a.ts'), `export const x = '${dir}';\n`);
  }
  return root;
}

describe('compareVersions', () => {
  test.each([
    ['0.1.0', '0.1.0', 0],
    ['0.1.0', '0.2.0', -1],
    ['0.10.0', '0.9.9', 1],
    ['1.0.0', '0.99.99', 1],
    ['1.0.0-rc.1', '1.0.0', -1],
    ['1.0.0', '1.0.0-rc.1', 1],
    ['1.0.0-rc.1', '1.0.0-rc.2', -1],
    ['v2.0.0', '1.0.0', 1],
    ['dev', '1.0.0', 0],
  ])('%s vs %s → %i', (a, b, expected) => {
    expect(compareVersions(a, b)).toBe(expected);
  });
});

describe('the version of the template code', () => {
  test('changes with a template-code file, not with the reconciler or an unrelated version bump of nothing', () => {
    // GIVEN a source tree and its version
    const root = sourceTree();
    const before = sourceCodeVersion(root);

    // WHEN the reconciler's code changes, THEN the template code's hash does not
    fs.writeFileSync(path.join(root, 'lib/engines/reconciler/a.ts'), 'export const x = 2;\n');
    expect(sourceCodeVersion(root).templateCode).toBe(before.templateCode);

    // WHEN a construct changes, THEN it does
    fs.writeFileSync(path.join(root, 'lib/engines/constructs/a.ts'), 'export const x = 2;\n');
    expect(sourceCodeVersion(root).templateCode).not.toBe(before.templateCode);
    expect(before.version).toBe('1.2.3');
    expect(before.libraries).toEqual(expect.arrayContaining([expect.stringMatching(/^aws-cdk-lib@\d/)]));
  });

  test('compiled code reads the stamp beside build/, and says how to fix a build without one', () => {
    // GIVEN a build directory with a stamp, and one without
    const build = path.join(tempDir(), 'build');
    fs.mkdirSync(path.join(build, 'lib', 'engines', 'reconciler', 'workflow'), { recursive: true });
    const stamped = { version: '9.9.9', templateCode: 'f'.repeat(64), libraries: ['aws-cdk-lib@0.0.0'] };
    fs.writeFileSync(path.join(build, STAMP_FILE), JSON.stringify(stamped));
    const unstamped = path.join(tempDir(), 'build');

    // WHEN the compiled module's location is build/lib/engines/reconciler/workflow/code-version.js
    // THEN the stamp is the version; no stamp is an error naming the fix
    expect(codeVersion(path.join(build, 'lib', 'engines', 'reconciler', 'workflow', 'code-version.js'))).toEqual(
      stamped,
    );
    expect(() =>
      codeVersion(path.join(unstamped, 'lib', 'engines', 'reconciler', 'workflow', 'code-version.js')),
    ).toThrow(/code-version\.json is missing[\s\S]*npm run build/);
  });

  test('a copy of build/ with no TypeScript sources beside it runs and reports the version it was built from', () => {
    // GIVEN the project's build (npm ci runs `npm run build`, which stamps it), copied into a directory with
    // package.json, cloudconfig/ and node_modules but no lib/ or bin/ sources
    const stamp = path.join(PROJECT_ROOT, 'build', STAMP_FILE);
    expect(fs.existsSync(stamp)).toBe(true);
    const image = tempDir();
    fs.cpSync(path.join(PROJECT_ROOT, 'build'), path.join(image, 'build'), { recursive: true });
    fs.copyFileSync(path.join(PROJECT_ROOT, 'package.json'), path.join(image, 'package.json'));
    fs.symlinkSync(path.join(PROJECT_ROOT, 'cloudconfig'), path.join(image, 'cloudconfig'));
    fs.symlinkSync(path.join(PROJECT_ROOT, 'node_modules'), path.join(image, 'node_modules'));

    // WHEN the compiled module is asked for the version
    const run = spawnSync(
      process.execPath,
      [
        '-e',
        "const c = require('./build/lib/engines/reconciler/workflow/code-version'); console.log(JSON.stringify({ v: c.codeVersion(), f: c.codeFingerprint() }))",
      ],
      { cwd: image, encoding: 'utf8' },
    );

    // THEN it answers from the stamp (no source to read), with the package's version
    expect(run.stderr).toBe('');
    const out = JSON.parse(run.stdout) as { v: { version: string; templateCode: string }; f: string };
    expect(out.v).toEqual(JSON.parse(fs.readFileSync(stamp, 'utf8')));
    expect(out.v.version).toBe(JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')).version);
    expect(out.f).toMatch(/^[0-9a-f]{64}$/);
    expect(fs.existsSync(path.join(image, 'lib'))).toBe(false);
  });
});
