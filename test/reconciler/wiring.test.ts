import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { workDirParent } from '../../lib/reconciler/wiring';

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
