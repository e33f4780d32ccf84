import * as fs from 'node:fs';
import * as path from 'node:path';
import { runCli } from '../../../lib/adapters/cli/program';
import { EXAMPLES_DIR, tempDir } from '../../helpers/clusters';

/** pause, resume, retry and status's refusals, through the real CLI in-process, on a copy of the examples. */

const run = async (argv: string[]) => {
  let out = '';
  let err = '';
  const code = await runCli(argv, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
};

let dir: string;
beforeEach(() => {
  dir = tempDir('control');
  for (const f of fs.readdirSync(EXAMPLES_DIR).filter((x) => x.endsWith('.yaml')))
    fs.copyFileSync(path.join(EXAMPLES_DIR, f), path.join(dir, f));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

test('pause sets spec.paused in the object file, keeping its comments; resume removes it', async () => {
  // GIVEN an example object with a comment on its first line
  const file = path.join(dir, 'prod-eu1.yaml');
  const comment = fs.readFileSync(file, 'utf8').split('\n')[0];

  // WHEN it is paused
  const paused = await run(['pause', 'prod-eu1', '--clusters', dir]);

  // THEN the file says so and keeps its comment
  expect(paused.code).toBe(0);
  expect(fs.readFileSync(file, 'utf8')).toMatch(/\n {2}paused: true\n/);
  expect(fs.readFileSync(file, 'utf8').split('\n')[0]).toBe(comment);

  // WHEN it is resumed THEN the field is gone
  expect((await run(['resume', 'prod-eu1', '--clusters', dir])).code).toBe(0);
  expect(fs.readFileSync(file, 'utf8')).not.toMatch(/paused:/);
});

test('retry writes a retry request beside the status; an unknown cluster is a usage error', async () => {
  // WHEN a retry is asked for, and one for a cluster that does not exist
  const ok = await run(['retry', 'prod-eu1', '--clusters', dir]);
  const unknown = await run(['retry', 'nope', '--clusters', dir]);

  // THEN the request is there, and the unknown name is refused with the fix
  expect(ok.code).toBe(0);
  expect(fs.readFileSync(path.join(dir, '.status', 'prod-eu1.retry'), 'utf8').trim()).toMatch(/^\d{4}-\d\d-\d\dT/);
  expect(unknown.code).toBe(2);
  expect(unknown.err).toMatch(/no cluster nope; run worker-stacks status/);
});

test('status refuses an unknown output format (exit 2) and reports an unreadable status file with the fix (exit 1)', async () => {
  // GIVEN a status file that is not JSON
  fs.mkdirSync(path.join(dir, '.status'));
  fs.writeFileSync(path.join(dir, '.status', 'prod-eu1.json'), '{ not json');

  // WHEN status runs with a bad -o, then as a table
  const bad = await run(['status', '-o', 'yaml', '--clusters', dir]);
  const table = await run(['status', '--clusters', dir]);

  // THEN the flag is a usage error, and the unreadable status is named with what to do, never as Unknown with exit 0
  expect(bad.code).toBe(2);
  expect(bad.err).toMatch(/-o yaml: give table or json/);
  expect(table.code).toBe(1);
  expect(table.out).toMatch(/prod-eu1\s.*Unreadable\s+StatusUnreadable/);
  expect(table.out).toMatch(/prod-eu1: .*not valid JSON; fix: .*delete it and the next pass rebuilds it/);
});

test('status writes nothing', async () => {
  // WHEN status runs on objects never reconciled
  expect((await run(['status', '--clusters', dir])).code).toBe(0);

  // THEN no state directory was created
  expect(fs.existsSync(path.join(dir, '.status'))).toBe(false);
});
