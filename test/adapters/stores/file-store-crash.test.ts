import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { FileStore } from '../../../lib/adapters/stores/file-store';
import { EXAMPLES_DIR, tempDir } from '../../helpers/clusters';
import { childEnv, compiledWriter } from '../../fixtures/stores/compile';

/** Crashes: a writer killed mid-write, its temp files and its lock. */

// The writes under test are the real ones, fsync included (test/setup-env.ts turns it off for every other file): the
// kills aim at a write in progress, and the children inherit this environment.
delete process.env.WORKER_STACKS_UNSAFE_NO_FSYNC;

const NAME = 'prod-eu1';
const ENTRIES = 4000; // ~300 KB of status: the write takes long enough to be hit
let dir: string;
let stateDir: string;
let writer: ReturnType<typeof compiledWriter>;
let compiled: string;
const children: ChildProcess[] = [];

beforeAll(() => {
  writer = compiledWriter();
  compiled = writer.file;
});
afterAll(() => writer.cleanup());
beforeEach(() => {
  dir = tempDir('file-store-crash');
  stateDir = path.join(dir, '.status');
  fs.copyFileSync(path.join(EXAMPLES_DIR, `${NAME}.yaml`), path.join(dir, `${NAME}.yaml`));
});
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  fs.rmSync(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const statusFile = () => path.join(stateDir, `${NAME}.json`);

/** A complete write of the spam writer: every digest carries the write's sequence number. */
function expectComplete(text: string): number {
  const state = JSON.parse(text); // throws on a torn file
  const seq = state.status.observedGeneration as number;
  const digests = Object.values(state.status.controller.configDigests as Record<string, string>);
  expect(digests.length).toBe(ENTRIES);
  expect(digests.every((d) => d === `${seq}`.padStart(64, '0'))).toBe(true);
  expect(state.resourceVersion).toBeGreaterThanOrEqual(seq);
  return seq;
}

/** Starts the spam writer and resolves once it has written at least once. */
async function startSpammer(lockStaleMs: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, [compiled, 'spam', dir, NAME, String(ENTRIES), String(lockStaleMs)], {
    env: childEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let err = '';
  child.stderr.on('data', (d) => (err += String(d)));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d) => String(d).includes('ready') && resolve());
    child.on('exit', (code, signal) => reject(new Error(`writer exited (${code ?? signal}) before writing: ${err}`)));
  });
  return child;
}

async function kill(child: ChildProcess): Promise<void> {
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
}

test('a writer killed at random moments never leaves a torn status file', async () => {
  // GIVEN a status written once (so it exists), and a reader that checks the file while the writer runs
  const store = new FileStore({ clustersDir: dir, lockStaleMs: 1000 });
  await store.writeStatus(NAME, { conditions: [], observedGeneration: 0 }, (await store.get(NAME))!.resourceVersion);
  let lastSeq = 0;
  let reads = 0;

  for (let i = 0; i < 20; i++) {
    // WHEN a writer is killed with SIGKILL at a random moment while it writes large statuses in a loop
    const child = await startSpammer(200);
    const until = Date.now() + 20 + Math.random() * 120;
    while (Date.now() < until) {
      // (while it runs, every read sees a complete status, never half of one)
      const rec = (await store.get(NAME))!;
      if (rec.status?.controller?.configDigests) expectComplete(fs.readFileSync(statusFile(), 'utf8'));
      reads++;
      await sleep(Math.random() * 5);
    }
    await kill(child);

    // THEN the status file is the complete JSON of one whole write, never going backwards
    const seq = expectComplete(fs.readFileSync(statusFile(), 'utf8'));
    expect(seq).toBeGreaterThanOrEqual(lastSeq);
    lastSeq = seq;
    // (the writer really wrote: the sequence moved)
    expect(seq).toBeGreaterThan(0);
  }

  // THEN leftovers of the killed writers (temp files, a lock) do not break reads, names or the next write
  expect(reads).toBeGreaterThan(20);
  expect(store.statusNames()).toEqual([NAME]);
  const rec = (await store.get(NAME))!;
  expect(rec.status?.observedGeneration).toBe(lastSeq);
  const final = { conditions: [], observedGeneration: lastSeq, lastConfigChange: 'written after the crashes' };
  await store.writeStatus(NAME, final, rec.resourceVersion);
  expect((await new FileStore({ clustersDir: dir }).get(NAME))!.status).toEqual(final);
});

