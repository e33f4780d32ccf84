import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import { buildFleetApp } from '../../../lib/engines/stacks/app';
import { WorkerCluster } from '../../../lib/model/cluster/schema/schema';
import { REPO, tempDir, validated } from '../../helpers/clusters';
import { Json } from '../../helpers/json';

/** The multi-pool fixture: an on-demand system pool default, a spot pool with capacity, an arm64 pool with a NoSchedule taint. */
export const POOLS_FIXTURE = path.join(REPO, 'test', 'fixtures', 'pools', 'pools-eu1.yaml');

/** The fixture's raw object, a fresh copy. */
export function rawPools(): Json {
  return parse(fs.readFileSync(POOLS_FIXTURE, 'utf8'));
}

/** Drops the rules narrowed to a pool the object no longer has (the fixture narrows some to default and arm64). */
export function dropRulesOfMissingPools(raw: Json): void {
  const names = (raw.spec.pools as Json[]).map((p) => p.name as string);
  raw.spec.securityGroupRules = (raw.spec.securityGroupRules as Json[]).filter(
    (r) => !r.pools || (r.pools as string[]).every((p) => names.includes(p)),
  );
}

/** The fixture changed by `mutate`, validated. */
export function poolsVariant(mutate: (raw: Json) => void = () => undefined): WorkerCluster {
  const raw = rawPools();
  mutate(raw);
  return validated(raw, `clusters/${raw.metadata.name}.yaml`);
}

/** Every stack of one cluster as `cdk synth` writes it: the exact template text, by stack name. */
export function synthAll(cluster: WorkerCluster, opts: { nag?: boolean } = {}): Map<string, string> {
  const outdir = tempDir('pools');
  try {
    const fleet = buildFleetApp({
      clusters: [{ file: 'test', cluster }],
      outdir,
      nag: opts.nag ?? false,
      bootstrap: false,
    });
    const assembly = fleet.app.synth();
    return new Map(assembly.stacks.map((s) => [s.stackName, fs.readFileSync(s.templateFullPath, 'utf8')]));
  } finally {
    fs.rmSync(outdir, { recursive: true, force: true });
  }
}

/** The group of a template (every worker stack has one at most, at Pool/Group). */
export function groupOf(template: Json): Json {
  const groups = Object.values(template.Resources as Record<string, Json>).filter(
    (r) => r.Type === 'AWS::AutoScaling::AutoScalingGroup',
  );
  if (groups.length !== 1) throw new Error(`expected one group, found ${groups.length}`);
  return groups[0];
}
