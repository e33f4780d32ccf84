import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO, tempDir } from '../../helpers/clusters';
import { run } from '../../helpers/tools';
// eslint-disable-next-line @typescript-eslint/no-require-imports -- bin/launch.js is the CommonJS entry the test is about
const { isBuildCurrent } = require('../../../bin/launch') as { isBuildCurrent: (name: string) => boolean };

/**
 * bin/launch.js: the precompiled app when build/ is newer than every source, the TypeScript sources otherwise
 * (bin/ts-require.js), and the two give
 * the same templates. Runs on a copy of the project, so that it can age files without touching the checkout.
 */

const PARTS = [
  'bin',
  'lib',
  'cloudconfig',
  'clusters',
  'package.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'cdk.json',
];
let project: string;

beforeAll(() => {
  project = tempDir('launch');
  for (const p of PARTS) fs.cpSync(path.join(REPO, p), path.join(project, p), { recursive: true });
  fs.symlinkSync(path.join(REPO, 'node_modules'), path.join(project, 'node_modules'));
});

/** Runs cdk.json's app; `fromSources` says whether .ts files ran (a preload script looks at the module cache on exit). */
const app = (env: Record<string, string> = {}) => {
  const outdir = tempDir('launch-out');
  const probe = path.join(outdir, '..', `probe-${path.basename(outdir)}.js`);
  const seen = `${probe}.out`;
  fs.writeFileSync(
    probe,
    `process.on('exit', () => require('fs').writeFileSync(${JSON.stringify(seen)}, String(Object.keys(require.cache).some((k) => k.endsWith('.ts')))));\n`,
  );
  const r = run('node', ['-r', probe, 'bin/cdk-app.js'], {
    cwd: project,
    env: { ...process.env, CDK_OUTDIR: outdir, WORKER_STACKS_NAG: 'false', ...env },
  });
  return { ...r, outdir, fromSources: fs.readFileSync(seen, 'utf8') === 'true' };
};
const setAge = (p: string, secondsAgo: number) => {
  const t = new Date(Date.now() - secondsAgo * 1000);
  fs.utimesSync(path.join(project, p), t, t);
};

test('a build newer than every source runs; a source edited since makes it run from the sources instead', () => {
  // GIVEN a stand-in build that only says it ran, newer than the sources
  fs.mkdirSync(path.join(project, 'build', 'bin'), { recursive: true });
  fs.writeFileSync(path.join(project, 'build', 'bin', 'app.js'), "process.stdout.write('PRECOMPILED');\n");
  setAge('lib/core/paths.ts', 60);

  // WHEN the app starts
  const fresh = app();

  // THEN the build ran, no source
  expect(fresh.stdout).toBe('PRECOMPILED');
  expect(fresh.fromSources).toBe(false);

  // WHEN a source is newer than the build (an edit since the last `npm run build`)
  setAge('build/bin/app.js', 120);
  const stale = app();

  // THEN the sources ran: a real assembly was written, and the stale build was not used
  expect(stale.status).toBe(0);
  expect(stale.stdout).not.toContain('PRECOMPILED');
  expect(stale.fromSources).toBe(true);
  expect(fs.readdirSync(stale.outdir)).toContain('WorkerStack-prod-eu1.template.json');
  fs.rmSync(path.join(project, 'build'), { recursive: true });
});

test('the precompiled app (npm run build) writes the same templates, byte for byte, as the TypeScript sources', () => {
  // GIVEN a real build: the checkout's own when it is current (`npm ci` runs `npm run build`; the copy is then newer
  // than the copied sources, as after a build), else one of the copy (a compile of the whole program, ~15 s of CPU)
  if (isBuildCurrent('app')) fs.cpSync(path.join(REPO, 'build'), path.join(project, 'build'), { recursive: true });
  else {
    const build = run(
      'node',
      [path.join(REPO, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'],
      { cwd: project },
    );
    expect(build).toMatchObject({ status: 0, stderr: '' });
  }

  // WHEN the app runs from the build, and from the sources
  const compiled = app();
  const sources = app({ WORKER_STACKS_TS_NODE: '1' });

  // THEN both succeed, each the way it should, with identical templates
  expect([compiled.status, sources.status]).toEqual([0, 0]);
  expect([compiled.fromSources, sources.fromSources]).toEqual([false, true]);
  const templates = fs
    .readdirSync(compiled.outdir)
    .filter((f) => f.endsWith('.template.json'))
    .sort();
  expect(templates.length).toBeGreaterThan(3);
  expect(
    fs
      .readdirSync(sources.outdir)
      .filter((f) => f.endsWith('.template.json'))
      .sort(),
  ).toEqual(templates);
  for (const t of templates)
    expect(fs.readFileSync(path.join(compiled.outdir, t), 'utf8')).toBe(
      fs.readFileSync(path.join(sources.outdir, t), 'utf8'),
    );
});
