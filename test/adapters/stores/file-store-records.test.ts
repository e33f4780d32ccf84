import * as fs from 'node:fs';
import * as path from 'node:path';
import { ClusterStatus } from '../../../lib/model/cluster/schema/status';
import { FileStore } from '../../../lib/adapters/stores/file-store';
import { EXAMPLE_NAMES, EXAMPLES_DIR, tempDir } from '../../helpers/clusters';

/**
 * list(), get(), generation, removed objects, clearStatus, retry requests, pause, watch and the status file's shape.
 * A read never writes; resourceVersion is opaque (only compared with other versions the store gave out).
 */

let dir: string;
beforeEach(() => {
  dir = tempDir('file-store');
  for (const n of EXAMPLE_NAMES) fs.copyFileSync(path.join(EXAMPLES_DIR, `${n}.yaml`), path.join(dir, `${n}.yaml`));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const NAME = 'prod-eu1';
const yamlOf = (name = NAME) => path.join(dir, `${name}.yaml`);
const edit = (change: (text: string) => string, name = NAME) => {
  const before = fs.readFileSync(yamlOf(name), 'utf8');
  const after = change(before);
  expect(after).not.toBe(before); // the edit really happened
  fs.writeFileSync(yamlOf(name), after);
};
const stateDirOf = () => path.join(dir, '.status');
const stateFileOf = (name = NAME) => path.join(stateDirOf(), `${name}.json`);
/** Records the given record's status, which persists the generation the record was read at. */
const record = async (store: FileStore, name = NAME) =>
  store.writeStatus(name, status('Recorded'), (await store.get(name))!.resourceVersion);
/** Every file under `root`, with its bytes and mtime: two snapshots are equal when nothing was written. */
const snapshot = (root: string): Record<string, { mtimeMs: number; bytes: string }> => {
  if (!fs.existsSync(root)) return {};
  return Object.fromEntries(
    (fs.readdirSync(root, { recursive: true }) as string[]).sort().map((f) => {
      const full = path.join(root, f);
      const st = fs.statSync(full);
      return [f, { mtimeMs: st.mtimeMs, bytes: st.isFile() ? fs.readFileSync(full, 'base64') : '<dir>' }];
    }),
  );
};
const generationOf = async (store: FileStore, name = NAME) => (await store.get(name))!.generation;
const status = (reason: string, extra: Partial<ClusterStatus> = {}): ClusterStatus => ({
  conditions: [
    {
      type: 'Ready',
      status: 'True',
      reason,
      message: `m ${reason}`,
      lastTransitionTime: '2024-01-02T03:04:05.000Z',
      observedGeneration: 1,
    },
  ],
  ...extra,
});

describe('list', () => {
  test('one record per clusters/*.yaml, at generation 1, with an opaque resourceVersion', async () => {
    // GIVEN a directory holding the example cluster objects and a non-YAML file
    fs.writeFileSync(path.join(dir, 'README.md'), '# not a cluster\n');
    const store = new FileStore({ clustersDir: dir, relativeTo: dir });

    // WHEN listing
    const records = await store.list();

    // THEN every YAML file is one parsed record, new at generation 1, whose version is stable while nothing changes
    expect(EXAMPLE_NAMES.length).toBeGreaterThanOrEqual(3);
    const again = await store.list();
    expect(records.map((r) => r.name)).toEqual(EXAMPLE_NAMES);
    for (const r of records) {
      expect(r.source).toBe(`${r.name}.yaml`);
      expect(r.parseProblems).toEqual([]);
      expect((r.raw as { metadata: { name: string } }).metadata.name).toBe(r.name);
      expect(r.generation).toBe(1);
      expect(typeof r.resourceVersion).toBe('string');
      expect(r.resourceVersion).not.toBe('');
      expect(again.find((x) => x.name === r.name)!.resourceVersion).toBe(r.resourceVersion);
      expect(r.status).toBeUndefined();
      expect(r.retryRequest).toBeUndefined();
    }
  });

  test('a broken YAML file is reported as a parse problem without failing the others', async () => {
    // GIVEN one file with a YAML syntax error beside the good ones
    fs.writeFileSync(path.join(dir, 'broken.yaml'), 'apiVersion: v1\nspec: [unclosed\n');
    const store = new FileStore({ clustersDir: dir, relativeTo: dir });

    // WHEN listing
    const records = await store.list();

    // THEN the broken one carries its problem and no object; the others are intact
    const broken = records.find((r) => r.name === 'broken')!;
    expect(broken.raw).toBeUndefined();
    expect(broken.parseProblems).toHaveLength(1);
    expect(broken.parseProblems[0]).toMatchObject({
      file: 'broken.yaml',
      message: expect.stringMatching(/YAML syntax error at line \d+/),
    });
    const good = records.filter((r) => r.name !== 'broken');
    expect(good.map((r) => r.name)).toEqual(EXAMPLE_NAMES);
    expect(good.every((r) => r.parseProblems.length === 0 && r.raw !== undefined)).toBe(true);
  });

  test('a missing clusters directory is a clear error', async () => {
    // GIVEN a store on a directory that does not exist
    const store = new FileStore({ clustersDir: path.join(dir, 'nope') });

    // WHEN listing / THEN it names the directory
    await expect(store.list()).rejects.toThrow(/cluster directory .*nope does not exist/);
  });
});

describe('generation', () => {
  test('is derived on read when a spec value changes, persisted by the next status write, and survives a new store instance', async () => {
    // GIVEN a cluster seen once, its status recorded at generation 1
    const store = new FileStore({ clustersDir: dir });
    expect(await generationOf(store)).toBe(1);
    await record(store);

    // WHEN a spec value is edited
    edit((t) => t.replace(/maxSize: (\d+)/, (_m, n) => `maxSize: ${Number(n) + 1}`));

    // THEN every read derives generation 2, also a fresh store's on the same directory, and stays there
    expect(await generationOf(store)).toBe(2);
    expect(await generationOf(new FileStore({ clustersDir: dir }))).toBe(2);
    expect(await generationOf(store)).toBe(2);

    // AND WHEN a status is written for that record, THEN 2 is the recorded generation: reads keep it, without bumping again
    await record(store);
    expect(await generationOf(store)).toBe(2);
    expect(await generationOf(new FileStore({ clustersDir: dir }))).toBe(2);
    expect(JSON.parse(fs.readFileSync(stateFileOf(), 'utf8')).generation).toBe(2);
  });

  test('an edit before any status write leaves the object at generation 1: nothing was recorded to move from', async () => {
    // GIVEN a cluster read once, never given a status
    const store = new FileStore({ clustersDir: dir });
    expect(await generationOf(store)).toBe(1);

    // WHEN a spec value is edited
    edit((t) => t.replace(/maxSize: (\d+)/, (_m, n) => `maxSize: ${Number(n) + 1}`));

    // THEN it is still the first generation anyone records
    expect(await generationOf(store)).toBe(1);
    expect(await generationOf(new FileStore({ clustersDir: dir }))).toBe(1);
  });

  test('does not bump on metadata, comment, key-order or status changes, nor on a status write', async () => {
    // GIVEN a cluster at generation 1 with a status
    const store = new FileStore({ clustersDir: dir });
    const rec = (await store.get(NAME))!;
    expect(rec.generation).toBe(1);
    await store.writeStatus(NAME, status('Written'), rec.resourceVersion);

    // WHEN only metadata, comments, key order and a status block change
    edit(
      (t) =>
        `# a new comment\n${t.replace('metadata:\n', 'metadata:\n  labels: { team: platform }\n')}\n# trailing comment\n`,
    );
    edit((t) => t.replace(/^(spec:\n)( {2}account: .*\n)( {2}region: .*\n)/m, '$1$3$2'));
    edit((t) => `${t}status:\n  observedGeneration: 7\n`);

    // THEN the generation is still 1 (and the status write did not bump it either), also after another status write
    expect(await generationOf(store)).toBe(1);
    expect(await generationOf(new FileStore({ clustersDir: dir }))).toBe(1);
    await record(store);
    expect(await generationOf(new FileStore({ clustersDir: dir }))).toBe(1);
  });

  test('a reverted spec bumps again once the change was recorded: the generation never goes back', async () => {
    // GIVEN a cluster whose spec was changed once, and a status recorded at each generation
    const store = new FileStore({ clustersDir: dir });
    const original = fs.readFileSync(yamlOf(), 'utf8');
    expect(await generationOf(store)).toBe(1);
    await record(store);
    edit((t) => t.replace(/minSize: (\d+)/, (_m, n) => `minSize: ${Number(n) + 1}`));
    expect(await generationOf(store)).toBe(2);
    await record(store);

    // WHEN the change is reverted
    fs.writeFileSync(yamlOf(), original);

    // THEN it is generation 3, not 1
    expect(await generationOf(store)).toBe(3);
    expect(await generationOf(new FileStore({ clustersDir: dir }))).toBe(3);
  });

  test('a spec change on one cluster leaves the others alone; a broken file keeps its generation', async () => {
    // GIVEN all clusters recorded once, and one of them then broken
    const store = new FileStore({ clustersDir: dir });
    for (const n of EXAMPLE_NAMES) await record(store, n);
    const other = EXAMPLE_NAMES.find((n) => n !== NAME)!;
    const good = fs.readFileSync(yamlOf(other), 'utf8');
    fs.writeFileSync(yamlOf(other), `${good}\nspec: [\n`);

    // WHEN one spec changes and the broken file is listed, then restored
    edit((t) => t.replace(/maxSize: (\d+)/, (_m, n) => `maxSize: ${Number(n) + 1}`));
    const gens = Object.fromEntries((await store.list()).map((r) => [r.name, r.generation]));
    fs.writeFileSync(yamlOf(other), good);

    // THEN only the edited one moved
    expect(gens).toEqual(Object.fromEntries(EXAMPLE_NAMES.map((n) => [n, n === NAME ? 2 : 1])));
    expect(await generationOf(store, other)).toBe(1);
  });
});

describe('a read never writes', () => {
  test('list and get write nothing: the state dir stays absent', async () => {
    // GIVEN clusters nobody has read yet
    const store = new FileStore({ clustersDir: dir });
    const clustersBefore = snapshot(dir);

    // WHEN they are listed and got, by this store and a new one, and names with a status are asked for
    await store.list();
    for (const n of EXAMPLE_NAMES) await store.get(n);
    await store.get('never-existed');
    await new FileStore({ clustersDir: dir }).list();
    expect(store.statusNames()).toEqual([]);

    // THEN no state directory was created and no cluster file was touched
    expect(fs.existsSync(stateDirOf())).toBe(false);
    expect(snapshot(dir)).toEqual(clustersBefore);
  });

  test('list and get write nothing: an existing state dir stays unchanged (names, bytes, mtimes), even when a spec changed', async () => {
    // GIVEN every cluster with a recorded status, one then edited (a new generation to derive) and one removed (a status without object)
    const store = new FileStore({ clustersDir: dir });
    for (const n of EXAMPLE_NAMES) await record(store, n);
    edit((t) => t.replace(/maxSize: (\d+)/, (_m, n) => `maxSize: ${Number(n) + 1}`));
    const removed = EXAMPLE_NAMES.find((n) => n !== NAME)!;
    fs.rmSync(yamlOf(removed));
    const before = snapshot(dir);
    await new Promise((r) => setTimeout(r, 30)); // (a rewrite now would show in the mtimes)

    // WHEN a new store (nothing in memory) and the old one list and get everything
    for (const s of [new FileStore({ clustersDir: dir }), store]) {
      const records = await s.list();
      expect(records.find((r) => r.name === NAME)!.generation).toBe(2);
      for (const n of EXAMPLE_NAMES) await s.get(n);
      s.statusNames();
    }

    // THEN not one file under the clusters directory or the state directory was created, changed or touched
    expect(snapshot(dir)).toEqual(before);
  });

  test('the parsed object is stored in the state file at a status write, not on read', async () => {
    // GIVEN a cluster with a recorded status
    const store = new FileStore({ clustersDir: dir });
    await record(store);
    const stored = () =>
      JSON.parse(fs.readFileSync(stateFileOf(), 'utf8')) as { object?: unknown; contentHash?: string };
    const first = (await store.get(NAME))!;
    expect(stored()).toMatchObject({ object: first.raw, contentHash: first.contentHash });

    // WHEN the object is edited and read (by this store and a new one)
    edit((t) => t.replace(/maxSize: (\d+)/, (_m, n) => `maxSize: ${Number(n) + 1}`));
    const edited = (await store.get(NAME))!;
    await new FileStore({ clustersDir: dir }).list();

    // THEN the state file still holds the old object; only the next status write stores the new one
    expect(edited.contentHash).not.toBe(first.contentHash);
    expect(stored()).toMatchObject({ object: first.raw, contentHash: first.contentHash });
    await store.writeStatus(NAME, status('Again'), edited.resourceVersion);
    expect(stored()).toMatchObject({ object: edited.raw, contentHash: edited.contentHash });
    expect((await new FileStore({ clustersDir: dir }).get(NAME))!).toMatchObject({ raw: edited.raw, generation: 2 });
  });
});

describe('status of removed objects, clearStatus', () => {
  test('a removed object keeps its status through get() and statusNames()', async () => {
    // GIVEN a cluster with a status, written at the version its record was read at
    const store = new FileStore({ clustersDir: dir });
    await store.list();
    const rec = (await store.get(NAME))!;
    const v = await store.writeStatus(NAME, status('Live', { stackName: 'WorkerStack-prod-eu1' }), rec.resourceVersion);
    expect(v).not.toBe(rec.resourceVersion);

    // WHEN its object is removed
    fs.rmSync(yamlOf());

    // THEN its status is still there, without an object, and listed by name
    expect((await store.list()).map((r) => r.name)).not.toContain(NAME);
    const gone = (await store.get(NAME))!;
    expect(gone).toMatchObject({ name: NAME, parseProblems: [], generation: 1 });
    expect(gone.raw).toBeUndefined();
    expect(gone.status).toEqual(status('Live', { stackName: 'WorkerStack-prod-eu1' }));
    expect(store.statusNames()).toEqual([NAME]);
    expect(await store.get('never-existed')).toBeUndefined();
    // (its version is stable while nothing changes, and is the current one: a write with it goes through)
    expect((await store.get(NAME))!.resourceVersion).toBe(gone.resourceVersion);
    await store.writeStatus(NAME, status('StillLive'), gone.resourceVersion);
    expect((await store.get(NAME))!.status).toEqual(status('StillLive'));
  });

  test.each([
    // [case, files to add, the name asked for]
    ['a .yml object', ['extra.yml'], 'extra'],
    ['.yaml and .yml of one name: the .yaml, as listed first', ['twin.yaml', 'twin.yml'], 'twin'],
  ] as const)('get(name) is the record list() gives first for that name: %s', async (_case, files, name) => {
    // GIVEN
    const source = fs.readFileSync(yamlOf(), 'utf8').replace(`name: ${NAME}`, `name: ${name}`);
    for (const file of files) fs.writeFileSync(path.join(dir, file), source);
    const store = new FileStore({ clustersDir: dir });
    // WHEN
    const listed = (await store.list()).find((r) => r.name === name);
    const got = await store.get(name);
    // THEN
    expect(listed).toBeDefined();
    expect(got).toEqual(listed);
  });

  test('an object removed before it ever had a status leaves no ghost in statusNames()', async () => {
    // GIVEN every cluster listed once but none given a status
    const store = new FileStore({ clustersDir: dir });
    await store.list();
    expect(store.statusNames()).toEqual([]);

    // WHEN one object is removed (a rename, say) and another one gets a status
    fs.rmSync(yamlOf());
    const other = EXAMPLE_NAMES.find((n) => n !== NAME)!;
    await store.writeStatus(other, status('Live'), (await store.get(other))!.resourceVersion);

    // THEN only the one with a status is named: the removed one had no stack to report, and no record
    expect(store.statusNames()).toEqual([other]);
    expect(await store.get(NAME)).toBeUndefined();
  });

  test('clearStatus removes what was recorded, checks the version, and moves it; the cluster is no longer listed as removed', async () => {
    // GIVEN a removed cluster with a status
    const store = new FileStore({ clustersDir: dir });
    const v0 = (await store.get(NAME))!.resourceVersion;
    const v = await store.writeStatus(NAME, status('Live', { cloudConfigChecksum: 'a'.repeat(64) }), v0);
    fs.rmSync(yamlOf());

    // WHEN its status is cleared with a stale version, then with the current one
    await expect(store.clearStatus(NAME, v0)).rejects.toThrow(/changed underneath/);
    await store.clearStatus(NAME, v);

    // THEN nothing of the old status is left and the version moved: the one it was cleared with is now stale
    const after = (await store.get(NAME))!;
    expect(after.status).toBeUndefined();
    expect(after.resourceVersion).not.toBe(v);
    expect(store.statusNames()).toEqual([]);
    await expect(store.writeStatus(NAME, status('Late'), v)).rejects.toThrow(/changed underneath/);
  });
});

describe('an unreadable status file', () => {
  test('fails its own cluster (named, with the fix) and lists every other one', async () => {
    // GIVEN one status file damaged by hand
    fs.mkdirSync(stateDirOf(), { recursive: true });
    fs.writeFileSync(stateFileOf(), '{ not json');
    const store = new FileStore({ clustersDir: dir });

    // WHEN the store lists the clusters
    const records = await store.list();

    // THEN every cluster is there; the damaged one carries one problem naming its status file and what to do
    expect(records.map((r) => r.name).sort()).toEqual([...EXAMPLE_NAMES].sort());
    const bad = records.find((r) => r.name === NAME)!;
    expect(bad.parseProblems).toHaveLength(1);
    expect(bad.parseProblems[0].file).toMatch(new RegExp(`\\.status/${NAME}\\.json$`));
    expect(bad.parseProblems[0].message).toMatch(/not valid JSON[\s\S]*delete it/);
    expect(records.filter((r) => r.name !== NAME).every((r) => r.parseProblems.length === 0)).toBe(true);
    // (and get() of it says the same)
    await expect(store.get(NAME)).rejects.toThrow(/not valid JSON/);
  });

  test('a status with a field the schema does not know is refused, the field named, and the others are listed', async () => {
    // GIVEN a status file whose status carries an unknown field (a typo, or another version's)
    fs.mkdirSync(stateDirOf(), { recursive: true });
    fs.writeFileSync(
      stateFileOf(),
      JSON.stringify({
        resourceVersion: 3,
        generation: 1,
        status: { ...status('Live'), stackNmae: 'WorkerStack-prod-eu1' },
      }),
    );
    const store = new FileStore({ clustersDir: dir });

    // WHEN the store lists the clusters
    const records = await store.list();

    // THEN that cluster alone has one problem naming its status file, the field, and the fix; the file is left as it was
    const bad = records.find((r) => r.name === NAME)!;
    expect(bad.status).toBeUndefined();
    expect(bad.parseProblems).toHaveLength(1);
    expect(bad.parseProblems[0].file).toMatch(new RegExp(`\\.status/${NAME}\\.json$`));
    expect(bad.parseProblems[0].message).toMatch(/not a valid status[\s\S]*stackNmae[\s\S]*delete it/);
    expect(records.filter((r) => r.name !== NAME).every((r) => r.parseProblems.length === 0)).toBe(true);
    expect(JSON.parse(fs.readFileSync(stateFileOf(), 'utf8')).status.stackNmae).toBe('WorkerStack-prod-eu1');
    await expect(store.get(NAME)).rejects.toThrow(/stackNmae/);
  });

  test('a condition of a type that is not Ready/Progressing/Degraded/Stalled is refused, the field named', async () => {
    // GIVEN a status file (in the new shape) with a condition of an unknown type
    fs.mkdirSync(stateDirOf(), { recursive: true });
    const s = status('Live');
    fs.writeFileSync(
      stateFileOf(),
      JSON.stringify({
        resourceVersion: 1,
        generation: 1,
        status: { ...s, conditions: [{ ...s.conditions[0], type: 'Exploded' }] },
      }),
    );

    // WHEN it is read / THEN the problem names the condition's type
    const bad = (await new FileStore({ clustersDir: dir }).list()).find((r) => r.name === NAME)!;
    expect(bad.parseProblems.map((p) => p.message)).toEqual([
      expect.stringMatching(/not a valid status: status\.conditions\.0\.type/),
    ]);
  });
});

describe('a legacy status file', () => {
  test('top-level bookkeeping (failures, inputsFingerprint, ...) is read under controller, Failed conditions dropped; the file is rewritten only by a status write', async () => {
    // GIVEN a status file as the previous version wrote it: bookkeeping at the top level, and a Failed condition
    fs.mkdirSync(stateDirOf(), { recursive: true });
    const ready = status('Live').conditions[0];
    const failed = { ...ready, type: 'Failed', status: 'False', reason: 'NoFailure' };
    const legacy = {
      conditions: [ready, failed],
      stackName: 'WorkerStack-prod-eu1',
      failures: 2,
      inputsFingerprint: 'fp-1',
      failedFingerprint: 'fp-0',
      retryAfter: '2024-01-02T03:04:05.000Z',
      configDigests: { a: 'b' },
    };
    fs.writeFileSync(stateFileOf(), JSON.stringify({ resourceVersion: 4, generation: 1, status: legacy }));
    const bytes = fs.readFileSync(stateFileOf(), 'utf8');
    const store = new FileStore({ clustersDir: dir });

    // WHEN it is read
    const rec = (await store.get(NAME))!;

    // THEN the status is in the new shape, the bookkeeping under controller; the file itself is unchanged (a read never writes)
    expect(rec.parseProblems).toEqual([]);
    expect(rec.status).toEqual({
      conditions: [ready],
      stackName: 'WorkerStack-prod-eu1',
      controller: {
        failures: 2,
        inputsFingerprint: 'fp-1',
        failedFingerprint: 'fp-0',
        retryAfter: '2024-01-02T03:04:05.000Z',
        configDigests: { a: 'b' },
      },
    });
    expect((await store.list()).find((r) => r.name === NAME)!.status).toEqual(rec.status);
    expect(fs.readFileSync(stateFileOf(), 'utf8')).toBe(bytes);

    // AND WHEN the migrated status is written back, THEN the file holds the new shape
    await store.writeStatus(NAME, rec.status!, rec.resourceVersion);
    const written = JSON.parse(fs.readFileSync(stateFileOf(), 'utf8')).status;
    expect(written).toEqual(rec.status);
    expect(written.failures).toBeUndefined();
  });
});

describe('retry requests', () => {
  test('requestRetry writes <stateDir>/<name>.retry; records carry the latest token as retryRequest', async () => {
    // GIVEN a cluster with a status, read by the reconciler
    const store = new FileStore({ clustersDir: dir });
    await record(store);
    const read = (await store.get(NAME))!;
    expect(read.retryRequest).toBeUndefined();

    // WHEN an operator asks for a retry, then for another one
    await store.requestRetry(NAME, 'retry-1');
    const first = (await store.get(NAME))!;
    await store.requestRetry(NAME, 'retry-2');

    // THEN the request is its own file, the record carries the latest token (this store, a new one, list), the others none
    expect(fs.readFileSync(path.join(stateDirOf(), `${NAME}.retry`), 'utf8').trim()).toBe('retry-2');
    expect(first.retryRequest).toBe('retry-1');
    expect((await store.get(NAME))!.retryRequest).toBe('retry-2');
    const listed = await new FileStore({ clustersDir: dir }).list();
    expect(Object.fromEntries(listed.map((r) => [r.name, r.retryRequest]))).toEqual(
      Object.fromEntries(EXAMPLE_NAMES.map((n) => [n, n === NAME ? 'retry-2' : undefined])),
    );

    // AND a request does not conflict with a status write, nor count as a status
    await store.writeStatus(NAME, status('Retried'), read.resourceVersion);
    expect(store.statusNames()).toEqual([NAME]);
    expect(fs.readdirSync(stateDirOf()).sort()).toEqual([`${NAME}.json`, `${NAME}.retry`]);
  });

  test('a request for a cluster without a status creates the state dir, goes to stateDir when one is given, and is not a status', async () => {
    // GIVEN a store with a separate state directory that does not exist yet
    const stateDir = path.join(dir, 'elsewhere', 'state');
    const store = new FileStore({ clustersDir: dir, stateDir });

    // WHEN a retry is asked for
    await store.requestRetry(NAME, 'tok');

    // THEN it is there, not under clusters/.status, and the cluster has no status nor a name in statusNames()
    expect(fs.readdirSync(stateDir)).toEqual([`${NAME}.retry`]);
    expect(fs.existsSync(stateDirOf())).toBe(false);
    expect((await store.get(NAME))!).toMatchObject({ retryRequest: 'tok', status: undefined });
    expect(store.statusNames()).toEqual([]);
  });
});

describe('setPaused', () => {
  test('sets spec.paused in the YAML keeping its comments, and removes it again', async () => {
    // GIVEN a cluster file with comments everywhere
    const store = new FileStore({ clustersDir: dir });
    edit((t) => `# head comment\n${t.replace('spec:\n', 'spec: # the spec\n  # about the account\n')}# tail comment\n`);
    const original = fs.readFileSync(yamlOf(), 'utf8');
    const before = (await store.get(NAME))!.raw as { spec: Record<string, unknown> };
    expect(before.spec.paused).toBeUndefined();

    // WHEN it is paused
    await store.setPaused(NAME, true);

    // THEN spec.paused is true, every comment is still there, and nothing else in the object changed
    const paused = fs.readFileSync(yamlOf(), 'utf8');
    for (const c of ['# head comment', '# the spec', '# about the account', '# tail comment', original.split('\n')[1]])
      expect(paused).toContain(c);
    const raw = (await store.get(NAME))!.raw as { spec: Record<string, unknown> };
    expect(raw).toEqual({ ...before, spec: { ...before.spec, paused: true } });

    // AND WHEN it is resumed, THEN spec.paused is gone, the comments stay, and the object is as it was
    await store.setPaused(NAME, false);
    const resumed = fs.readFileSync(yamlOf(), 'utf8');
    expect(resumed).not.toMatch(/paused/);
    for (const c of ['# head comment', '# the spec', '# about the account', '# tail comment'])
      expect(resumed).toContain(c);
    expect((await new FileStore({ clustersDir: dir }).get(NAME))!.raw).toEqual(before);
    // (no temp file is left beside the cluster files)
    expect(fs.readdirSync(dir).filter((f) => !f.endsWith('.yaml') && f !== '.status')).toEqual([]);
  });

  test('pausing an unknown cluster is an error naming it; no file is created', async () => {
    // GIVEN a store / WHEN a cluster that does not exist is paused / THEN it says so and writes nothing
    const store = new FileStore({ clustersDir: dir, relativeTo: dir });
    const before = snapshot(dir);
    await expect(store.setPaused('nope', true)).rejects.toThrow(/no cluster object nope/);
    expect(snapshot(dir)).toEqual(before);
  });
});

describe('cluster files that are not small regular files', () => {
  test('a file over 1 MiB fails its own cluster with a message naming it; the others are listed', async () => {
    // GIVEN a huge "cluster" file beside the good ones
    fs.writeFileSync(path.join(dir, 'huge.yaml'), `# ${'x'.repeat(1024 * 1024)}\n`);
    const store = new FileStore({ clustersDir: dir, relativeTo: dir });

    // WHEN listing
    const records = await store.list();

    // THEN it is refused unread, named; the others are fine
    const huge = records.find((r) => r.name === 'huge')!;
    expect(huge.raw).toBeUndefined();
    expect(huge.parseProblems.map((p) => `${p.file}: ${p.message}`)).toEqual([
      expect.stringMatching(/huge\.yaml: is \d+ bytes, more than the limit of 1048576/),
    ]);
    expect(
      records.filter((r) => r.name !== 'huge').every((r) => r.parseProblems.length === 0 && r.raw !== undefined),
    ).toBe(true);
  });
});

describe('watch', () => {
  const waitFor = async (cond: () => boolean, ms: number) => {
    for (const end = Date.now() + ms; !cond() && Date.now() < end;) await new Promise((r) => setTimeout(r, 20));
    return cond();
  };

  test('an edited object calls onChange with its name; stop() stops it', async () => {
    // GIVEN a watch on the directory
    const store = new FileStore({ clustersDir: dir });
    const seen: string[] = [];
    const stop = store.watch((name) => seen.push(name));
    try {
      // WHEN a cluster file is edited
      edit((t) => `${t}# touched\n`);

      // THEN onChange gets its name within 5 s, and only cluster names
      expect(await waitFor(() => seen.includes(NAME), 5000)).toBe(true);
      fs.writeFileSync(path.join(dir, 'notes.txt'), 'x');
      await store.writeStatus(NAME, status('Any'), (await store.get(NAME))!.resourceVersion);
      await new Promise((r) => setTimeout(r, 300));
      expect(new Set(seen)).toEqual(new Set([NAME]));
    } finally {
      stop();
    }

    // AND WHEN it is stopped and another file is edited
    const count = seen.length;
    edit(
      (t) => `${t}# touched again\n`,
      EXAMPLE_NAMES.find((n) => n !== NAME),
    );

    // THEN nothing more arrives
    expect(await waitFor(() => seen.length > count, 500)).toBe(false);
  });
});

describe('what the store refuses to mix up', () => {
  test('a cluster file that cannot be read is reported against that file, not against its status file', async () => {
    // GIVEN a cluster file over the 1 MiB limit
    fs.writeFileSync(path.join(dir, 'huge.yaml'), `# ${'x'.repeat(1024 * 1024)}\n`);
    const store = new FileStore({ clustersDir: dir, relativeTo: dir });

    // WHEN listing
    const huge = (await store.list()).find((r) => r.name === 'huge')!;

    // THEN the problem names huge.yaml (today: file is `.status/huge.json`, a file that does not even exist)
    expect(huge.parseProblems.map((p) => p.file)).toEqual(['huge.yaml']);
  });

  test('writeStatus refuses a status its own read would refuse, instead of making the cluster unreadable', async () => {
    // GIVEN a record
    const store = new FileStore({ clustersDir: dir });
    const rec = (await store.get(NAME))!;

    // WHEN a status the schema refuses (observedGeneration < 0) is written
    const write = store.writeStatus(NAME, { conditions: [], observedGeneration: -1 }, rec.resourceVersion).then(
      () => 'written',
      (e: unknown) => (e as Error).message,
    );

    // THEN the write is refused, or at least the cluster stays readable (today: written, then every read fails with
    // "status file ... is not a valid status ... edited by hand or by another version")
    const outcome = await write;
    if (outcome === 'written') await expect(store.get(NAME)).resolves.toBeDefined();
    else expect(outcome).toMatch(/observedGeneration/);
  });
});

describe('watch, retry requests', () => {
  const waitFor = async (cond: () => boolean, ms: number) => {
    for (const end = Date.now() + ms; !cond() && Date.now() < end;) await new Promise((r) => setTimeout(r, 20));
    return cond();
  };

  test('a retry request calls onChange with its cluster name; status writes do not', async () => {
    // GIVEN a watch, and a cluster that is not edited
    const store = new FileStore({ clustersDir: dir });
    const other = EXAMPLE_NAMES.find((n) => n !== NAME)!;
    const seen: string[] = [];
    const stop = store.watch((name) => seen.push(name));
    try {
      // WHEN its status is written (the reconciler's own write)
      await record(store, other);
      await new Promise((r) => setTimeout(r, 300));

      // THEN nothing arrives
      expect(seen).toEqual([]);

      // AND WHEN an operator asks for a retry of it, THEN onChange gets its name, and only its name
      await store.requestRetry(other, 'tok-1');
      expect(await waitFor(() => seen.includes(other), 5000)).toBe(true);
      expect(new Set(seen)).toEqual(new Set([other]));
    } finally {
      stop();
    }
  });
});

describe('the status file', () => {
  test('is written atomically (no temp file left) and round-trips the status exactly', async () => {
    // GIVEN a status with every kind of field, including unicode and nested maps
    const store = new FileStore({ clustersDir: dir });
    const full = status('UpToDate', {
      cloudConfigChecksum: 'f'.repeat(64),
      observedGeneration: 1,
      stackName: 'WorkerStack-prod-eu1',
      stackId: 'arn:aws:cloudformation:eu-west-1:111111111111:stack/x/y',
      stackStatus: 'UPDATE_COMPLETE',
      lastConfigChange: 'line1\nline2 "quoted"',
      controller: {
        inputsFingerprint: 'fp',
        failures: 0,
        retryAfter: '2024-01-02T03:04:05.000Z',
        failedFingerprint: 'ff',
        configDigests: { 'files/etc/kubelet.conf': 'abc', 'units/kubelet.service': 'déjà vu ✓' },
        recoveryAttempts: 2,
      },
    });

    // WHEN it is written and read back, by this store and a new one
    await store.writeStatus(NAME, full, (await store.get(NAME))!.resourceVersion);

    // THEN it comes back equal, the state directory holds only the status file, and that file is complete JSON
    expect((await store.get(NAME))!.status).toEqual(full);
    expect((await new FileStore({ clustersDir: dir }).get(NAME))!.status).toEqual(full);
    const stateDir = path.join(dir, '.status');
    expect(fs.readdirSync(stateDir)).toEqual([`${NAME}.json`]);
    expect(JSON.parse(fs.readFileSync(path.join(stateDir, `${NAME}.json`), 'utf8')).status).toEqual(full);
  });

  test('goes to stateDir when one is given, not into the clusters directory', async () => {
    // GIVEN a store with a separate state directory
    const stateDir = path.join(dir, 'elsewhere', 'state');
    const store = new FileStore({ clustersDir: dir, stateDir });

    // WHEN a status is written
    await store.writeStatus(NAME, status('X'), (await store.get(NAME))!.resourceVersion);

    // THEN it is there, and nothing was written under clusters/.status
    expect(fs.readdirSync(stateDir)).toEqual([`${NAME}.json`]);
    expect(fs.existsSync(path.join(dir, '.status'))).toBe(false);
    expect(store.statusNames()).toEqual([NAME]);
  });
});
