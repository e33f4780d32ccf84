import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { MAX_CLUSTER_FILE_BYTES, readClusterFile } from '../../../lib/platform/files/cluster-files';
import { loadClusterFile, loadClusters, loadValidClusters } from '../../../lib/platform/files/load-clusters';
import { ValidationError } from '../../../lib/core/errors';
import { EXAMPLES_DIR, TEMPLATES, tempDir } from '../../helpers/clusters';

// Reading cluster files (lib/platform/files/): hostile files, limits, whole folders and the rules across a fleet.
// Parsing the text (YAML-level problems) is the model's: test/model/cluster/load.test.ts.

const exampleText = (name: string) => fs.readFileSync(path.join(EXAMPLES_DIR, `${name}.yaml`), 'utf8');

describe('files (loadClusterFile, loadClusters, loadValidClusters)', () => {
  let root: string;
  let dir: string;
  beforeEach(() => {
    root = tempDir('load');
    dir = path.join(root, 'clusters');
    fs.mkdirSync(dir);
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  test('a file that cannot be read is a problem of that file', () => {
    // GIVEN a path that does not exist
    const file = path.join(dir, 'gone.yaml');

    // WHEN it is loaded
    const r = loadClusterFile(file, { templates: TEMPLATES, relativeTo: root });

    // THEN the problem names the file (relative) and the reason
    expect(r.cluster).toBeUndefined();
    expect(r.problems).toEqual([
      { file: 'clusters/gone.yaml', path: '', message: expect.stringMatching(/^cannot be read: ENOENT/) },
    ]);
  });

  test('a directory named like a cluster file is reported, and the other files still load', () => {
    // GIVEN a valid file and a directory called broken.yaml
    fs.copyFileSync(path.join(EXAMPLES_DIR, 'staging-us1.yaml'), path.join(dir, 'staging-us1.yaml'));
    fs.mkdirSync(path.join(dir, 'broken.yaml'));

    // WHEN the directory is loaded
    const r = loadClusters(dir, { templates: TEMPLATES, relativeTo: root });

    // THEN the good cluster is there and the unreadable one is a problem
    expect(r.clusters.map((c) => [c.file, c.cluster.metadata.name])).toEqual([
      ['clusters/staging-us1.yaml', 'staging-us1'],
    ]);
    expect(r.problems).toEqual([
      { file: 'clusters/broken.yaml', path: '', message: expect.stringMatching(/^is a directory, not a regular file/) },
    ]);
  });

  test('a cluster object written as .json is refused by name, never skipped in silence', () => {
    // GIVEN a valid YAML object and the same object as JSON
    fs.copyFileSync(path.join(EXAMPLES_DIR, 'staging-us1.yaml'), path.join(dir, 'staging-us1.yaml'));
    fs.writeFileSync(
      path.join(dir, 'prod-eu1.json'),
      JSON.stringify({ apiVersion: 'worker-stacks.io/v1alpha1', kind: 'WorkerCluster' }),
    );

    // WHEN the directory is loaded
    const r = loadClusters(dir, { templates: TEMPLATES, relativeTo: root });

    // THEN the YAML one loads and the JSON one is a problem that says how to fix it
    expect(r.clusters.map((c) => c.cluster.metadata.name)).toEqual(['staging-us1']);
    expect(r.problems).toEqual([
      {
        file: 'clusters/prod-eu1.json',
        path: '',
        message:
          'is a .json file; cluster objects are read from *.yaml and *.yml files only: rename it to prod-eu1.yaml (JSON is valid YAML)',
      },
    ]);
  });

  test('loadValidClusters throws one ValidationError listing every problem of every file', () => {
    // GIVEN one valid file, one with a YAML error, one with two field errors, and a non-YAML file that is ignored
    fs.copyFileSync(path.join(EXAMPLES_DIR, 'staging-us1.yaml'), path.join(dir, 'staging-us1.yaml'));
    fs.writeFileSync(path.join(dir, 'a-broken.yaml'), 'apiVersion: x\napiVersion: y\n');
    fs.writeFileSync(
      path.join(dir, 'prod-eu1.yaml'),
      exampleText('prod-eu1').replace('port: 443,', 'port: 70000,').replace('minSize: 3', 'minSize: 31'),
    );
    fs.writeFileSync(path.join(dir, 'README.md'), 'not a cluster\n');

    // WHEN the fleet is loaded strictly
    let error: unknown;
    try {
      loadValidClusters(dir, { templates: TEMPLATES, relativeTo: root });
    } catch (e) {
      error = e;
    }

    // THEN nothing is returned, and the error lists each problem as `file: path: message`
    expect(error).toBeInstanceOf(ValidationError);
    const v = error as ValidationError;
    expect(v.problems).toHaveLength(3);
    expect(v.message.split('\n')).toEqual([
      '3 problems in the cluster objects; nothing was synthesized or deployed:',
      '  clusters/a-broken.yaml: YAML syntax error at line 2, column 1: Map keys must be unique',
      '  clusters/prod-eu1.yaml: spec.listeners[0].port: 70000 is not a port (1-65535)',
      '  clusters/prod-eu1.yaml: spec.pool.minSize: 31 is greater than maxSize 30 (rule pool-size-order)',
      '  fix: correct the fields named above, then run `worker-stacks validate` again',
    ]);
  });

  test('loadValidClusters returns every cluster of a valid fleet, in file-name order', () => {
    // GIVEN copies of the three examples (one as .yml)
    for (const name of ['staging-us1', 'edge-ap1'])
      fs.copyFileSync(path.join(EXAMPLES_DIR, `${name}.yaml`), path.join(dir, `${name}.yaml`));
    fs.copyFileSync(path.join(EXAMPLES_DIR, 'prod-eu1.yaml'), path.join(dir, 'prod-eu1.yml'));

    // WHEN the fleet is loaded strictly
    const clusters = loadValidClusters(dir, { templates: TEMPLATES, relativeTo: root });

    // THEN all three come back, with defaults applied
    expect(clusters.map((c) => c.file)).toEqual([
      'clusters/edge-ap1.yaml',
      'clusters/prod-eu1.yml',
      'clusters/staging-us1.yaml',
    ]);
    expect(clusters[1].cluster.spec.pool!.rollingUpdate.waitOnResourceSignals).toBe(true);
  });
});

describe('hostile files (readClusterFile): only regular files up to the size limit are read', () => {
  let root: string;
  let dir: string;
  beforeEach(() => {
    root = tempDir('hostile');
    dir = path.join(root, 'clusters');
    fs.mkdirSync(dir);
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  /** Makes the hostile entry x.yaml in dir. */
  const HOSTILE: [string, (file: string) => void, RegExp][] = [
    [
      'a symlink to /dev/zero',
      (f) => fs.symlinkSync('/dev/zero', f),
      /^is a character device, not a regular file; a cluster object must be a regular file of at most 1048576 bytes$/,
    ],
    [
      'a FIFO nobody writes to',
      (f) => expect(spawnSync('mkfifo', [f]).status).toBe(0),
      /^is a FIFO \(named pipe\), not a regular file/,
    ],
    ['a directory named x.yaml', (f) => fs.mkdirSync(f), /^is a directory, not a regular file/],
    [
      'a 50 MB file',
      (f) => fs.truncateSync((fs.writeFileSync(f, 'apiVersion: x\n'), f), 50 * 1000 * 1000),
      /^is 50000000 bytes, more than the limit of 1048576; a cluster object is a few KiB$/,
    ],
  ];

  test.each(HOSTILE)('%s is refused within a second, with the file and the rule', (_what, make, rule) => {
    // GIVEN the hostile entry beside a valid cluster file
    make(path.join(dir, 'x.yaml'));
    fs.copyFileSync(path.join(EXAMPLES_DIR, 'staging-us1.yaml'), path.join(dir, 'staging-us1.yaml'));

    // WHEN the directory is loaded
    const started = Date.now();
    const r = loadClusters(dir, { templates: TEMPLATES, relativeTo: root });

    // THEN it is one problem naming the file, the good cluster still loads, and it took well under a second
    expect(Date.now() - started).toBeLessThan(1000);
    expect(r.problems).toEqual([{ file: 'clusters/x.yaml', path: '', message: expect.stringMatching(rule) }]);
    expect(r.clusters.map((c) => c.cluster.metadata.name)).toEqual(['staging-us1']);
  });

  test('the limit is 1 MiB by default: a file of exactly that size is read, one byte more is refused unread', () => {
    // GIVEN two files of MAX_CLUSTER_FILE_BYTES and one byte more
    const atLimit = path.join(dir, 'a.yaml');
    const over = path.join(dir, 'b.yaml');
    fs.writeFileSync(atLimit, `#${'x'.repeat(MAX_CLUSTER_FILE_BYTES - 2)}\n`);
    fs.writeFileSync(over, `#${'x'.repeat(MAX_CLUSTER_FILE_BYTES - 1)}\n`);

    // WHEN they are read
    const a = readClusterFile(atLimit);
    const b = readClusterFile(over, { shown: 'clusters/b.yaml' });

    // THEN the first comes back whole, the second is a problem of that file
    expect(MAX_CLUSTER_FILE_BYTES).toBe(1024 * 1024);
    expect(a.text).toHaveLength(MAX_CLUSTER_FILE_BYTES);
    expect(b).toEqual({
      problem: {
        file: 'clusters/b.yaml',
        path: '',
        message: 'is 1048577 bytes, more than the limit of 1048576; a cluster object is a few KiB',
      },
    });
  });

  test('maxBytes sets another limit, and loadClusterFile passes it on', () => {
    // GIVEN a valid cluster file (a few KiB)
    const file = path.join(dir, 'staging-us1.yaml');
    fs.copyFileSync(path.join(EXAMPLES_DIR, 'staging-us1.yaml'), file);
    const size = fs.statSync(file).size;

    // WHEN it is read with a limit one byte below its size
    const direct = readClusterFile(file, { maxBytes: size - 1 });
    const loaded = loadClusterFile(file, { templates: TEMPLATES, relativeTo: root, maxBytes: size - 1 });

    // THEN both refuse it with the limit
    expect(direct.problem?.message).toBe(
      `is ${size} bytes, more than the limit of ${size - 1}; a cluster object is a few KiB`,
    );
    expect(loaded).toEqual({
      problems: [{ file: 'clusters/staging-us1.yaml', path: '', message: direct.problem!.message }],
    });
  });

  test('a symlink to a regular cluster file is read like the file itself', () => {
    // GIVEN clusters/staging-us1.yaml -> a file elsewhere
    const target = path.join(root, 'elsewhere.yaml');
    fs.copyFileSync(path.join(EXAMPLES_DIR, 'staging-us1.yaml'), target);
    fs.symlinkSync(target, path.join(dir, 'staging-us1.yaml'));

    // WHEN the directory is loaded
    const r = loadClusters(dir, { templates: TEMPLATES, relativeTo: root });

    // THEN the cluster is there
    expect(r.problems).toEqual([]);
    expect(r.clusters.map((c) => c.cluster.metadata.name)).toEqual(['staging-us1']);
  });
});

describe('rules across the fleet (loadClusters)', () => {
  test('a subnet named under two VPCs: each object that names it is refused, naming the other; a subnet one VPC holds is fine', () => {
    // GIVEN staging-us1 and a copy of it under another name and another VPC, with the same subnets
    const dir = tempDir('fleet-subnets');
    const text = exampleText('staging-us1');
    const vpc = /vpcId: (vpc-[0-9a-f]+)/.exec(text)![1];
    fs.writeFileSync(path.join(dir, 'staging-us1.yaml'), text);
    fs.writeFileSync(
      path.join(dir, 'staging-us2.yaml'),
      text.replaceAll('staging-us1', 'staging-us2').replace(`vpcId: ${vpc}`, 'vpcId: vpc-0bad0bad0bad0bad0'),
    );

    // WHEN the fleet is loaded
    const { clusters, problems } = loadClusters(dir, { templates: TEMPLATES, relativeTo: dir });

    // THEN both objects are refused at their first subnet, each naming the other VPC and file
    expect(clusters).toEqual([]);
    expect(problems.filter((p) => p.path === 'spec.network.subnetIds[0]').map((p) => [p.file, p.message])).toEqual([
      [
        'staging-us1.yaml',
        expect.stringContaining('under vpc-0bad0bad0bad0bad0 in staging-us2.yaml: a subnet is in one VPC'),
      ],
      ['staging-us2.yaml', expect.stringContaining(`under ${vpc} in staging-us1.yaml: a subnet is in one VPC`)],
    ]);

    // AND with the same VPC (two clusters in one VPC), nothing is refused
    fs.writeFileSync(path.join(dir, 'staging-us2.yaml'), text.replaceAll('staging-us1', 'staging-us2'));
    expect(loadClusters(dir, { templates: TEMPLATES, relativeTo: dir }).problems).toEqual([]);
  });
});

describe('a control character in a file name never reaches the reader (issue 32 item 11)', () => {
  test.each([
    ['a newline that forges a line of its own', 'x\nprod-eu1.yaml: valid.yaml', 'x\\nprod-eu1.yaml: valid.yaml'],
    ['an OSC sequence that retitles the terminal', 'x\x1b]0;pwn\x07.yaml', 'x\\x1b]0;pwn\\x07.yaml'],
    ['a carriage return that overwrites the line', 'ok\rprod-eu1.yaml', 'ok\\rprod-eu1.yaml'],
  ])('%s: validate as a process shows it escaped, refused unread', (_what, name, escaped) => {
    // GIVEN a directory with a valid object under that file name
    const dir = tempDir('control-name');
    fs.writeFileSync(path.join(dir, name), exampleText('staging-us1'));
    // WHEN the CLI validates it, as a process
    const r = spawnSync(process.execPath, [path.resolve('bin/worker-stacks.js'), 'validate', '--clusters', dir], {
      cwd: dir,
      encoding: 'utf8',
    });
    // THEN it exits 1 with one line for the file: the name escaped, the rule, what to do
    expect(r.status).toBe(1);
    expect(r.stderr).toBe(
      `${escaped}: the file name has a control character (shown escaped); a cluster file is named <metadata.name>.yaml: rename it\n`,
    );
    expect(r.stdout).toBe('0 cluster objects valid, 1 invalid\n');
    const out = `${r.stdout}${r.stderr}`;
    // (no control character but the newlines that end lines)
    // eslint-disable-next-line no-control-regex -- the point: no control character is printed
    expect(out).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f-\x9f]/);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
