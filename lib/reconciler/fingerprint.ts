import * as fs from 'node:fs';
import * as path from 'node:path';
import { canonicalJson } from '../cloudconfig/canonical-json';
import { sha256Hex } from '../cloudconfig/checksum';
import { WorkerCluster } from '../cluster/schema';
import { PROJECT_ROOT } from '../paths';

const ROOT = PROJECT_ROOT;

let cached: string | undefined;

/** The folders whose code turns an object into a template and a config (the reconciler's own code does not). */
export const TEMPLATE_CODE_DIRS = ['lib/cluster', 'lib/cloudconfig', 'lib/constructs', 'lib/stacks'];

/**
 * Identity of the code that turns objects into templates, and the versions
 * of the libraries that synthesize. A new release of it re-deploys (the
 * change set then says whether anything really changed).
 */
export function codeFingerprint(): string {
  if (cached) return cached;
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.ts$/.test(e.name) && !e.name.endsWith('.d.ts')) files.push(p);
    }
  };
  for (const dir of TEMPLATE_CODE_DIRS) walk(path.join(ROOT, dir));
  const versions = ['aws-cdk-lib', 'constructs', 'cdk-nag'].map((m) => `${m}@${require(`${m}/package.json`).version}`);
  cached = sha256Hex(canonicalJson({ versions, files: files.map((f) => [path.relative(ROOT, f), sha256Hex(fs.readFileSync(f))]) }));
  return cached;
}

/**
 * Everything that feeds the template: code, spec and the config's bytes (through its checksum). `spec.paused` is left
 * out: pausing and resuming a cluster is not a change to deploy.
 */
export function inputsFingerprint(cluster: WorkerCluster, configChecksum: string, code: string = codeFingerprint()): string {
  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  const { paused, ...spec } = cluster.spec;
  return sha256Hex(canonicalJson({ code, name: cluster.metadata.name, spec, configChecksum }));
}
