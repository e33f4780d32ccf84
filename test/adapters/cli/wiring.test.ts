import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { createWorkDir, workDirParent } from '../../../lib/adapters/cli/wiring';
import { REPO } from '../../helpers/clusters';
import { run } from '../../helpers/tools';

describe('where assemblies are synthesized', () => {
  test.each([
    ['WORKER_STACKS_WORK_DIR wins', { WORKER_STACKS_WORK_DIR: os.tmpdir() }, 'shm', os.tmpdir()],
    ['a writable /dev/shm (tmpfs: memory, not disk)', {}, 'shm', 'shm'],
    ['no /dev/shm: the usual temp dir', {}, 'missing', os.tmpdir()],
    ['/dev/shm is a file: the usual temp dir', {}, 'file', os.tmpdir()],
  ])('%s', (_name, env, shmKind, expected) => {
    // GIVEN
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-shm-'));
    const shm = path.join(root, 'shm');
    if (shmKind === 'shm') fs.mkdirSync(shm);
    if (shmKind === 'file') fs.writeFileSync(shm, '');
    try {
      // WHEN
      const parent = workDirParent(env, shm);
      // THEN
      expect(parent).toBe(expected === 'shm' ? shm : expected);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});

test('a new work dir is named after its process; those of processes that are gone are removed, others kept', () => {
  // GIVEN a parent with the dir of a process that has exited, one of a live process (this one), and unrelated ones
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-workdirs-'));
  const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
    encoding: 'utf8',
  }).stdout;
  const names = [
    `worker-stacks-7-${dead}-aaaaaa`,
    `worker-stacks-7-${process.pid}-bbbbbb`,
    `worker-stacks-8-${dead}-cccccc`,
    'something-else',
  ];
  for (const n of names) fs.mkdirSync(path.join(parent, n, 'inner'), { recursive: true });
  try {
    // WHEN another process of user 7 creates its work dir
    const dir = createWorkDir(parent, 424242, 7);
    // THEN it is named after that process, and only the dead process's dir of the same user went
    expect(path.basename(dir)).toMatch(/^worker-stacks-7-424242-/);
    expect(fs.readdirSync(parent).sort()).toEqual([path.basename(dir), ...names.slice(1)].sort());
  } finally {
    fs.rmSync(parent, { recursive: true, force: true });
  }
});

describe('a WORKER_STACKS_WORK_DIR that cannot be used is refused, naming the variable and the fix', () => {
  test.each([
    ['a missing directory', (root: string) => path.join(root, 'missing')],
    [
      'a file',
      (root: string) => {
        const f = path.join(root, 'file');
        fs.writeFileSync(f, '');
        return f;
      },
    ],
  ])('%s', (_name, make) => {
    // GIVEN
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-workdir-env-'));
    try {
      const bad = make(root);
      // WHEN / THEN
      expect(() => workDirParent({ WORKER_STACKS_WORK_DIR: bad })).toThrow(
        new RegExp(`WORKER_STACKS_WORK_DIR=${bad}: not a writable directory\\n  fix: create it`),
      );
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  test('by the real CLI: exit 2, one line with the fix, before any AWS call', () => {
    // GIVEN no AWS endpoint or credentials at all: reaching AWS would fail differently (exit 3)
    const env = {
      ...process.env,
      WORKER_STACKS_WORK_DIR: '/nonexistent/ws-work',
      AWS_ENDPOINT_URL: 'http://127.0.0.1:9',
      AWS_ACCESS_KEY_ID: 'x',
      AWS_SECRET_ACCESS_KEY: 'x',
      AWS_REGION: 'eu-west-1',
    };
    // WHEN
    const r = run(
      process.execPath,
      [path.join(REPO, 'bin', 'worker-stacks.js'), 'reconcile', '--once', '--clusters', path.join(REPO, 'clusters')],
      { env, cwd: REPO },
    );
    // THEN
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(
      /^error: WORKER_STACKS_WORK_DIR=\/nonexistent\/ws-work: not a writable directory\n {2}fix: create it/m,
    );
    expect(r.stderr.split('\n').filter((l) => l.startsWith('error:'))).toHaveLength(1);
    expect(r.stderr).not.toMatch(/ECONNREFUSED/);
  }, 60_000);
});
