import * as fs from 'node:fs';
import * as path from 'node:path';
import { buildFleetApp } from '../../../lib/engines/stacks/app';
import { derive } from '../../../lib/model/cluster/derive';
import { synthesisProblems } from '../../../lib/engines/synthesis/synthesis-check';
import { listTemplates } from '../../../lib/model/cloudconfig/templates';
import { formatProblem } from '../../../lib/core/errors';
import { rawExample, tempDir } from '../../helpers/clusters';
import { EXAMPLE, Harness } from '../../fakes/harness';
import { Json } from '../../helpers/json';
import {
  DEFAULT_TEMPLATES_DIR,
  defaultTemplates,
  templateDirectory,
} from '../../../lib/platform/files/template-directory';

/** validate, render, status, the CDK app and the reconciler derive an object one way: the same refusals, the same words. */

/** A copy of the templates where the cloud-init template names a value no object has. */
function brokenTemplates(): string {
  const dir = tempDir('templates');
  fs.cpSync(DEFAULT_TEMPLATES_DIR, dir, { recursive: true });
  fs.appendFileSync(path.join(dir, '_shared', 'kubelet.env.hbs'), '\n{{values.noSuchValue}}\n');
  return dir;
}

test.each([
  ['an invalid object', (raw: Json) => (raw.spec.pool.minSize = -1), 'validate'],
  ['a valid object', () => undefined, undefined],
])('%s: derive says which stage refused it', (_label, mutate, stage) => {
  // GIVEN an example object, changed
  const raw = rawExample('staging-us1');
  mutate(raw);

  // WHEN it is derived
  const d = derive(raw, {
    file: 'clusters/staging-us1.yaml',
    templateSource: defaultTemplates(),
    templates: listTemplates(defaultTemplates()),
  });

  // THEN a refusal names the stage and the field; a valid object has its config and checksum
  expect(d.stage).toBe(stage);
  if (stage) expect(d.problems?.[0]).toMatchObject({ file: 'clusters/staging-us1.yaml', path: 'spec.pool.minSize' });
  else expect(d.config?.checksum).toMatch(/^[0-9a-f]{64}$/);
});

test('derive reads no directory listing: the templates it knows are the ones its caller listed', () => {
  // GIVEN staging-us1, whose template al2023-worker is in the directory, and a caller's list without it
  const raw = rawExample('staging-us1');
  const listed = new Set([...listTemplates(defaultTemplates())].filter((t) => t !== 'al2023-worker'));

  // WHEN it is derived with that list
  const d = derive(raw, { file: 'clusters/staging-us1.yaml', templateSource: defaultTemplates(), templates: listed });

  // THEN the template is unknown, as the list says, though its directory is there
  expect(d.stage).toBe('validate');
  expect(d.problems).toEqual([expect.objectContaining({ path: 'spec.cloudConfig.template', rule: 'template-known' })]);
});

test('a template that does not render: derive, validate (synthesis check) and the CDK app say the same thing', () => {
  // GIVEN a valid object and a template that names a value it does not have
  const templatesDir = brokenTemplates();
  const raw = rawExample('staging-us1');
  const file = 'clusters/staging-us1.yaml';

  // WHEN each path derives it
  const d = derive(raw, {
    file,
    templateSource: templateDirectory(templatesDir),
    templates: listTemplates(templateDirectory(templatesDir)),
  });
  const fromValidate = synthesisProblems(d.cluster!, file, { templatesDir, nag: false });
  let fromApp = '';
  try {
    buildFleetApp({
      clusters: [{ file, cluster: d.cluster! }],
      outdir: tempDir('derive-app'),
      templatesDir,
      nag: false,
    }).app.synth();
  } catch (e) {
    fromApp = (e as Error).message;
  }

  // THEN every one refuses it at spec.cloudConfig.template with the one message
  expect(d.stage).toBe('render');
  expect(d.problems).toHaveLength(1);
  expect(d.problems![0]).toMatchObject({
    file,
    path: 'spec.cloudConfig.template',
    message: expect.stringMatching(/^does not render: /),
  });
  expect(fromValidate).toEqual(d.problems);
  expect(fromApp).toContain(formatProblem(d.problems![0]));
});

test('the reconciler stalls such an object as RenderFailed with the words validate uses', async () => {
  // GIVEN a cluster of the reconciler's harness and the template that does not render
  const templatesDir = brokenTemplates();
  const h = new Harness();
  try {
    // WHEN it is reconciled
    const outcome = await h.reconcile(EXAMPLE, {}, h.deps({ templatesDir }));

    // THEN it stalled before anything reached AWS, saying what derive says of the same object
    const d = derive(rawExample(EXAMPLE), {
      file: (await h.deps().store.get(EXAMPLE))!.source,
      templateSource: templateDirectory(templatesDir),
      templates: listTemplates(templateDirectory(templatesDir)),
    });
    expect(outcome.result).toBe('stalled');
    expect(h.problem()).toMatchObject({
      type: 'Stalled',
      reason: 'RenderFailed',
      message: expect.stringContaining(formatProblem(d.problems![0])),
    });
    expect(h.cfn.count()).toBe(0);
  } finally {
    h.cleanup();
  }
});
