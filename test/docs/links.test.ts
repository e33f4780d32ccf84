import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { REPO } from '../helpers/clusters';
import { anchors, brokenLinks, markdownFiles } from './links';

describe('the link checker', () => {
  let dir: string;
  beforeAll(() => {
    // GIVEN a small tree of markdown files
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-links-'));
    fs.mkdirSync(path.join(dir, 'docs'));
    fs.mkdirSync(path.join(dir, 'node_modules'));
    fs.writeFileSync(
      path.join(dir, 'README.md'),
      "# Top\n\n## Many accounts\n\n## `review` runs the base revision's code\n\n## Many accounts\n",
    );
    fs.writeFileSync(
      path.join(dir, 'docs', 'page.md'),
      '# Page: `worker-stacks reconcile`\n\n### What rolls the nodes, and what never does\n',
    );
    fs.writeFileSync(path.join(dir, 'node_modules', 'skipped.md'), '[x](missing.md)\n');
    fs.writeFileSync(path.join(dir, 'code.ts'), '');
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('headings become GitHub anchors: lower case, punctuation dropped, spaces hyphens, repeats numbered', () => {
    // THEN
    expect([...anchors(fs.readFileSync(path.join(dir, 'README.md'), 'utf8'))]).toEqual([
      'top',
      'many-accounts',
      'review-runs-the-base-revisions-code',
      'many-accounts-1',
    ]);
    expect([...anchors(fs.readFileSync(path.join(dir, 'docs', 'page.md'), 'utf8'))]).toEqual([
      'page-worker-stacks-reconcile',
      'what-rolls-the-nodes-and-what-never-does',
    ]);
  });

  test('markdown files are found outside node_modules', () => {
    // THEN
    expect(markdownFiles(dir)).toEqual(['README.md', path.join('docs', 'page.md')]);
  });

  test.each([
    ['a file beside', 'docs/page.md', []],
    ['a file and its heading', 'docs/page.md#what-rolls-the-nodes-and-what-never-does', []],
    ['a heading of the same file', '#many-accounts-1', []],
    ['a file that is not markdown', 'code.ts', []],
    ['a web address', 'https://example.com/nowhere.md#x', []],
    ['a missing file', 'docs/gone.md', ['no file docs/gone.md']],
    ['a missing heading', 'docs/page.md#what-rolls', ['no heading #what-rolls in docs/page.md']],
    ['a missing heading of the same file', '#security-model', ['no heading #security-model in README.md']],
    ['a file outside the repository', '../elsewhere.md', ['no file ../elsewhere.md']],
  ])('a link to %s: %s', (_what, link, problems) => {
    // GIVEN a file with that link, in a list and in a table
    fs.writeFileSync(
      path.join(dir, 'README.md'),
      `# Top\n\n## Many accounts\n\n## Many accounts\n\n- see [it](${link})\n\n| a | b |\n| --- | --- |\n| [it](${link}) | x |\n`,
    );
    // WHEN
    const broken = brokenLinks(dir, ['README.md']);
    // THEN both are reported, or neither
    expect(broken.map((b) => b.problem)).toEqual([...problems, ...problems]);
  });
});

test('every relative link of every markdown file of the repository resolves, to a file and to a heading', () => {
  // GIVEN the markdown files: README, docs/ and the others
  const files = markdownFiles(REPO);
  expect(files).toEqual(
    expect.arrayContaining([
      'README.md',
      path.join('docs', 'reference.md'),
      path.join('docs', 'troubleshooting.md'),
      path.join('cloudconfig', 'README.md'),
    ]),
  );
  // WHEN their links are checked
  const broken = brokenLinks(REPO, files);
  // THEN none is broken
  expect(broken).toEqual([]);
});
