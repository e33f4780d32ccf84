import * as fs from 'node:fs';
import * as path from 'node:path';
import { DEFAULT_TEMPLATES_DIR } from '../../lib/cloudconfig/templates';
import { synthesizeStack } from '../../lib/reconciler/synthesize';
import { example, tempDir } from '../helpers/clusters';
import { synthCluster } from '../helpers/synth';

/** Entry types of a stack's assembly metadata file (`<stack>.metadata.json`, construct path -> entries). */
function metadataTypes(dir: string): Set<string> {
  const file = fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).find((f) => f.endsWith('.metadata.json'));
  if (!file) throw new Error(`no metadata file under ${dir}`);
  const byPath = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as Record<string, { type: string }[]>;
  return new Set(Object.values(byPath).flatMap((entries) => entries.map((e) => e.type)));
}

test.each(['prod-eu1', 'edge-ap1'])('%s: the reconciler writes the bytes cdk synth writes, without the logical-id map it never reads', (name) => {
  // GIVEN a cluster, synthesized the way `cdk synth` does (nag on, like the reconciler)
  const cluster = example(name);
  const cli = synthCluster(cluster, { nag: true });
  const workDir = tempDir('reconciler-synth');

  // WHEN the reconciler synthesizes it
  const out = synthesizeStack(cluster, { templatesDir: DEFAULT_TEMPLATES_DIR, workDir, fingerprint: 'a'.repeat(64) });

  // THEN the template is the same bytes; only the CLI's assembly maps logical ids to construct paths
  expect(out.templateBody).toBe(cli.text);
  expect(metadataTypes(cli.outdir)).toContain('aws:cdk:logicalId');
  const types = metadataTypes(workDir);
  expect(types).not.toContain('aws:cdk:logicalId');
  // the acknowledgments stay, so a finding reported from this assembly still says why it was accepted
  expect(types).toContain('aws:cdk:acknowledged-rules');
}, 60_000);
