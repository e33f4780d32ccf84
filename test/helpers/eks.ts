import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import { loadClusterFile } from '../../lib/platform/files/load-clusters';
import { WorkerCluster } from '../../lib/model/cluster/schema/schema';
import { REPO, TEMPLATES, tempDir } from './clusters';

/** The EKS object (template eks-al2023), not in clusters/ yet: docs/node-configs.md says why. */
export const EKS_FIXTURE = path.join(REPO, 'test', 'fixtures', 'eks', 'eks-eu1.yaml');

/** The EKS fixture, validated, after `mutate` changed its raw object. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests reshape the raw object freely
export function eksCluster(mutate: (raw: any) => void = () => undefined): WorkerCluster {
  const raw = parse(fs.readFileSync(EKS_FIXTURE, 'utf8'));
  mutate(raw);
  const dir = tempDir('eks-');
  const file = path.join(dir, `${String(raw.metadata.name)}.yaml`);
  fs.writeFileSync(file, JSON.stringify(raw));
  const r = loadClusterFile(file, { templates: TEMPLATES, relativeTo: dir });
  if (!r.cluster) throw new Error(`the EKS fixture is invalid: ${JSON.stringify(r.problems)}`);
  return r.cluster;
}
