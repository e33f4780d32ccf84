import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runCli } from '../../../lib/adapters/cli/program';
import { parseStatus } from '../../../lib/model/cluster/schema/status';
import { setCondition } from '../../../lib/model/cluster/schema/conditions';
import { REPO, tempDir } from '../../helpers/clusters';
import { cleanEnv } from '../../engines/review/cli-run';
import { caseTree, commitAll, createFixtureRepo, edit } from '../../engines/review/fixture';

/**
 * Every command writes all its output before the process exits, whatever stdout is connected to. Here stdout is a
 * real pipe whose reader takes 8 KiB at a time, a little later each time: the pipe's 64 KiB buffer is full when the
 * command finishes, so what is still in the process must be written out before it exits (docs/kubernetes.md's
 * `worker-stacks crd | kubectl apply -f -` got the first 65,536 bytes of the CRDs).
 */

const BIN = path.join(REPO, 'bin', 'worker-stacks.js');

interface Piped {
  readonly code: number | null;
  readonly stdout: Buffer;
  readonly stderr: string;
}

/** Runs the installed command with stdout a pipe to a slow reader; resolves with all it wrote and its exit code. */
function throughSlowPipe(args: readonly string[], cwd = REPO): Promise<Piped> {
  return new Promise((resolve, reject) => {
    // NODE_ENV=test (jest's) changes how aws-cdk-lib reports; the command runs as a user runs it.
    const env = cleanEnv();
    delete env.NODE_ENV;
    const child = spawn(process.execPath, [BIN, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    // The slow reader: takes a chunk, then reads nothing for 10 ms (Node stops reading the pipe while paused, so the
    // pipe stays full). A 'data' listener, not read(): Node resumes a child's stdout when the child exits.
    child.stdout.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      child.stdout.pause();
      setTimeout(() => child.stdout.resume(), 10);
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout: Buffer.concat(chunks), stderr }));
  });
}

/** What the command writes when stdout is a function call, not a pipe (in-process): the reference. */
async function inProcess(args: readonly string[]): Promise<{ code: number; out: string }> {
  let out = '';
  const code = await runCli(args, { out: (t) => (out += t), err: () => undefined });
  return { code, out };
}

/** `n` status files of clusters whose objects are gone, each with a long condition message: `status -o json` > 1 MiB. */
function statusOfManyClusters(n: number, messageBytes: number): string {
  const dir = tempDir('pipe-status');
  const clusters = path.join(dir, 'clusters');
  fs.mkdirSync(path.join(clusters, '.status'), { recursive: true });
  for (let i = 0; i < n; i++) {
    const conditions = setCondition(
      [],
      {
        type: 'Ready',
        status: 'False',
        reason: 'UpdateFailed',
        message: `cluster ${i}: ${'the stack rolled back; '.repeat(messageBytes / 23)}`,
      },
      1,
      new Date('2026-01-01T00:00:00Z'),
    );
    const status = { conditions, observedGeneration: 1, stackStatus: 'UPDATE_ROLLBACK_COMPLETE' };
    expect(parseStatus(status)).toHaveProperty('status');
    fs.writeFileSync(
      path.join(clusters, '.status', `gone-${String(i).padStart(4, '0')}.json`),
      JSON.stringify({ resourceVersion: 1, generation: 1, status }),
    );
  }
  return clusters;
}

describe.each([
  { command: 'crd', args: ['crd'] },
  { command: 'manifests', args: ['manifests', '--replicas', '3'] },
  { command: 'schema', args: ['schema'] },
])('$command through a slow pipe', ({ args }) => {
  test('writes every byte it writes in-process, and exits 0', async () => {
    // GIVEN what the command writes, in-process
    const expected = await inProcess(args);
    expect(expected.code).toBe(0);

    // WHEN the installed command writes into a pipe with a slow reader
    const piped = await throughSlowPipe(args);

    // THEN all of it arrives, byte for byte, and the process ends with the command's exit code
    expect({ code: piped.code, stderr: piped.stderr }).toEqual({ code: 0, stderr: '' });
    expect(piped.stdout.length).toBe(Buffer.byteLength(expected.out));
    expect(piped.stdout.toString('utf8')).toBe(expected.out);
  }, 120_000);
});

