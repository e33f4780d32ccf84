import * as fs from 'node:fs';
import * as path from 'node:path';
import { sha256Hex } from '../../../lib/model/cloudconfig/checksum';
import { renderConfig } from '../../../lib/model/cloudconfig/render';
import { TemplateError } from '../../../lib/core/errors';
import { SynthPool } from '../../../lib/engines/synthesis/synth-pool';
import { synthesizeStack } from '../../../lib/engines/synthesis/synthesize';
import { example, ownSecret, tempDir, variant } from '../../helpers/clusters';
import { DEFAULT_TEMPLATES_DIR, defaultTemplates } from '../../../lib/platform/files/template-directory';

/** Synthesis in worker threads: the same stacks as in this thread, errors that keep their kind, threads recycled. */

let pool: SynthPool | undefined;
afterEach(async () => pool?.close());

const opts = (workDir: string, fingerprint = 'f'.repeat(64)) => ({
  templatesDir: DEFAULT_TEMPLATES_DIR,
  workDir,
  fingerprint,
  nag: true,
});

test('a thread synthesizes byte-identical templates and the same assets as the reconciler thread', async () => {
  // GIVEN two clusters of different shapes and a pool of two threads
  pool = new SynthPool({ size: 2 });
  const clusters = [example('prod-eu1'), example('edge-ap1')];

  // WHEN each is synthesized in the pool and here
  const pooled = await Promise.all(clusters.map((c) => pool!.synthesize(c, opts(tempDir('pool')))));
  const local = clusters.map((c) => synthesizeStack(c, opts(tempDir('local'))));

  // THEN the templates are the same bytes and the config assets the same keys and contents
  for (const [i, p] of pooled.entries()) {
    expect(p.stackName).toBe(local[i].stackName);
    expect(p.templateBody).toBe(local[i].templateBody);
    expect(p.assets.map((a) => a.objectKey)).toEqual(local[i].assets.map((a) => a.objectKey));
    expect(p.assets.map((a) => fs.readFileSync(a.sourcePath))).toEqual(
      local[i].assets.map((a) => fs.readFileSync(a.sourcePath)),
    );
  }
  expect(pool.started).toBe(2);
}, 120_000);

test('a config rendered by the caller crosses to the thread intact and is what the stack stores (no render there)', async () => {
  // GIVEN a rendered config whose bytes the templates could never produce
  pool = new SynthPool({ size: 1 });
  const cluster = example('prod-eu1');
  const rendered = renderConfig(cluster, defaultTemplates());
  const bytes = Buffer.concat([rendered.bytes, Buffer.from('\n# handed over by the caller\n')]);
  const config = { ...rendered, bytes, checksum: sha256Hex(bytes) };

  // WHEN the pool synthesizes with it
  const out = await pool.synthesize(cluster, { ...opts(tempDir('pool-config')), config });

  // THEN the stack names that checksum, and the asset holds exactly those bytes (a Buffer again, not a re-render)
  expect(out.templateBody).toContain(config.checksum);
  expect(out.templateBody).not.toContain(rendered.checksum);
  expect(fs.readFileSync(out.assets.find((a) => a.objectKey.includes(config.checksum))!.sourcePath)).toEqual(bytes);
}, 120_000);

test('a failure in a thread arrives as the same kind of error, and the thread goes on working', async () => {
  // GIVEN a template directory without the template the cluster names
  pool = new SynthPool({ size: 1 });
  const empty = tempDir('no-templates');
  fs.mkdirSync(path.join(empty, '_shared'));

  // WHEN it is synthesized in the pool
  const failed = pool.synthesize(example('prod-eu1'), { ...opts(tempDir('pool')), templatesDir: empty });

  // THEN the error is a TemplateError naming the template, and the next synthesis in the same thread succeeds
  await expect(failed).rejects.toBeInstanceOf(TemplateError);
  await expect(failed).rejects.toThrow(/unknown cloud-config template "flatcar-worker"/);
  await expect(pool.synthesize(example('staging-us1'), opts(tempDir('pool')))).resolves.toMatchObject({
    stackName: 'WorkerStack-staging-us1',
  });
  expect(pool.started).toBe(1);
}, 120_000);

test('a thread is replaced after recycleAfter syntheses, so the memory it held goes with it', async () => {
  // GIVEN a pool of one thread that is recycled after every 2 syntheses
  pool = new SynthPool({ size: 1, recycleAfter: 2 });

  // WHEN 5 clusters are synthesized
  const names = ['a', 'b', 'c', 'd', 'e'].map((n) => `pool-${n}`);
  const out = await Promise.all(
    names.map((n) =>
      pool!.synthesize(
        variant('staging-us1', (r) => ownSecret(Object.assign(r, { metadata: { ...r.metadata, name: n } }))),
        opts(tempDir('pool')),
      ),
    ),
  );

  // THEN all are done, by 3 threads in turn
  expect(out.map((s) => s.stackName)).toEqual(names.map((n) => `WorkerStack-${n}`));
  expect(pool.started).toBe(3);
}, 120_000);
