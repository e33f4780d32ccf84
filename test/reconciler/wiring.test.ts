import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { createWorkDir, workDirParent } from '../../lib/reconciler/wiring';

describe('where assemblies are synthesized', () => {
  test.each([
    ['WORKER_STACKS_WORK_DIR wins', { WORKER_STACKS_WORK_DIR: '/var/tmp/ws' }, 'shm', '/var/tmp/ws'],
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
      const parent = workDirParent(env as NodeJS.ProcessEnv, shm);
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
  const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout;
  const names = [`worker-stacks-7-${dead}-aaaaaa`, `worker-stacks-7-${process.pid}-bbbbbb`, `worker-stacks-8-${dead}-cccccc`, 'something-else'];
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