test('stale temp files beside the status do not break reads, names or writes', async () => {
  // GIVEN a status, and temp files a crashed writer left: one empty, one half-written, one of a name-like shape
  const store = new FileStore({ clustersDir: dir });
  const v = await store.writeStatus(
    NAME,
    { conditions: [], observedGeneration: 1 },
    (await store.get(NAME))!.resourceVersion,
  );
  fs.writeFileSync(path.join(stateDir, `${NAME}.json.4242.1700000000000.tmp`), '');
  fs.writeFileSync(
    path.join(stateDir, `${NAME}.json.4243.1700000000001.tmp`),
    '{"resourceVersion": 9, "status": {"condi',
  );
  fs.writeFileSync(path.join(stateDir, `other.json.4244.1700000000002.tmp`), '{');

  // WHEN the store is read and written
  const records = await store.list();
  const names = store.statusNames();
  const v2 = await store.writeStatus(NAME, { conditions: [], observedGeneration: 2 }, v);

  // THEN the temp files are ignored: one record, one name, and the write went through
  expect(records.map((r) => [r.name, r.status])).toEqual([[NAME, { conditions: [], observedGeneration: 1 }]]);
  expect(names).toEqual([NAME]);
  expect((await store.get(NAME))!).toMatchObject({ resourceVersion: v2, status: { observedGeneration: 2 } });
});

describe('the lock of a killed writer', () => {
  const lockFile = () => path.join(stateDir, `${NAME}.json.lock`);
  const plantLock = (ageMs: number) => {
    fs.mkdirSync(stateDir, { recursive: true });
    fs.writeFileSync(lockFile(), '');
    const t = new Date(Date.now() - ageMs);
    fs.utimesSync(lockFile(), t, t);
  };

  test('older than the default stale limit (30 s) is broken, and the write goes through', async () => {
    // GIVEN a record, and a lock a killed writer left 31 s ago
    const store = new FileStore({ clustersDir: dir });
    const v = (await store.get(NAME))!.resourceVersion;
    plantLock(31_000);

    // WHEN a status is written
    const v2 = await store.writeStatus(NAME, { conditions: [], observedGeneration: 7 }, v);

    // THEN it was written, and no lock is left behind
    expect((await store.get(NAME))!).toMatchObject({ resourceVersion: v2, status: { observedGeneration: 7 } });
    expect(fs.existsSync(lockFile())).toBe(false);
  });

  test('younger than the stale limit is respected: the write fails with a clear message, the status is unchanged', async () => {
    // GIVEN a status, and a lock taken 1 s ago (a live writer, as far as anyone can tell)
    const store = new FileStore({ clustersDir: dir });
    const v = await store.writeStatus(
      NAME,
      { conditions: [], observedGeneration: 1 },
      (await store.get(NAME))!.resourceVersion,
    );
    plantLock(1000);

    // WHEN another status is written
    const write = store.writeStatus(NAME, { conditions: [], observedGeneration: 2 }, v);

    // THEN it gives up, naming the lock; nothing was written and the lock is still there
    await expect(write).rejects.toThrow(/locked by another writer .*\.lock/);
    expect((await store.get(NAME))!).toMatchObject({ resourceVersion: v, status: { observedGeneration: 1 } });
    expect(fs.existsSync(lockFile())).toBe(true);
  });

  test("lockStaleMs sets the limit: a real killed writer's lock is broken once it is that old", async () => {
    // GIVEN a lock left by a writer killed while it held it (planted fresh, as the kill leaves it)
    const store = new FileStore({ clustersDir: dir, lockStaleMs: 300 });
    const v = (await store.get(NAME))!.resourceVersion;
    plantLock(0);
    const started = Date.now();

    // WHEN a status is written by a store whose limit is 300 ms
    const v2 = await store.writeStatus(NAME, { conditions: [], observedGeneration: 3 }, v);

    // THEN it waited for the lock to turn stale, broke it, and wrote
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect((await store.get(NAME))!).toMatchObject({ resourceVersion: v2, status: { observedGeneration: 3 } });
    expect(fs.existsSync(lockFile())).toBe(false);
  });
});