test('status -o json over many clusters (more than 1 MiB) arrives whole through a slow pipe, and is valid JSON', async () => {
  // GIVEN 150 clusters with a recorded status each, about 1.5 MiB of JSON
  const clusters = statusOfManyClusters(150, 10_000);

  // WHEN `status -o json` writes it into a slow pipe
  const piped = await throughSlowPipe(['status', '-o', 'json', '--clusters', clusters]);

  // THEN it is all there: more than 1 MiB, parseable, one row per cluster, exit 0
  expect({ code: piped.code, stderr: piped.stderr }).toEqual({ code: 0, stderr: '' });
  expect(piped.stdout.length).toBeGreaterThan(1024 * 1024);
  const doc = JSON.parse(piped.stdout.toString('utf8')) as { clusters: { cluster: string }[] };
  expect(doc.clusters).toHaveLength(150);
  expect(doc.clusters.at(-1)?.cluster).toBe('gone-0149');
}, 120_000);

test('an exit code other than 0 is kept, with all the output: status of a cluster whose status file is unreadable', async () => {
  // GIVEN many clusters, one of them with a status file that is not JSON (status exits 1 for it)
  const clusters = statusOfManyClusters(120, 10_000);
  fs.writeFileSync(path.join(clusters, '.status', 'gone-0000.json'), '{ not json');

  // WHEN
  const piped = await throughSlowPipe(['status', '-o', 'json', '--clusters', clusters]);

  // THEN exit 1, and the whole document
  expect(piped.code).toBe(1);
  const doc = JSON.parse(piped.stdout.toString('utf8')) as { clusters: { cluster: string; ready: string }[] };
  expect(doc.clusters).toHaveLength(120);
  expect(doc.clusters.find((c) => c.cluster === 'gone-0000')?.ready).toBe('Unreadable');
}, 120_000);

const ADDED = 6;

test('review --format json arrives whole through a slow pipe', async () => {
  // GIVEN a repository where a kubelet change rolls every cluster
  const repo = createFixtureRepo();
  try {
    const head = caseTree(repo, 'pipe');
    edit(head, 'cloudconfig/_shared/kubelet-config.yaml.hbs', (t) =>
      t.replace('readOnlyPort: 0', 'readOnlyPort: 0\nserializeImagePulls: false'),
    );
    // and new clusters, each shown whole: the review is larger than the pipe holds
    const staging = fs.readFileSync(path.join(head, 'clusters', 'staging-us1.yaml'), 'utf8');
    for (let i = 0; i < ADDED; i++)
      fs.writeFileSync(path.join(head, 'clusters', `added-${i}.yaml`), staging.replace(/staging-us1/g, `added-${i}`));
    commitAll(head, 'head: kubelet, new clusters');

    // WHEN review writes its JSON into a slow pipe
    const piped = await throughSlowPipe(['review', '--base', 'base', '--format', 'json'], head);

    // THEN the document is whole (it parses, and names every cluster), more than the pipe holds, exit 0
    expect(piped.code).toBe(0);
    expect(piped.stdout.length).toBeGreaterThan(64 * 1024);
    expect(JSON.parse(piped.stdout.toString('utf8')).summary).toMatchObject({ clusters: 3 + ADDED });
  } finally {
    fs.rmSync(path.dirname(repo), { recursive: true, force: true });
  }
}, 300_000);

test('a reader that stops reading early (`crd | head -c 100`) ends the command quietly, with its exit code', async () => {
  // GIVEN a reader that takes the first chunk and closes the pipe
  const env = cleanEnv();
  delete env.NODE_ENV;
  const child = spawn(process.execPath, [BIN, 'crd'], { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  child.stdout.once('data', () => child.stdout.destroy());

  // WHEN the command goes on writing into the closed pipe
  const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));

  // THEN it exits 0 without a stack trace
  expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
}, 120_000);
