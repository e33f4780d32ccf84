import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse } from 'yaml';
import { loadClusterFile } from '../../lib/platform/files/load-clusters';
import { WorkerCluster } from '../../lib/model/cluster/schema/schema';
import { validateCluster } from '../../lib/model/cluster/validate';
import { listTemplates } from '../../lib/model/cloudconfig/templates';
import { FORMATS } from '../../lib/model/cloudconfig/formats';
import { renderPools } from '../../lib/model/cloudconfig/render';
import { Json } from './json';
import { defaultTemplates } from '../../lib/platform/files/template-directory';

export const REPO = path.resolve(__dirname, '..', '..');
export const EXAMPLES_DIR = path.join(REPO, 'clusters');
export const EXAMPLE_NAMES = fs
  .readdirSync(EXAMPLES_DIR)
  .filter((f) => f.endsWith('.yaml'))
  .map((f) => f.replace(/\.yaml$/, ''))
  .sort();
export const TEMPLATES = listTemplates(defaultTemplates());

/** The raw (unvalidated, defaults not applied) example object, as a fresh deep copy. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests reshape it freely, including into invalid forms
export function rawExample(name: string): any {
  return parse(fs.readFileSync(path.join(EXAMPLES_DIR, `${name}.yaml`), 'utf8'));
}

/** A validated example cluster. */
export function example(name: string): WorkerCluster {
  const r = loadClusterFile(path.join(EXAMPLES_DIR, `${name}.yaml`), { templates: TEMPLATES, relativeTo: REPO });
  if (!r.cluster) throw new Error(`example ${name} is invalid: ${JSON.stringify(r.problems)}`);
  return r.cluster;
}

/** Validates a raw object (after a test changed it) and returns the cluster, or throws with the problems. */
export function validated(raw: unknown, file = 'clusters/test.yaml'): WorkerCluster {
  const r = validateCluster(raw, { file, templates: TEMPLATES });
  if (!r.cluster) throw new Error(`invalid: ${r.problems.map((p) => `${p.path}: ${p.message}`).join('; ')}`);
  return r.cluster;
}

/** An example, changed by `mutate` on its raw form, then validated. The file name follows metadata.name. */
export function variant(name: string, mutate: (raw: Json) => void): WorkerCluster {
  const raw = rawExample(name);
  mutate(raw);
  return validated(raw, `clusters/${raw.metadata.name}.yaml`);
}

export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `ws-${prefix}-`));
}

/**
 * Points the object's bootstrap-token secret at its own cluster's prefix (worker-stacks/<metadata.name>/...): a cluster
 * names only its own secrets (lib/model/cluster/rules/references.ts), so an example copied under another name takes its secret
 * along. Returns the object.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- raw objects are reshaped freely
export function ownSecret<T extends { metadata: { name: string }; spec: any }>(raw: T): T {
  const values = raw.spec?.cloudConfig?.values;
  if (values && typeof values.bootstrapTokenSecretArn === 'string') {
    values.bootstrapTokenSecretArn = values.bootstrapTokenSecretArn.replace(
      /:secret:worker-stacks\/[^/]+\//,
      `:secret:worker-stacks/${raw.metadata.name}/`,
    );
  }
  return raw;
}

/**
 * The examples whose every pool boots from a small bootstrap user data that fetches its config (Ignition, cloud-init),
 * and the ones with a pool whose user data carries its config itself (an EKS NodeConfig, Bottlerocket settings:
 * lib/model/cloudconfig/format.ts userDataBudget). Tests of what a bootstrap holds, or of a template's files and units,
 * run over the first; docs/node-configs.md says what the second promise instead.
 */
export const BOOTSTRAP_EXAMPLES = EXAMPLE_NAMES.filter((n) => !carriesConfig(n));
export const CONFIG_IN_USER_DATA_EXAMPLES = EXAMPLE_NAMES.filter(carriesConfig);

function carriesConfig(name: string): boolean {
  return [...renderPools(example(name), defaultTemplates()).values()].some(
    (c) => FORMATS[c.format].userDataBudget !== undefined,
  );
}
