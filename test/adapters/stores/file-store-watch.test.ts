import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FileStore } from '../../../lib/adapters/stores/file-store';
import { WATCH_SETTLE_MS } from '../../../lib/adapters/stores/file-store-watch';

/** A save that is a truncate and then a write is reported once, after the write, so the read sees the saved bytes. */

let dir: string;
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

test('a truncate and a write a moment later are one change, read after the write', async () => {
  // GIVEN a store watching a directory with one object
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-watch-'));
  const file = path.join(dir, 'a.yaml');
  fs.writeFileSync(file, 'apiVersion: worker-stacks.io/v1alpha1\nkind: WorkerCluster\nmetadata: {name: a}\n');
  const store = new FileStore({ clustersDir: dir });
  const seen: { name: string; bytes: number }[] = [];
  const stop = store.watch((name) => seen.push({ name, bytes: fs.statSync(path.join(dir, `${name}.yaml`)).size }));

  try {
    // WHEN an editor truncates the file, and writes it a little later (within the settle time)
    fs.truncateSync(file, 0);
    await new Promise((r) => setTimeout(r, WATCH_SETTLE_MS / 3));
    fs.writeFileSync(
      file,
      'apiVersion: worker-stacks.io/v1alpha1\nkind: WorkerCluster\nmetadata: {name: a}\nspec: {}\n',
    );
    await new Promise((r) => setTimeout(r, WATCH_SETTLE_MS * 5));

    // THEN the change was reported once, when the file held the saved bytes
    expect(seen).toHaveLength(1);
    expect(seen[0].name).toBe('a');
    expect(seen[0].bytes).toBeGreaterThan(0);
  } finally {
    stop();
  }
});
