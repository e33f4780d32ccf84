import * as fs from 'node:fs';
import * as path from 'node:path';
import { ClusterFile, planSynthesis, readSideInputs, SideInputs } from '../../../lib/engines/review/inputs';
import { tempDir } from '../../helpers/clusters';

/** One side's inputs, by hand: cluster files (name -> hash or null), template files (path -> hash), code (path -> hash). */
function side(
  clusters: Record<string, string | null>,
  templates: Record<string, string>,
  code: Record<string, string> = { 'lib/a.ts': '1' },
  refs: Record<string, string[]> = {},
): SideInputs {
  const files = new Map<string, ClusterFile>(
    Object.entries(clusters).map(([file, hash]) => [
      file,
      { file, name: file.replace(/\.ya?ml$/, ''), hash, source: `/nowhere/${file}` },
    ]),
  );
  const names = new Set(
    Object.keys(templates)
      .filter((p) => p.endsWith('/template.yaml'))
      .map((p) => p.split('/')[0]),
  );
  return {
    clusters: files,
    templates: new Map(Object.entries(templates)),
    templateNames: names,
    templateRefs: new Map([...names].map((n) => [n, new Set(refs[n] ?? ['_shared'])])),
    code: new Map(Object.entries(code)),
  };
}

const TEMPLATES = { 'flatcar/template.yaml': 'f', 'al2023/template.yaml': 'a', '_shared/kubelet.hbs': 's' };
const USES: Record<string, string> = { 'p.yaml': 'flatcar', 'e.yaml': 'flatcar', 's.yaml': 'al2023' };
const templateOf = (f: ClusterFile) => USES[f.file];
const names = (fs: readonly ClusterFile[]) => fs.map((f) => f.file);

test('one changed object: only it is synthesized, on both sides; the rest are skipped', () => {
  // GIVEN
  const base = side({ 'p.yaml': '1', 'e.yaml': '2', 's.yaml': '3' }, TEMPLATES);
  const head = side({ 'p.yaml': '1', 'e.yaml': '2', 's.yaml': '4' }, TEMPLATES);
  // WHEN
  const plan = planSynthesis(base, head, templateOf);
  // THEN
  expect(plan).toMatchObject({ codeChanged: false, templatesChanged: [], base: ['s.yaml'], head: ['s.yaml'] });
  expect(names(plan.skipped)).toEqual(['e.yaml', 'p.yaml']);
});

test('added and removed objects are synthesized on the side that has them', () => {
  // GIVEN
  const base = side({ 'p.yaml': '1', 'old.yaml': '2' }, TEMPLATES);
  const head = side({ 'p.yaml': '1', 'new.yaml': '2' }, TEMPLATES);
  // WHEN
  const plan = planSynthesis(base, head, templateOf);
  // THEN
  expect(plan).toMatchObject({ base: ['old.yaml'], head: ['new.yaml'] });
  expect(names(plan.skipped)).toEqual(['p.yaml']);
});

test.each([
  [
    'a file of one template: the clusters that use it',
    { 'flatcar/template.yaml': 'F' },
    {},
    ['flatcar'],
    ['e.yaml', 'p.yaml'],
  ],
  ['a shared file: every cluster', { '_shared/kubelet.hbs': 'S' }, {}, ['*'], ['e.yaml', 'p.yaml', 's.yaml']],
  [
    'a file at the top of the template dir: every cluster',
    { 'README.md': 'x' },
    {},
    ['*'],
    ['e.yaml', 'p.yaml', 's.yaml'],
  ],
  [
    'a template that names a file of a changed one: its clusters too',
    { 'al2023/extra.hbs': 'X' },
    { flatcar: ['_shared', 'al2023'] },
    ['al2023', 'flatcar'],
    ['e.yaml', 'p.yaml', 's.yaml'],
  ],
])('a template change: %s', (_what, change, refs, changed, synthesized) => {
  // GIVEN
  const objects = { 'p.yaml': '1', 'e.yaml': '2', 's.yaml': '3' };
  const base = side(objects, TEMPLATES, undefined, refs);
  const head = side(objects, { ...TEMPLATES, ...change }, undefined, refs);
  // WHEN
  const plan = planSynthesis(base, head, templateOf);
  // THEN
  expect(plan.templatesChanged).toEqual(changed);
  expect(plan.head).toEqual(synthesized);
  expect(plan.base).toEqual(synthesized);
});

test('a code change synthesizes every cluster; so does an object whose template cannot be read, or that is no regular file', () => {
  // GIVEN
  const objects = { 'p.yaml': '1', 'e.yaml': '2', 's.yaml': '3' };
  // WHEN
  const code = planSynthesis(side(objects, TEMPLATES), side(objects, TEMPLATES, { 'lib/a.ts': '2' }), templateOf);
  const unknown = planSynthesis(side(objects, TEMPLATES), side(objects, { ...TEMPLATES, 'flatcar/x.hbs': 'x' }), (f) =>
    f.file === 's.yaml' ? undefined : templateOf(f),
  );
  const link = planSynthesis(
    side({ ...objects, 'l.yaml': null }, TEMPLATES),
    side({ ...objects, 'l.yaml': null }, TEMPLATES),
    templateOf,
  );
  // THEN
  expect(code).toMatchObject({ codeChanged: true, skipped: [], head: ['e.yaml', 'p.yaml', 's.yaml'] });
  expect(unknown.head).toEqual(['e.yaml', 'p.yaml', 's.yaml']);
  expect(link.head).toEqual(['l.yaml']);
});

test('reading a side: a link to /dev/zero and a directory named x.yaml are never opened, and are not hashed', () => {
  // GIVEN
  const dir = tempDir('review-inputs');
  try {
    fs.mkdirSync(path.join(dir, 'clusters'));
    fs.mkdirSync(path.join(dir, 'cloudconfig/t'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'cloudconfig/t/template.yaml'), 'files: [{ template: ../_shared/a.hbs }]\n');
    fs.writeFileSync(path.join(dir, 'clusters/a.yaml'), 'x: 1\n');
    fs.symlinkSync('/dev/zero', path.join(dir, 'clusters/zero.yaml'));
    fs.mkdirSync(path.join(dir, 'clusters/dir.yaml'));
    // WHEN
    const inputs = readSideInputs(dir, 'clusters', 'cloudconfig');
    // THEN
    expect([...inputs.clusters.values()].map((f) => [f.file, f.hash === null])).toEqual([
      ['a.yaml', false],
      ['dir.yaml', true],
      ['zero.yaml', true],
    ]);
    expect([...inputs.templateNames]).toEqual(['t']);
    expect([...inputs.templateRefs.get('t')!]).toEqual(['_shared']);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
