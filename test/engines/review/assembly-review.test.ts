import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { checkoutRelease, fromSources } from '../../helpers/old-release';
import { REPO, tempDir } from '../../helpers/clusters';
import { parse, stringify } from 'yaml';
import { reviewBin } from './cli-run';

/*
 * Issue 33 item 3, the pre-upgrade review: the same objects, synthesized by the release in use (its own code, checked
 * out of git, run as its `cdk synth` runs it) and by this one. 8909f17 writes every launch template with
 * SecurityGroupIds where this code writes a NetworkInterfaces entry: its clusters roll on the upgrade, as the reconciler
 * then does (test/integration/release-upgrade-moto.test.ts: `release …: launch template: NetworkInterfaces,
 * SecurityGroupIds`). 5caa380, the commit before the roll key's rk2, writes the same templates: nothing rolls.
 */

const OBJECTS_FROM = '8909f17';

/** The release's cloud assembly of the objects, made as its `npx cdk synth -o <dir>` makes it. */
function oldAssembly(release: string, clusters: string, templates: string): string {
  const dir = checkoutRelease(release, 'the release an upgrade starts from');
  const out = tempDir(`assembly-${release}`);
  const r = spawnSync(process.execPath, fromSources(dir, 'bin/app.ts'), {
    cwd: dir,
    encoding: 'utf8',
    timeout: 240_000,
    env: {
      ...process.env,
      CDK_OUTDIR: out,
      WORKER_STACKS_CLUSTERS: clusters,
      WORKER_STACKS_TEMPLATES: templates,
      WORKER_STACKS_NAG: 'false',
    },
  });
  if (r.status !== 0) throw new Error(`${release}'s cdk synth exited ${r.status}: ${r.stderr.slice(-1500)}`);
  return out;
}

let clusters: string;
let templates: string;
beforeAll(() => {
  // The operator's objects and templates, outside this repo, kept across the upgrade (the release's own examples).
  clusters = tempDir('upgrade-clusters');
  const raw = parse(fs.readFileSync(path.join(REPO, 'clusters', 'prod-eu1.yaml'), 'utf8'));
  // a value the old release's templates do not declare (the example gained it after 8909f17)
  delete raw.spec.cloudConfig.values.kubeletSha256;
  delete raw.spec.cloudConfig.values.awsCliImage;
  fs.writeFileSync(path.join(clusters, 'prod-eu1.yaml'), stringify(raw));
  templates = path.join(checkoutRelease(OBJECTS_FROM, 'its cloud-config templates'), 'cloudconfig');
});

test('GIVEN the cloud assembly 8909f17 made of the objects WHEN this release reviews against it THEN the cluster rolls, for the release, with the launch template properties the reconciler names', () => {
  // GIVEN
  const base = oldAssembly('8909f17', clusters, templates);
  // WHEN
  const r = reviewBin(REPO, [
    '--base-assembly',
    base,
    '--base-release',
    '8909f17',
    '--clusters',
    clusters,
    '--templates',
    templates,
    '--format',
    'json',
    '--fail-on',
    'roll',
  ]);
  // THEN
  expect({ code: r.status, err: r.stderr }).toEqual({ code: 1, err: '' });
  const result = JSON.parse(r.stdout);
  const prod = result.clusters.find((c: { name: string }) => c.name === 'prod-eu1');
  expect(prod.status).toBe('rolls');
  expect(prod.rollReasons.join('\n')).toMatch(
    /^release 8909f17 → [^:]+: launch template \S+ changes \(.*NetworkInterfaces/m,
  );
});

test('GIVEN the cloud assembly of a release that writes the same templates WHEN this release reviews against it THEN nothing rolls and --fail-on roll passes', () => {
  // GIVEN
  const base = oldAssembly('5caa380', clusters, templates);
  // WHEN
  const r = reviewBin(REPO, [
    '--base-assembly',
    base,
    '--clusters',
    clusters,
    '--templates',
    templates,
    '--fail-on',
    'roll',
  ]);
  // THEN
  expect({ code: r.status, err: r.stderr }).toEqual({ code: 0, err: '' });
  expect(r.stdout).toMatch(/prod-eu1/);
  expect(r.stdout).not.toMatch(/rolls nodes/);
});

describe('an assembly of other objects', () => {
  /** This release's own assembly of one example, renamed: the objects the operator passes differ from it. */
  let base: string;
  beforeAll(() => {
    const objects = tempDir('assembly-objects');
    fs.copyFileSync(path.join(REPO, 'clusters', 'staging-us1.yaml'), path.join(objects, 'staging-us1.yaml'));
    base = tempDir('assembly-this-release');
    // (as cdk.json runs the app: the build when current)
    const r = spawnSync(process.execPath, [path.join(REPO, 'bin', 'cdk-app.js')], {
      cwd: REPO,
      encoding: 'utf8',
      timeout: 240_000,
      env: { ...process.env, CDK_OUTDIR: base, WORKER_STACKS_CLUSTERS: objects, WORKER_STACKS_NAG: 'false' },
    });
    if (r.status !== 0) throw new Error(`cdk synth exited ${r.status}: ${r.stderr.slice(-1500)}`);
  });

  /** A directory of the given examples. */
  function objectsDir(...names: string[]): string {
    const dir = tempDir('assembly-review-objects');
    for (const name of names)
      fs.copyFileSync(path.join(REPO, 'clusters', `${name}.yaml`), path.join(dir, `${name}.yaml`));
    return dir;
  }

  test('GIVEN an assembly that holds none of the objects WHEN reviewed against it THEN it is refused, naming both sides and how to make the right one', () => {
    // GIVEN objects none of which the assembly holds
    const objects = objectsDir('prod-eu1');
    // WHEN
    const r = reviewBin(REPO, ['--base-assembly', base, '--clusters', objects, '--fail-on', 'roll']);
    // THEN nothing is blamed on the release: the command refuses, with the fix
    expect(r.status).not.toBe(0);
    expect(r.status).not.toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(
      /holds none of the clusters of --clusters .*the assembly: staging-us1; the objects: prod-eu1/,
    );
    expect(r.stderr).toMatch(/npx cdk synth -o/);
  });

  test('GIVEN objects of which the assembly holds some WHEN reviewed THEN the others say they are not the release’s doing', () => {
    // GIVEN the assembly's object and one it does not hold
    const objects = objectsDir('staging-us1', 'prod-eu1');
    // WHEN
    const r = reviewBin(REPO, ['--base-assembly', base, '--clusters', objects, '--format', 'json']);
    // THEN the held one is unchanged (same release, same object), the other carries the note
    expect(r.stderr).toBe('');
    const result = JSON.parse(r.stdout) as { clusters: { name: string; status: string; notes: string[] }[] };
    const by = new Map(result.clusters.map((c) => [c.name, c]));
    expect(by.get('staging-us1')?.status).toBe('unchanged');
    expect(by.get('prod-eu1')?.notes.join('\n')).toMatch(
      /not in the base assembly .*nothing here is the release's doing/,
    );
  });
});
