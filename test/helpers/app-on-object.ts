import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO, tempDir } from './clusters';
import { run } from './tools';

/**
 * The CDK app (bin/app.ts) run as the CDK CLI runs it (cdk.json), on a fleet of one object written as
 * `clusters/<file>` under a new directory `root`: what `cdk synth` says of a bad object. `outdir` is where a synthesis
 * would have written.
 */
export function appOnObject(
  prefix: string,
  file: string,
  raw: unknown,
): { r: ReturnType<typeof run>; outdir: string; root: string } {
  const root = tempDir(prefix);
  fs.mkdirSync(path.join(root, 'clusters'));
  fs.writeFileSync(path.join(root, 'clusters', file), JSON.stringify(raw));
  const outdir = path.join(root, 'cdk.out');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    WORKER_STACKS_CLUSTERS: path.join(root, 'clusters'),
    CDK_OUTDIR: outdir,
    CDK_VALIDATION: 'false',
  };
  delete env.NODE_ENV;
  return { r: run(process.execPath, ['bin/cdk-app.js'], { cwd: REPO, env }), outdir, root };
}
