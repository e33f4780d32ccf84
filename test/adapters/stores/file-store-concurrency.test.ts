import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ClusterStatus } from '../../../lib/model/cluster/schema/status';
import { ConflictError } from '../../../lib/model/ports/cluster-store';
import { FileStore } from '../../../lib/adapters/stores/file-store';
import { EXAMPLES_DIR, tempDir } from '../../helpers/clusters';
import { childEnv, compiledWriter } from '../../fixtures/stores/compile';

/**
 * Optimistic concurrency on resourceVersion: in one process, between store instances, and between processes.
 * The version is opaque: tests only compare versions the store gave out with each other.
 */

const NAME = 'prod-eu1';
let dir: string;
beforeEach(() => {
  dir = tempDir('file-store-cc');
  fs.copyFileSync(path.join(EXAMPLES_DIR, `${NAME}.yaml`), path.join(dir, `${NAME}.yaml`));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const tagged = (writer: string, n: number): ClusterStatus => ({
  conditions: [],
  lastConfigChange: `${writer}#${n}`,
  observedGeneration: n,
});
const stateFile = () => path.join(dir, '.status', `${NAME}.json`);

describe('one process', () => {
  test('a write at the current version succeeds and returns a new version', async () => {
    // GIVEN a record just read
    const store = new FileStore({ clustersDir: dir });
    const v0 = (await store.get(NAME))!.resourceVersion;

    // WHEN its status is written with that version, then with the version returned
    const v1 = await store.writeStatus(NAME, tagged('a', 1), v0);
    const v2 = await store.writeStatus(NAME, tagged('a', 2), v1);

    // THEN each write gave a new version, which is what get() now reports, with the last status
    expect(new Set([v0, v1, v2]).size).toBe(3);
    expect((await store.get(NAME))!).toMatchObject({ resourceVersion: v2, status: tagged('a', 2) });
  });

  test('a write with a stale version throws ConflictError and leaves the file unchanged', async () => {
    // GIVEN a record written once after it was read
    const store = new FileStore({ clustersDir: dir });
    const stale = (await store.get(NAME))!.resourceVersion;
    const current = await store.writeStatus(NAME, tagged('a', 1), stale);
    const before = fs.readFileSync(stateFile());

    // WHEN a writer still holding the old version writes, and one names a version the store never gave out
    const late = store.writeStatus(NAME, tagged('b', 1), stale);
    const forged = store.writeStatus(NAME, tagged('c', 1), 'not-a-version');

    // THEN both are conflicts, with the message saying what to do, and not one byte of the status file changed
    await expect(late).rejects.toBeInstanceOf(ConflictError);
    await expect(store.writeStatus(NAME, tagged('b', 1), stale)).rejects.toThrow(
      /status of prod-eu1 changed underneath \(expected version .+, found .+\)/,
    );
    await expect(forged).rejects.toBeInstanceOf(ConflictError);
    expect(fs.readFileSync(stateFile()).equals(before)).toBe(true);
    expect((await store.get(NAME))!).toMatchObject({ resourceVersion: current, status: tagged('a', 1) });
  });

  test('a spec change moves the version; a status computed from the old spec is recorded for the old spec only', async () => {
    // GIVEN a record with a recorded status, read by the reconciler, then a user edit of the spec
    const store = new FileStore({ clustersDir: dir });
    await store.writeStatus(NAME, tagged('first', 0), (await store.get(NAME))!.resourceVersion);
    const read = (await store.get(NAME))!;
    expect(read.generation).toBe(1);
    const file = path.join(dir, `${NAME}.yaml`);
    fs.writeFileSync(
      file,
      fs.readFileSync(file, 'utf8').replace(/maxSize: (\d+)/, (_m, n) => `maxSize: ${Number(n) + 1}`),
    );
    const edited = (await store.get(NAME))!;

    // THEN the edit gave the record a new version and the next generation
    expect(edited.generation).toBe(2);
    expect(edited.resourceVersion).not.toBe(read.resourceVersion);

    // WHEN the reconciler records the result for the spec it read (nothing else wrote in between)
    await store.writeStatus(NAME, tagged('old-spec', 1), read.resourceVersion);

    // THEN the status is kept, but it is the old spec's: the edited spec is still a new generation, for this store and a new one
    expect((await store.get(NAME))!).toMatchObject({ generation: 2, status: tagged('old-spec', 1) });
    expect((await new FileStore({ clustersDir: dir }).get(NAME))!.generation).toBe(2);

    // AND WHEN a status is written for the edited spec, THEN generation 2 is the recorded one and stays
    const current = (await store.get(NAME))!;
    await store.writeStatus(NAME, tagged('new-spec', 2), current.resourceVersion);
    expect((await new FileStore({ clustersDir: dir }).get(NAME))!).toMatchObject({
      generation: 2,
      status: tagged('new-spec', 2),
    });
  });

  test('two store instances racing: exactly one write wins per version, none is lost', async () => {
    // GIVEN two stores on the same directory
    const a = new FileStore({ clustersDir: dir });
    const b = new FileStore({ clustersDir: dir });
    const versions = [(await a.get(NAME))!.resourceVersion];
    const wins: string[] = [];
    let conflicts = 0;

    // WHEN, for 20 rounds, each reads the version and fires 5 writes at it, all at once
    for (let round = 0; round < 20; round++) {
      const [va, vb] = [(await a.get(NAME))!.resourceVersion, (await b.get(NAME))!.resourceVersion];
      const attempts = [
        ...[0, 1, 2, 3, 4].map((i) => ({ s: a, v: va, tag: `a${round}.${i}` })),
        ...[0, 1, 2, 3, 4].map((i) => ({ s: b, v: vb, tag: `b${round}.${i}` })),
      ];
      const results = await Promise.allSettled(attempts.map((x) => x.s.writeStatus(NAME, tagged(x.tag, round), x.v)));
      expect(va).toBe(vb); // (both stores see the same record)
      results.forEach((r, i) => {
        if (r.status === 'fulfilled') {
          wins.push(attempts[i].tag);
          versions.push(r.value);
        } else if (r.reason instanceof ConflictError) conflicts++;
        else throw r.reason;
      });
      // THEN exactly one write per round won (both read the same version)
      expect(wins.length).toBe(round + 1);
    }

    // THEN every win gave a new version, the last one is what both stores read, and the final status is the last winner's
    const end = (await b.get(NAME))!;
    expect(new Set(versions).size).toBe(wins.length + 1);
    expect(end.resourceVersion).toBe(versions[versions.length - 1]);
    expect((await a.get(NAME))!.resourceVersion).toBe(end.resourceVersion);
    expect(conflicts).toBe(20 * 10 - wins.length);
    expect(end.status?.lastConfigChange).toBe(`${wins[wins.length - 1]}#19`);
  });
});

describe('across processes', () => {
  let fixture: ReturnType<typeof compiledWriter>;
  let compiled: string;
  const children: ChildProcess[] = [];
  beforeAll(() => {
    fixture = compiledWriter();
    compiled = fixture.file;
  });
  afterAll(() => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    fixture.cleanup();
  });

  /** Starts a writer; resolves `ready` on its first line and `done` with its output when it exits. */
  function writer(args: string[]) {
    const child = spawn(process.execPath, [compiled, ...args], { env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let out = '';
    let err = '';
    const ready = new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (d) => {
        out += String(d);
        if (out.includes('ready\n')) resolve();
      });
      child.on('exit', () => reject(new Error(`writer exited before it was ready: ${err}`)));
    });
    child.stderr.on('data', (d) => (err += String(d)));
    const done = new Promise<{ code: number | null; out: string; err: string }>((resolve) =>
      child.on('exit', (code) => resolve({ code, out, err })),
    );
    return { ready, done };
  }

  test('N processes doing read-modify-write increments with conflict retry lose no update', async () => {
    // GIVEN a status with a counter at 0 and 4 writer processes, each to add 40, started together
    const store = new FileStore({ clustersDir: dir });
    const start = await store.writeStatus(
      NAME,
      { conditions: [], observedGeneration: 0 },
      (await store.get(NAME))!.resourceVersion,
    );
    const go = path.join(dir, 'go');
    const N = 4;
    const K = 40;
    const ws = Array.from({ length: N }, () => writer(['increment', dir, NAME, String(K), go]));
    await Promise.all(ws.map((w) => w.ready));

    // WHEN they all start at once
    fs.writeFileSync(go, '');
    const results = await Promise.all(ws.map((w) => w.done));

    // THEN every process succeeded K times, the counter is exactly N*K, the version moved N*K times, and the file parses
    for (const r of results) expect({ code: r.code, err: r.err }).toEqual({ code: 0, err: '' });
    const reports = results.map(
      (r) => JSON.parse(r.out.split('\n').filter(Boolean).pop()!) as { ok: number; conflicts: number },
    );
    expect(reports.map((r) => r.ok)).toEqual(Array(N).fill(K));
    const end = (await new FileStore({ clustersDir: dir }).get(NAME))!;
    expect(end.status?.observedGeneration).toBe(N * K);
    expect(end.resourceVersion).not.toBe(start);
    expect(end.generation).toBe(1);
    expect(() => JSON.parse(fs.readFileSync(stateFile(), 'utf8'))).not.toThrow();
    expect(fs.readdirSync(path.join(dir, '.status'))).toEqual([`${NAME}.json`]);
    // (the race was real: some attempts did conflict)
    expect(reports.reduce((n, r) => n + r.conflicts, 0)).toBeGreaterThan(0);
  });

  test('processes seeing a new object at once record generation 1 exactly once', async () => {
    // GIVEN 4 processes waiting to read a cluster nobody has read yet
    const go = path.join(dir, 'go');
    const ws = Array.from({ length: 4 }, () => writer(['increment', dir, NAME, '1', go]));
    await Promise.all(ws.map((w) => w.ready));

    // WHEN they read and write it at once
    fs.writeFileSync(go, '');
    const results = await Promise.all(ws.map((w) => w.done));

    // THEN the generation is 1 (the first reads did not bump it twice) and all 4 increments are there
    for (const r of results) expect({ code: r.code, err: r.err }).toEqual({ code: 0, err: '' });
    const end = (await new FileStore({ clustersDir: dir }).get(NAME))!;
    expect(end).toMatchObject({ generation: 1, status: { observedGeneration: 4 } });
  });
});
