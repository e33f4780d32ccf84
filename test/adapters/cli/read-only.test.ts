import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO, tempDir } from '../../helpers/clusters';
import { cleanEnv } from '../../engines/review/cli-run';
import { commitAll, createFixtureRepo, edit, git } from '../../engines/review/fixture';

/**
 * Read-only commands write nothing: not in the project (its files, its clusters/ and their .status, its git
 * repository), and nothing left in the temp directory (the scratch synthesis of validate and review is removed).
 * Each runs as the installed command, in a git repository of the project whose HEAD changes the kubelet config.
 */

let repo: string;
let tmp: string;

beforeAll(() => {
  repo = createFixtureRepo();
  edit(repo, 'cloudconfig/_shared/kubelet-config.yaml.hbs', (t) =>
    t.replace('readOnlyPort: 0', 'readOnlyPort: 0\nserializeImagePulls: false'),
  );
  commitAll(repo, 'head: kubelet');
  // A recorded status, as after a reconcile: status reads it and must leave it as it is.
  fs.mkdirSync(path.join(repo, 'clusters', '.status'));
  fs.writeFileSync(
    path.join(repo, 'clusters', '.status', 'gone.json'),
    JSON.stringify({ resourceVersion: 3, generation: 2, status: { conditions: [] } }),
  );
});
afterAll(() => fs.rmSync(path.dirname(repo), { recursive: true, force: true }));

/** Every file and directory under `dir` (links not followed), with its size, mode, mtime and content hash. */
function snapshot(dir: string, skip: (rel: string) => boolean = () => false): Record<string, string> {
  const out: Record<string, string> = {};
  const visit = (rel: string) => {
    const p = path.join(dir, rel);
    const st = fs.lstatSync(p);
    if (st.isSymbolicLink()) out[rel] = `link ${fs.readlinkSync(p)}`;
    else if (st.isDirectory()) {
      out[rel] = `dir ${st.mode} ${st.mtimeMs}`;
      for (const e of fs.readdirSync(p).sort()) if (!skip(path.join(rel, e))) visit(path.join(rel, e));
    } else
      out[rel] =
        `file ${st.mode} ${st.size} ${st.mtimeMs} ${createHash('sha256').update(fs.readFileSync(p)).digest('hex')}`;
  };
  visit('.');
  return out;
}

/** The project as files, and its repository as git sees it (refs, worktrees, stash), not git's own caches. */
function projectState() {
  return {
    files: snapshot(repo, (rel) => rel === '.git'),
    refs: git(repo, 'show-ref'),
    worktrees: git(repo, 'worktree', 'list', '--porcelain'),
    status: git(repo, 'status', '--porcelain', '--ignored'),
  };
}

function runIn(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env = cleanEnv({ TMPDIR: tmp, WORKER_STACKS_WORK_DIR: tmp });
  delete env.NODE_ENV;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(REPO, 'bin', 'worker-stacks.js'), ...args], {
      cwd: repo,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

test.each([
  { args: ['validate'] },
  { args: ['validate', '-o', 'json'] },
  { args: ['render', 'prod-eu1'] },
  { args: ['render', 'prod-eu1', '--user-data'] },
  { args: ['status'] },
  { args: ['status', '-o', 'json', '--wide'] },
  { args: ['review', '--base', 'base', '--format', 'json'] },
  { args: ['crd'] },
  { args: ['manifests'] },
  { args: ['schema', '--markdown'] },
])(
  'worker-stacks $args.0 ($args) writes nothing to disk',
  async ({ args }) => {
    // GIVEN the project, and an empty temp directory
    tmp = tempDir('read-only-tmp');
    const before = projectState();

    // WHEN the command runs
    const r = await runIn(args);

    // THEN it did its work (exit 0, output), and the project and the temp directory are as they were
    expect({ code: r.code, out: r.stdout.length > 0 }).toEqual({ code: 0, out: true });
    expect(projectState()).toEqual(before);
    // (ts-node, which runs the command when build/ is not current, keeps its compile cache there: not the command's)
    expect(fs.readdirSync(tmp).filter((f) => !/^v8-compile-cache-/.test(f))).toEqual([]);
    fs.rmSync(tmp, { recursive: true, force: true });
  },
  180_000,
);
