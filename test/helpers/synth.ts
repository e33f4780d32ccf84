import * as fs from 'node:fs';
import { Template } from 'aws-cdk-lib/assertions';
import { WorkerCluster } from '../../lib/model/cluster/schema/schema';
import { buildFleetApp } from '../../lib/engines/stacks/app';
import { workerStackName } from '../../lib/core/naming';
import { tempDir } from './clusters';
import { Json } from './json';

export interface Synthesized {
  /** The template as CloudFormation gets it (parsed JSON). */
  readonly json: Json;
  /** The exact template file bytes. */
  readonly text: string;
  readonly template: Template;
  readonly checksum: string;
  readonly configBytes: Buffer;
  readonly outdir: string;
}

/** Synthesizes one cluster's worker stack into a fresh directory, the same way `cdk synth` does. */
export function synthCluster(cluster: WorkerCluster, opts: { nag?: boolean; templatesDir?: string } = {}): Synthesized {
  const outdir = tempDir('synth');
  const fleet = buildFleetApp({
    clusters: [{ file: 'test', cluster }],
    outdir,
    nag: opts.nag ?? false,
    bootstrap: false,
    templatesDir: opts.templatesDir,
  });
  const assembly = fleet.app.synth();
  const artifact = assembly.getStackByName(workerStackName(cluster.metadata.name));
  const text = fs.readFileSync(artifact.templateFullPath, 'utf8');
  const config = fleet.configs.get(cluster.metadata.name)!;
  return {
    json: JSON.parse(text),
    text,
    template: Template.fromJSON(JSON.parse(text)),
    checksum: config.checksum,
    configBytes: config.bytes,
    outdir,
  };
}

/** Logical ids of the resources of one type. */
export function idsOfType(json: Json, type: string): string[] {
  return Object.keys(json.Resources)
    .filter((k) => json.Resources[k].Type === type)
    .sort();
}

/** What changed between two templates: added, removed and modified logical ids (resources and outputs). */
export function templateDelta(a: Json, b: Json) {
  const delta = (section: string) => {
    const x = a[section] ?? {};
    const y = b[section] ?? {};
    return {
      added: Object.keys(y)
        .filter((k) => !(k in x))
        .sort(),
      removed: Object.keys(x)
        .filter((k) => !(k in y))
        .sort(),
      modified: Object.keys(x)
        .filter((k) => k in y && JSON.stringify(x[k]) !== JSON.stringify(y[k]))
        .sort(),
    };
  };
  return { resources: delta('Resources'), outputs: delta('Outputs') };
}
