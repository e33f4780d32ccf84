import * as fs from 'node:fs';
import * as path from 'node:path';
import { runCli } from '../../../lib/adapters/cli/program';
import { Io } from '../../../lib/adapters/cli/context';
import { EXAMPLES_DIR, REPO, tempDir } from '../../helpers/clusters';
import { run } from '../../helpers/tools';

/** An Io that keeps what a command prints. */
function capture(): { io: Io; out: () => string; err: () => string } {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (t) => out.push(t), err: (t) => err.push(t) }, out: () => out.join(''), err: () => err.join('') };
}

/** prod-eu1 with two independent mistakes: listener ingress-http on port 70000 and minSize above maxSize. */
const badProd = () =>
  fs
    .readFileSync(path.join(EXAMPLES_DIR, 'prod-eu1.yaml'), 'utf8')
    .replace('{ name: ingress-http, port: 80,', '{ name: ingress-http, port: 70000,')
    .replace('minSize: 3\n', 'minSize: 31\n');

const BAD_LINES = [
  'clusters/prod-eu1.yaml: spec.listeners[1].port: 70000 is not a port (1-65535)',
  'clusters/prod-eu1.yaml: spec.pool.minSize: 31 is greater than maxSize 30 (rule pool-size-order)',
];

describe('worker-stacks validate (in-process)', () => {
  const cwd = process.cwd();
  const env = process.env.WORKER_STACKS_CLUSTERS;
  let root: string;
  beforeEach(() => {
    // A fleet directory named clusters/ inside a temp dir, which is the working directory: files show as clusters/<name>.yaml.
    root = tempDir('cli');
    fs.mkdirSync(path.join(root, 'clusters'));
    process.chdir(root);
  });
  afterEach(() => {
    process.chdir(cwd);
    if (env === undefined) delete process.env.WORKER_STACKS_CLUSTERS;
    else process.env.WORKER_STACKS_CLUSTERS = env;
    fs.rmSync(root, { recursive: true, force: true });
  });

  test('the examples validate: exit 0, nothing on stderr', async () => {
    // GIVEN the repository's examples
    const c = capture();

    // WHEN validate runs on them
    const code = await runCli(['validate', '--clusters', EXAMPLES_DIR], c.io);

    // THEN
    expect(code).toBe(0);
    expect(c.err()).toBe('');
    expect(c.out()).toBe('5 cluster objects valid\n');
  });

  test('one invalid object: exit 1, one `file: path: rule` line per problem on stderr', async () => {
    // GIVEN a directory holding one invalid object
    fs.writeFileSync(path.join(root, 'clusters', 'prod-eu1.yaml'), badProd());
    const c = capture();

    // WHEN validate runs on it
    const code = await runCli(['validate', '--clusters', 'clusters'], c.io);

    // THEN every problem is a line of its own, and the summary counts the invalid file
    expect(code).toBe(1);
    expect(c.err().split('\n').filter(Boolean)).toEqual(BAD_LINES);
    expect(c.out()).toBe('0 cluster objects valid, 1 invalid\n');
  });

  test('-o json gives parseable JSON with the valid files and every problem', async () => {
    // GIVEN one valid and one invalid object
    fs.copyFileSync(path.join(EXAMPLES_DIR, 'staging-us1.yaml'), path.join(root, 'clusters', 'staging-us1.yaml'));
    fs.writeFileSync(path.join(root, 'clusters', 'prod-eu1.yaml'), badProd());
    const c = capture();

    // WHEN validate runs with -o json
    const code = await runCli(['validate', '--clusters', 'clusters', '-o', 'json'], c.io);

    // THEN stdout is JSON only, and the exit code still says invalid
    expect(code).toBe(1);
    expect(JSON.parse(c.out())).toEqual({
      valid: ['clusters/staging-us1.yaml'],
      problems: [
        { file: 'clusters/prod-eu1.yaml', path: 'spec.listeners[1].port', message: '70000 is not a port (1-65535)' },
        {
          file: 'clusters/prod-eu1.yaml',
          path: 'spec.pool.minSize',
          message: '31 is greater than maxSize 30 (rule pool-size-order)',
          rule: 'pool-size-order',
        },
      ],
    });
    expect(c.err()).toBe('');
  });

  test('-o json on a valid fleet lists every file and no problem', async () => {
    // GIVEN the examples
    const c = capture();

    // WHEN validate runs with --output json
    const code = await runCli(['validate', '--clusters', EXAMPLES_DIR, '--output', 'json'], c.io);

    // THEN
    expect(code).toBe(0);
    const report = JSON.parse(c.out());
    expect(report.problems).toEqual([]);
    expect(report.valid.map((f: string) => path.basename(f))).toEqual([
      'apps-eu1.yaml',
      'edge-ap1.yaml',
      'eks-us2.yaml',
      'prod-eu1.yaml',
      'staging-us1.yaml',
    ]);
  });

  test('a registry mirror URL with credentials: refused in text and JSON, and the credentials are printed nowhere', async () => {
    // GIVEN staging-us1 with a mirror URL that carries a user and password
    const text = fs
      .readFileSync(path.join(EXAMPLES_DIR, 'staging-us1.yaml'), 'utf8')
      .replace('https://mirror.staging.example.com', 'https://robot:hunter2-S3cret@mirror.staging.example.com');
    fs.writeFileSync(path.join(root, 'clusters', 'staging-us1.yaml'), text);
    const t = capture();
    const j = capture();

    // WHEN validate runs, as text and as JSON
    const codes = [
      await runCli(['validate', '--clusters', 'clusters'], t.io),
      await runCli(['validate', '--clusters', 'clusters', '-o', 'json'], j.io),
    ];

    // THEN both refuse it as user info, and neither output holds the user, the password or the URL
    expect(codes).toEqual([1, 1]);
    expect(t.err()).toMatch(
      /^clusters\/staging-us1\.yaml: spec\.cloudConfig\.values\.registryMirrors\[0\]: has user info \(credentials before "@"\)/,
    );
    expect(JSON.parse(j.out()).problems).toHaveLength(1);
    for (const printed of [t.out(), t.err(), j.out(), j.err()])
      expect(printed).not.toMatch(/robot|hunter2|S3cret|mirror\.staging/);
  });

  test('what cdk synth refuses (a cdk-nag finding), validate refuses too: exit 1, on the rule, with a fix in YAML', async () => {
    // GIVEN prod-eu1 with a port open to the internet (8443: SSH, a node service, validate refuses by itself): schema-valid, but cdk-nag refuses it at synth
    const text = fs
      .readFileSync(path.join(EXAMPLES_DIR, 'prod-eu1.yaml'), 'utf8')
      .replace('port: 22, source: { prefixListId: pl-0123456789abcdef0 }', 'port: 8443, source: { cidr: 0.0.0.0/0 }');
    fs.writeFileSync(path.join(root, 'clusters', 'prod-eu1.yaml'), text);
    const c = capture();

    // WHEN validate runs
    const code = await runCli(['validate', '--clusters', 'clusters'], c.io);

    // THEN
    expect(code).toBe(1);
    expect(c.err()).toMatch(
      /^clusters\/prod-eu1\.yaml: spec\.securityGroupRules\[3\]: cdk-nag AwsSolutions-EC23: .*; fix: narrow spec\.securityGroupRules\[3\]\.source/,
    );
    expect(c.out()).toBe('0 cluster objects valid, 1 invalid\n');
  });

  test('a YAML error is reported like a field problem, with the whole file as its subject', async () => {
    // GIVEN a file with a duplicate key
    fs.writeFileSync(path.join(root, 'clusters', 'dup.yaml'), 'kind: WorkerCluster\nkind: WorkerCluster\n');
    const c = capture();

    // WHEN validate runs
    const code = await runCli(['validate', '--clusters', 'clusters'], c.io);

    // THEN
    expect(code).toBe(1);
    expect(c.err()).toBe('clusters/dup.yaml: YAML syntax error at line 2, column 1: Map keys must be unique\n');
  });

  test('WORKER_STACKS_CLUSTERS is the directory when --clusters is not given', async () => {
    // GIVEN the env var naming a directory with one invalid object
    fs.writeFileSync(path.join(root, 'clusters', 'prod-eu1.yaml'), badProd());
    process.env.WORKER_STACKS_CLUSTERS = path.join(root, 'clusters');
    const c = capture();

    // WHEN validate runs without --clusters
    const code = await runCli(['validate'], c.io);

    // THEN that directory was checked
    expect(code).toBe(1);
    expect(c.err().split('\n').filter(Boolean)).toEqual(BAD_LINES);
  });

  test('a missing directory is a usage error: exit 2', async () => {
    // GIVEN a directory that does not exist
    const missing = path.join(root, 'no-such-dir');
    const c = capture();

    // WHEN validate runs on it
    const code = await runCli(['validate', '--clusters', missing], c.io);

    // THEN it says which directory and how to fix it
    expect(code).toBe(2);
    expect(c.err()).toContain(`cluster directory ${missing} does not exist`);
    expect(c.out()).toBe('');
  });

  test('a file given as the directory is a usage error: exit 2', async () => {
    // GIVEN --clusters naming a cluster file instead of its directory
    const file = path.join(EXAMPLES_DIR, 'prod-eu1.yaml');
    const c = capture();

    // WHEN validate runs on it
    const code = await runCli(['validate', '--clusters', file], c.io);

    // THEN it says so instead of crashing
    expect(code).toBe(2);
    expect(c.err()).toContain(`${file} is not a directory`);
  });

  test('an unknown output format is a usage error: exit 2', async () => {
    // GIVEN the examples and -o yaml
    const c = capture();

    // WHEN validate runs
    const code = await runCli(['validate', '--clusters', EXAMPLES_DIR, '-o', 'yaml'], c.io);

    // THEN it refuses instead of silently printing text
    expect(code).toBe(2);
    expect(c.err()).toMatch(/unknown output format "yaml"/);
    expect(c.out()).toBe('');
  });
});

describe('worker-stacks validate (the real entry point)', () => {
  test('node bin/worker-stacks.js exits 1 on an invalid object', () => {
    // GIVEN a fleet directory with one invalid object
    const root = tempDir('cli-bin');
    fs.mkdirSync(path.join(root, 'clusters'));
    fs.writeFileSync(path.join(root, 'clusters', 'prod-eu1.yaml'), badProd());
    const bin = path.join(REPO, 'bin', 'worker-stacks.js');

    // WHEN the npm bin entry runs in that directory
    const r = run('node', [bin, 'validate', '--clusters', 'clusters'], { cwd: root });

    // THEN the process exit code is 1 and stderr holds the problem lines
    fs.rmSync(root, { recursive: true, force: true });
    expect(r.stderr.split('\n').filter((l) => l.startsWith('clusters/'))).toEqual(BAD_LINES);
    expect(r.status).toBe(1);
  });
});
