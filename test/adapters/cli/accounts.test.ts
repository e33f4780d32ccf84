import { runCli } from '../../../lib/adapters/cli/program';

/** The many-accounts flags are checked before any AWS call: these runs have no credentials and no endpoint. */

const run = async (argv: string[]) => {
  let out = '';
  let err = '';
  const code = await runCli(argv, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
};

test.each([
  {
    argv: ['--trust', 'my-admin'],
    err: 'error: --trust my-admin: not a principal ARN (arn:aws:iam::<account>:role/<name>, :user/<name> or :root)\n',
  },
  {
    argv: ['--trust', 'arn:aws:iam::111111111111:role/ok,arn:aws:s3:::bucket'],
    err: 'error: --trust arn:aws:s3:::bucket: not a principal ARN (arn:aws:iam::<account>:role/<name>, :user/<name> or :root)\n',
  },
  {
    argv: ['--external-id', 'x'],
    err: "error: --external-id is a condition of the deployer role's trust: give --trust <principal ARN> too\n",
  },
  { argv: ['--account', '12345'], err: 'error: --account 12345: an account id is 12 digits\n' },
])('bootstrap $argv is a usage error (exit 2), said in one line', async ({ argv, err }) => {
  // WHEN
  const r = await run(['bootstrap', '--region', 'eu-west-1', ...argv]);
  // THEN
  expect(r).toEqual({ code: 2, out: '', err });
});

test.each(['reconcile', 'delete'])('%s takes --role-name, --external-id and --no-assume-role', async (command) => {
  // WHEN
  const r = await run([command, '--help']);
  // THEN
  const help = r.out.replace(/\s+/g, ' ');
  expect(help).toContain(
    `--role-name <prefix> the deployer role's name in each account, before -<region> (default: "worker-stacks-deployer")`,
  );
  expect(r.out).toContain('--external-id <id>');
  expect(r.out).toContain('--no-assume-role');
});
