import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO, tempDir } from './clusters';

/**
 * An earlier commit of this repository's code (lib/, cloudconfig/ and bin/ as they were at `commit`, taken out of git
 * into a scratch directory), beside this checkout's tsconfig.json, package.json and node_modules: the tests that prove
 * an upgrade run the old release's own code (its synthesis, or its CLI) against what the new code then does. `why`
 * says what the commit is, for the error a shallow clone gets. Remove the directory when done.
 */
export function checkoutRelease(commit: string, why: string): string {
  const dir = tempDir(`release-${commit}`);
  const archive = spawnSync('git', ['-C', REPO, 'archive', '--format=tar', commit, 'lib', 'cloudconfig', 'bin'], {
    maxBuffer: 256 * 1024 * 1024,
  });
  if (archive.status !== 0)
    throw new Error(
      `git archive ${commit} failed (${String(archive.stderr)}); this test needs ${why}: in a shallow clone run git fetch --unshallow`,
    );
  const untar = spawnSync('tar', ['-x', '-C', dir], { input: archive.stdout });
  if (untar.status !== 0) throw new Error(`tar failed: ${String(untar.stderr)}`);
  for (const f of ['tsconfig.json', 'package.json']) fs.copyFileSync(path.join(REPO, f), path.join(dir, f));
  fs.symlinkSync(path.join(REPO, 'node_modules'), path.join(dir, 'node_modules'));
  fs.writeFileSync(
    path.join(dir, PRELOAD),
    `require(${JSON.stringify(path.join(REPO, 'bin', 'ts-require.js'))}).register(${JSON.stringify(path.join(dir, 'tsconfig.json'))});\n`,
  );
  return dir;
}

const PRELOAD = 'ts-require-preload.js';

/**
 * Node's arguments that run a .ts entry of the release in `dir` from its sources: this checkout's bin/ts-require.js
 * (each file transpiled alone, as ts-node --transpile-only does, and cached by its bytes: an old release's files are
 * compiled once per machine, not at every start as ts-node compiles them; ~2.6 s of CPU per start instead of ~5.7 s).
 */
export function fromSources(dir: string, entry: string): string[] {
  return ['-r', path.join(dir, PRELOAD), path.join(dir, entry)];
}

export interface OldRun {
  readonly code: number;
  readonly out: string;
  /** stderr: the JSON log lines (pino), and any error. */
  readonly err: string;
}

/**
 * `worker-stacks <args>` of the release checked out in `dir` (its bin/worker-stacks.ts from its sources, in a child
 * process with this process's environment plus `env`: moto's endpoint and credentials once startWorld set them).
 */
export function oldCli(dir: string, args: readonly string[], env: Readonly<Record<string, string>> = {}): OldRun {
  const r = spawnSync(process.execPath, [...fromSources(dir, 'bin/worker-stacks.ts'), ...args], {
    cwd: dir,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    timeout: 240_000,
    env: { ...process.env, ...env },
  });
  if (r.error) throw r.error;
  return { code: r.status ?? -1, out: r.stdout, err: r.stderr };
}
