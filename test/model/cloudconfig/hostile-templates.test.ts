/**
 * A hostile template directory (WORKER_STACKS_TEMPLATES, issue 21), what the model makes of its contents: a
 * catastrophic regular expression in values.yaml, a manifest that is a YAML bomb. Each is refused with the file named
 * and never hangs validate. The files a directory holds that are not its own (links that leave it, FIFOs, devices,
 * oversized files) are the file system's source's to refuse: test/platform/files/template-directory.test.ts.
 * Each test changes a private copy of cloudconfig/.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { validateCluster } from '../../../lib/model/cluster/validate';
import { listTemplates } from '../../../lib/model/cloudconfig/templates';
import { rawExample } from '../../helpers/clusters';
import { templateDirectory } from '../../../lib/platform/files/template-directory';
import {
  derivedStaging,
  validatedStaging,
  STAGING_FILE,
  templateCopyPerTest,
} from '../../fixtures/cloudconfig/template-copy';

const copy = templateCopyPerTest();

describe('patterns in values.yaml are matched in linear time, or refused', () => {
  const declare = (entry: string) => fs.appendFileSync(path.join(copy.dir, 'al2023-worker', 'values.yaml'), entry);

  test('a catastrophic pattern, (a+)+, against 40 a and a b: refused in time, not hanging', () => {
    // GIVEN a declaration whose pattern makes a backtracking engine take 2^40 steps on this value
    declare('  - { name: nodeGroup, type: string, pattern: "(a+)+", default: a, description: the group }\n');
    // WHEN
    const r = validateCluster(
      (() => {
        const raw = rawExample('staging-us1');
        raw.spec.cloudConfig.values.nodeGroup = `${'a'.repeat(40)}b`;
        return raw;
      })(),
      {
        file: STAGING_FILE,
        templates: listTemplates(templateDirectory(copy.dir)),
        templateSource: templateDirectory(copy.dir),
      },
    );
    // THEN
    expect(r.problems).toEqual([
      {
        file: STAGING_FILE,
        path: 'spec.cloudConfig.values.nodeGroup',
        message: `"${'a'.repeat(40)}b" does not match (a+)+ (rule template-value)`,
        rule: 'template-value',
      },
    ]);
  });

  test.each([
    ['a back-reference', '(a)\\\\1', /the escape \\1/],
    ['a lookahead', '(?=a)a', /a group other than \(\.\.\.\) or \(\?:\.\.\.\)/],
    ['a lazy quantifier', 'a+?', /a lazy or possessive quantifier/],
    ['a repeat count over 100', 'a{1000}', /a repeat count above 100/],
    ['repeats that expand past the state limit', '(((a{100}){100}){100})', /too large/],
  ])('%s is refused on the declaration', (_what, pattern, message) => {
    // GIVEN
    declare(`  - { name: nodeGroup, type: string, pattern: "${pattern}", default: a, description: the group }\n`);
    // WHEN
    const r = validatedStaging(copy.dir);
    // THEN
    expect(r.problems).toEqual([
      {
        file: STAGING_FILE,
        path: 'spec.cloudConfig.template',
        message: expect.stringMatching(message),
        rule: 'template-declaration',
      },
    ]);
  });
});

describe('a template manifest that is a YAML bomb (issue 32 item 11)', () => {
  test.each([
    [
      'an alias bomb (nine levels of nine aliases)',
      Array.from({ length: 7 }, (_, i) =>
        i === 0
          ? 'x0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]'
          : `x${i}: &a${i} [${Array.from({ length: 9 }, () => `*a${i - 1}`).join(', ')}]`,
      ).join('\n'),
      /not a template manifest: Excessive alias count/,
    ],
    ['a key twice', 'format: cloud-init', /not a template manifest: .*[Mm]ap keys must be unique/],
  ])('%s is refused naming the manifest, on the template field', (_what, prefix, rule) => {
    // GIVEN al2023-worker's template.yaml with that prepended
    const file = path.join(copy.dir, 'al2023-worker', 'template.yaml');
    fs.writeFileSync(file, `${prefix}\n${fs.readFileSync(file, 'utf8')}`);
    // WHEN staging-us1 (al2023-worker) is derived, as validate and cdk synth derive it
    const d = derivedStaging(copy.dir);
    // THEN one problem, on the template field, that names the manifest and the rule
    expect(d.config).toBeUndefined();
    expect(d.problems).toEqual([
      {
        file: STAGING_FILE,
        path: 'spec.cloudConfig.template',
        message: expect.stringMatching(new RegExp(`al2023-worker/template\\.yaml: ${rule.source}`)),
      },
    ]);
  });
});
