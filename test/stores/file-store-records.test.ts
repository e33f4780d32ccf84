import * as fs from 'node:fs';
import * as path from 'node:path';
import { ClusterStatus } from '../../lib/cluster/status';
import { FileStore } from '../../lib/stores/file-store';
import { EXAMPLE_NAMES, EXAMPLES_DIR, tempDir } from '../helpers/clusters';

/** list(), get(), generation, removed objects, clearStatus, watch and the status file's shape. */

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
const generationOf = async (store: FileStore, name = NAME) => (await store.get(name))!.generation;
const status = (reason: string, extra: Partial<ClusterStatus> = {}): ClusterStatus => ({
  conditions: [{ type: 'Ready', status: 'True', reason, message: `m ${reason}`, lastTransitionTime: '2024-01-02T03:04:05.000Z', observedGeneration: 1 }],
  ...extra,
});

describe('list', () => {
  test('one record per clusters/*.yaml, at generation 1, with a resourceVersion', async () => {
    // GIVEN a directory holding the example cluster objects and a non-YAML file
    fs.writeFileSync(path.join(dir, 'README.md'), '# not a cluster\n');
    const store = new FileStore({ clustersDir: dir, relativeTo: dir });

    // WHEN listing
    const records = await store.list();

    // THEN every YAML file is one parsed record, new at generation 1
    expect(EXAMPLE_NAMES.length).toBeGreaterThanOrEqual(3);
    expect(records.map((r) => r.name)).toEqual(EXAMPLE_NAMES);
    for (const r of records) {
      expect(r.source).toBe(`${r.name}.yaml`);
      expect(r.parseProblems).toEqual([]);
      expect((r.raw as { metadata: { name: string } }).metadata.name).toBe(r.name);
      expect(r.generation).toBe(1);
      expect(r.resourceVersion).toMatch(/^\d+$/);
      expect(r.status).toBeUndefined();
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
    expect(broken.parseProblems[0]).toMatchObject({ file: 'broken.yaml', message: expect.stringMatching(/YAML syntax error at line \d+/) });
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
  test('bumps when a spec value changes, and survives a new store instance', async () => {
    // GIVEN a cluster seen once
    const store = new FileStore({ clustersDir: dir });
    expect(await generationOf(store)).toBe(1);

    // WHEN a spec value is edited
    edit((t) => t.replace(/maxSize: (\d+)/, (_m, n) => `maxSize: ${Number(n) + 1}`));

    // THEN the generation is 2, also for a fresh store on the same directory, and stays there
    expect(await generationOf(store)).toBe(2);
    expect(await generationOf(new FileStore({ clustersDir: dir }))).toBe(2);
    expect(await generationOf(store)).toBe(2);
  });

  test('does not bump on metadata, comment, key-order or status changes, nor on a status write', async () => {
    // GIVEN a cluster at generation 1 with a status
    const store = new FileStore({ clustersDir: dir });
    const rec = (await store.get(NAME))!;
    expect(rec.generation).toBe(1);
    await store.writeStatus(NAME, status('Written'), rec.resourceVersion);

    // WHEN only metadata, comments, key order and a status block change
    edit((t) => `# a new comment\n${t.replace('metadata:\n', 'metadata:\n  labels: { team: platform }\n')}\n# trailing comment\n`);
    edit((t) => t.replace(/^(spec:\n)( {2}account: .*\n)( {2}region: .*\n)/m, '$1$3$2'));
    edit((t) => `${t}status:\n  observedGeneration: 7\n`);

    // THEN the generation is still 1 (and the status write did not bump it either)
    expect(await generationOf(store)).toBe(1);
    expect(await generationOf(new FileStore({ clustersDir: dir }))).toBe(1);
  });

  test('a reverted spec bumps again: the generation never goes back', async () => {
    // GIVEN a cluster whose spec was changed once
    const store = new FileStore({ clustersDir: dir });
    const original = fs.readFileSync(yamlOf(), 'utf8');
    expect(await generationOf(store)).toBe(1);
    edit((t) => t.replace(/minSize: (\d+)/, (_m, n) => `minSize: ${Number(n) + 1}`));
    expect(await generationOf(store)).toBe(2);

    // WHEN the change is reverted
    fs.writeFileSync(yamlOf(), original);

    // THEN it is generation 3, not 1
    expect(await generationOf(store)).toBe(3);
  });

  test('a spec change on one cluster leaves the others alone; a broken file keeps its generation', async () => {
    // GIVEN all clusters seen once, and one of them then broken
    const store = new FileStore({ clustersDir: dir });
    await store.list();
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

describe('status of removed objects, clearStatus', () => {
  test('a removed object keeps its status through get() and statusNames()', async () => {
    // GIVEN a cluster with a status, and all clusters listed (so each has its generation recorded)
    const store = new FileStore({ clustersDir: dir });
    await store.list();
    const rec = (await store.get(NAME))!;
    const v = await store.writeStatus(NAME, status('Live', { stackName: 'WorkerStack-prod-eu1' }), rec.resourceVersion);

    // WHEN its object is removed
    fs.rmSync(yamlOf());

    // THEN its status is still there, without an object, and listed by name
    expect((await store.list()).map((r) => r.name)).not.toContain(NAME);
    const gone = (await store.get(NAME))!;
    expect(gone).toMatchObject({ name: NAME, parseProblems: [], generation: 1, resourceVersion: v });
    expect(gone.raw).toBeUndefined();
    expect(gone.status).toEqual(status('Live', { stackName: 'WorkerStack-prod-eu1' }));
    expect(store.statusNames()).toEqual([NAME]);
    expect(await store.get('never-existed')).toBeUndefined();
  });

  test('an object removed before it ever had a status leaves no ghost in statusNames()', async () => {
    // GIVEN every cluster listed once (its generation recorded) but none given a status
    const store = new FileStore({ clustersDir: dir });
    await store.list();
    expect(store.statusNames()).toEqual([]);

    // WHEN one object is removed (a rename, say) and another one gets a status
    fs.rmSync(yamlOf());
    const other = EXAMPLE_NAMES.find((n) => n !== NAME)!;
    await store.writeStatus(other, status('Live'), (await store.get(other))!.resourceVersion);

    // THEN only the one with a status is named: the removed one had no stack to report
    expect(store.statusNames()).toEqual([other]);
  });

  test('clearStatus removes what was recorded, checks the version, and bumps it; the cluster is no longer listed as removed', async () => {
    // GIVEN a removed cluster with a status
    const store = new FileStore({ clustersDir: dir });
    const v = await store.writeStatus(NAME, status('Live', { cloudConfigChecksum: 'a'.repeat(64) }), (await store.get(NAME))!.resourceVersion);
    fs.rmSync(yamlOf());

    // WHEN its status is cleared with a stale version, then with the current one
    await expect(store.clearStatus(NAME, String(Number(v) - 1))).rejects.toThrow(/changed underneath/);
    await store.clearStatus(NAME, v);

    // THEN nothing of the old status is left and the version moved
    const after = (await store.get(NAME))!;
    expect(after.status).toBeUndefined();
    expect(Number(after.resourceVersion)).toBe(Number(v) + 1);
    expect(store.statusNames()).toEqual([]);
  });
});

describe('an unreadable status file', () => {
  test('fails its own cluster (named, with the fix) and lists every other one', async () => {
    // GIVEN every cluster listed once, then one status file damaged by hand
    const store = new FileStore({ clustersDir: dir });
    await store.list();
    fs.writeFileSync(path.join(dir, '.status', `${NAME}.json`), '{ not json');

    // WHEN the store lists the clusters
    const records = await store.list();

    // THEN every cluster is there; the damaged one carries one problem naming its status file and what to do
    expect(records.map((r) => r.name).sort()).toEqual([...EXAMPLE_NAMES].sort());
    const bad = records.find((r) => r.name === NAME)!;
    expect(bad.parseProblems).toHaveLength(1);
    expect(bad.parseProblems[0].file).toMatch(new RegExp(`\\.status/${NAME}\\.json$`));
    expect(bad.parseProblems[0].message).toMatch(/not valid JSON[\s\S]*delete it/);
    expect(records.filter((r) => r.name !== NAME).every((r) => r.parseProblems.length === 0)).toBe(true);
  });
});

describe('watch', () => {
  const waitFor = async (cond: () => boolean, ms: number) => {
    for (const end = Date.now() + ms; !cond() && Date.now() < end; ) await new Promise((r) => setTimeout(r, 20));
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
    edit((t) => `${t}# touched again\n`, EXAMPLE_NAMES.find((n) => n !== NAME)!);

    // THEN nothing more arrives
    expect(await waitFor(() => seen.length > count, 500)).toBe(false);
  });
});

describe('the status file', () => {
  test('is written atomically (no temp file left) and round-trips the status exactly', async () => {
    // GIVEN a status with every kind of field, including unicode and nested maps
    const store = new FileStore({ clustersDir: dir });
    const full = status('UpToDate', {
      cloudConfigChecksum: 'f'.repeat(64), observedGeneration: 1, stackName: 'WorkerStack-prod-eu1', stackId: 'arn:aws:cloudformation:eu-west-1:111111111111:stack/x/y',
      stackStatus: 'UPDATE_COMPLETE', inputsFingerprint: 'fp', failures: 0, retryAfter: '2024-01-02T03:04:05.000Z', failedFingerprint: 'ff',
      configDigests: { 'files/etc/kubelet.conf': 'abc', 'units/kubelet.service': 'déjà vu ✓' }, lastConfigChange: 'line1\nline2 "quoted"', recoveryAttempts: 2,
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
