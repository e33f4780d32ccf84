import * as fs from 'node:fs';
import * as path from 'node:path';
import { runCli } from '../../../lib/adapters/cli/program';
import { EXAMPLES_DIR, tempDir } from '../../helpers/clusters';

/** `worker-stacks status` says how each cluster's nodes roll (strategy, batches, gate, drain), from the object alone. */

const run = async (argv: string[]) => {
  let out = '';
  let err = '';
  const code = await runCli(argv, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
};

function clustersDir(mutate: (name: string, text: string) => string = (_n, t) => t): string {
  const dir = tempDir('status-rollout');
  for (const f of fs.readdirSync(EXAMPLES_DIR).filter((n) => n.endsWith('.yaml')))
    fs.writeFileSync(path.join(dir, f), mutate(f, fs.readFileSync(path.join(EXAMPLES_DIR, f), 'utf8')));
  return dir;
}

test('-o json carries one sentence per cluster: batches, gate and drain', async () => {
  // WHEN
  const r = await run(['status', '-o', 'json', '--clusters', clustersDir()]);
  // THEN
  const rolls = Object.fromEntries(
    (JSON.parse(r.out).clusters as Array<{ cluster: string; rolls: string }>).map((c) => [c.cluster, c.rolls]),
  );
  expect(rolls).toEqual({
    'apps-eu1': 'in batches of 1, at least 1 in service, gated by node signals (100% within PT10M), drained',
    'edge-ap1': 'in batches of 1, at least 2 in service, gated by node signals (100% within PT10M), drained',
    'eks-us2': 'in batches of 1, at least 1 in service, gated by node signals (100% within PT10M), drained',
    'prod-eu1': 'in batches of 2, at least 3 in service, gated by node signals (100% within PT10M), drained',
    'staging-us1': '2 nodes in batches of 1, at least 1 in service, gated by node signals (100% within PT10M), drained',
  });
});

test("--wide shows it on each cluster's line; an instance refresh without drain says so", async () => {
  // GIVEN prod-eu1 switched to an instance refresh with alarms, and drain off
  const dir = clustersDir((f, text) =>
    f === 'prod-eu1.yaml'
      ? text.replace(
          / {4}rollingUpdate:\n( {6}.*\n)+/,
          '    rollingUpdate:\n      strategy: instanceRefresh\n      instanceRefresh: { maxHealthyPercentage: 150, checkpoints: [50, 100], alarms: [prod-eu1-nodes-not-ready] }\n    drain: { enabled: false }\n',
        )
      : text,
  );
  // WHEN
  const r = await run(['status', '--wide', '--clusters', dir]);
  // THEN
  expect(r.err).toBe('');
  expect(r.out).toMatch(
    /^prod-eu1: .*\(rolls by instance refresh \(100-150% healthy, checkpoints at 50\/100%, gated by 1 alarm\), not drained \(no termination lifecycle hook\)/m,
  );
  expect(r.out).toMatch(
    /^staging-us1: .*\(rolls 2 nodes in batches of 1, at least 1 in service, gated by node signals \(100% within PT10M\), drained/m,
  );
});
