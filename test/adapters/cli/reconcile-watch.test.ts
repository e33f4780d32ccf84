import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO, tempDir } from '../../helpers/clusters';

/**
 * `worker-stacks reconcile --watch` is a daemon: it runs until SIGTERM, also when nothing holds its event loop (no
 * --port, the file store, no stack in progress). It ended by itself, exit 0, right after its first pass.
 */

let daemon: ChildProcess | undefined;
afterEach(async () => {
  if (daemon && daemon.exitCode === null && daemon.signalCode === null) {
    daemon.kill('SIGKILL');
    await new Promise((r) => daemon!.once('exit', r));
  }
});

test('an idle daemon without --port stays up, sees a new object, and stops on SIGTERM with exit 0', async () => {
  // GIVEN a clusters directory with one object that is invalid (nothing of it reaches AWS), and AWS nowhere
  const dir = tempDir('watch');
  fs.writeFileSync(
    path.join(dir, 'first.yaml'),
    'apiVersion: worker-stacks.io/v1alpha1\nkind: WorkerCluster\nmetadata: { name: first }\nspec: {}\n',
  );
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    AWS_ENDPOINT_URL: 'http://127.0.0.1:9',
    AWS_ACCESS_KEY_ID: 'x',
    AWS_SECRET_ACCESS_KEY: 'x',
    AWS_REGION: 'eu-west-1',
    WORKER_STACKS_AWS_REQUEST_TIMEOUT_SECONDS: '1',
  };
  delete env.NODE_ENV;
  let log = '';
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => {
    daemon = spawn(
      process.execPath,
      [path.join(REPO, 'bin', 'worker-stacks.js'), 'reconcile', '--watch', '--clusters', dir],
      { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    daemon.stdout!.on('data', (d) => (log += String(d)));
    daemon.stderr!.on('data', (d) => (log += String(d)));
    daemon.on('exit', (code, signal) => resolve({ code, signal }));
  });
  const until = async (what: string, ok: () => boolean) => {
    const deadline = Date.now() + 90_000;
    while (!ok()) {
      if (daemon!.exitCode !== null || daemon!.signalCode !== null)
        throw new Error(
          `the daemon ended (${daemon!.exitCode ?? daemon!.signalCode}) while waiting for ${what}:\n${log}`,
        );
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${log}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const lines = () =>
    log
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { msg: string; cluster?: string });

  // WHEN its first pass is done, and then a second object appears
  await until('the first pass', () => lines().some((l) => l.msg === 'pass done'));
  fs.writeFileSync(
    path.join(dir, 'second.yaml'),
    'apiVersion: worker-stacks.io/v1alpha1\nkind: WorkerCluster\nmetadata: { name: second }\nspec: {}\n',
  );

  // THEN it is still there to reconcile it
  await until('a reconcile of the new object', () => lines().some((l) => l.cluster === 'second'));

  // WHEN it gets SIGTERM THEN it stops cleanly, exit 0
  daemon!.kill('SIGTERM');
  expect(await exited).toEqual({ code: 0, signal: null });
  expect(lines().map((l) => l.msg)).toContain('reconciler stopped');
}, 150_000);
