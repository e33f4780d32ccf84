import * as fs from 'node:fs';
import * as path from 'node:path';
import { runCli } from '../../../lib/adapters/cli/program';
import { EXAMPLES_DIR, tempDir } from '../../helpers/clusters';

/**
 * `worker-stacks delete <cluster> --pool <pool>` refuses, before any AWS call, what would not delete exactly one pool's
 * own stack of a pool gone from the object: each with exit 2 and one line that says what to do. (The deletion itself,
 * against moto: test/integration/delete-pools.test.ts.)
 */

const run = async (argv: string[]) => {
  let out = '';
  let err = '';
  const code = await runCli(argv, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
};

let dir: string;
beforeEach(() => {
  dir = tempDir('delete-pool');
  fs.copyFileSync(path.join(EXAMPLES_DIR, 'apps-eu1.yaml'), path.join(dir, 'apps-eu1.yaml'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

test.each([
  // what is asked, the flags, what the one line says
  [
    'the pool default (it lives in the shared stack)',
    ['--pool', 'default', '--yes'],
    /^error: the pool default lives in the shared stack WorkerStack-apps-eu1, not in a stack of its own: remove it from the object and the reconciler updates the shared stack without it \(or delete the whole cluster: worker-stacks delete apps-eu1 --yes\); nothing was deleted\n$/,
  ],
  [
    'a pool still in the object',
    ['--pool', 'spot', '--yes'],
    /^error: pool spot is still in \S*apps-eu1\.yaml: remove it from the object first; the reconciler then deletes WorkerStack-apps-eu1-Pool-spot in turn, once the cluster's other stacks are settled \(worker-stacks status shows what it waits for\)\n$/,
  ],
  [
    'a pool still in the object, with --force',
    ['--pool', 'arm', '--yes', '--force'],
    /^error: pool arm is still in \S*apps-eu1\.yaml: remove it from the object first/,
  ],
  [
    'a removed pool without --yes',
    ['--pool', 'gpu'],
    /^error: deleting WorkerStack-apps-eu1-Pool-gpu terminates the nodes of pool gpu; run again with --yes\n$/,
  ],
  [
    'a name that is no pool name',
    ['--pool', 'Spot_1', '--yes'],
    /^error: --pool Spot_1: a pool's name is a DNS label \(lowercase letters, digits and '-'\); nothing was deleted\n$/,
  ],
])('delete --pool refuses %s: exit 2, one line, nothing deleted', async (_what, flags, message) => {
  // GIVEN the example apps-eu1 (pools default, spot and arm)

  // WHEN delete is asked for one pool
  const r = await run(['delete', 'apps-eu1', ...flags, '--clusters', dir]);

  // THEN it is refused with what to do, before any AWS call
  expect({ code: r.code, out: r.out }).toEqual({ code: 2, out: '' });
  expect(r.err).toMatch(message);
});
