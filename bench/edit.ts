/** Edits of cluster object files, made the way a tool or an editor saves them. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse, stringify } from 'yaml';
import { Json } from '../test/helpers/json';

/**
 * Parses, changes and saves one object atomically (temp file + rename), as editors and
 * `kubectl`-style tools do: the watcher sees one event and never a half-written file.
 * Returns the time of the rename (performance.now()).
 */
export function editCluster(clustersDir: string, name: string, change: (raw: Json) => void): number {
  const file = path.join(clustersDir, `${name}.yaml`);
  const raw = parse(fs.readFileSync(file, 'utf8'));
  change(raw);
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, stringify(raw));
  const at = performance.now();
  fs.renameSync(tmp, file);
  return at;
}

/** Changes of different kinds: some change the rendered node config (nodes roll), some only the template. */
export const CHANGES: ReadonlyArray<{ readonly label: string; readonly apply: (raw: Json, i: number) => void }> = [
  {
    label: 'kubernetesVersion (config)',
    apply: (raw) =>
      (raw.spec.cloudConfig.values.kubernetesVersion =
        raw.spec.cloudConfig.values.kubernetesVersion === 'v1.32.1' ? 'v1.32.2' : 'v1.32.1'),
  },
  { label: 'pool.maxSize + 1 (template)', apply: (raw) => (raw.spec.pool.maxSize = Number(raw.spec.pool.maxSize) + 1) },
  {
    label: 'add a node label (config)',
    apply: (raw, i) =>
      (raw.spec.cloudConfig.values.nodeLabels = {
        ...raw.spec.cloudConfig.values.nodeLabels,
        [`bench.example.com/edit-${i}`]: 'yes',
      }),
  },
  {
    label: 'add a tag (template)',
    apply: (raw, i) => (raw.spec.tags = { ...raw.spec.tags, [`bench-edit-${i}`]: 'yes' }),
  },
  { label: 'maxPods (config)', apply: (raw, i) => (raw.spec.cloudConfig.values.maxPods = 200 + i) },
];
