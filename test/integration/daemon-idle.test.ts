import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { REPO } from '../helpers/clusters';

// `reconcile --watch` is a daemon with or without --port: with nothing to do (no object, nothing requeued) it keeps
// running until SIGTERM. It used to exit 0 as soon as nothing held the event loop (found while testing issue 25).

test('the daemon without --port and with nothing to do keeps running until SIGTERM, then exits 0', async () => {
  // GIVEN an empty clusters directory
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-idle-'));
  fs.mkdirSync(path.join(dir, 'clusters'));
  let logs = '';

  // WHEN the daemon starts, and 3 s pass after it said so
  const daemon = spawn(
    process.execPath,
    [path.join(REPO, 'bin', 'worker-stacks.js'), 'reconcile', '--watch', '--clusters', path.join(dir, 'clusters')],
    { cwd: REPO, env: { ...process.env, AWS_REGION: 'eu-west-1' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  daemon.stdout.on('data', (d) => (logs += String(d)));
  daemon.stderr.on('data', (d) => (logs += String(d)));
  const exited = new Promise<number | null>((resolve) => daemon.once('exit', (code) => resolve(code)));
  for (let i = 0; i < 600 && !logs.includes('reconciler started') && daemon.exitCode === null; i++)
    await new Promise((r) => setTimeout(r, 100));
  await new Promise((r) => setTimeout(r, 3000));

  // THEN it is still running; on SIGTERM it stops cleanly
  try {
    expect({ running: daemon.exitCode === null, logs: daemon.exitCode === null ? '' : logs }).toEqual({
      running: true,
      logs: '',
    });
    daemon.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(logs).toMatch(/"msg":"reconciler stopped"/);
  } finally {
    if (daemon.exitCode === null) daemon.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 120_000);
