import * as fs from 'node:fs';
import * as path from 'node:path';
import { clusterReferenceMarkdown } from '../../lib/cluster/reference';
import { REPO } from '../helpers/clusters';

const readme = fs.readFileSync(path.join(REPO, 'README.md'), 'utf8');

test('README opens with the two commands: synthesize the examples, run the tests', () => {
  // GIVEN
  const firstBlock = /```sh\n([\s\S]*?)```/.exec(readme)![1];
  // WHEN
  const commands = firstBlock.split('\n').filter(Boolean).map((l) => l.replace(/\s+#.*$/, '').trim());
  // THEN
  expect(readme.indexOf('```sh')).toBeLessThan(readme.indexOf('\n## '));
  expect(commands).toEqual(['npm ci && npx cdk synth', 'npm test']);
});

test('CI runs exactly the test command the README gives', () => {
  // GIVEN
  const ci = fs.readFileSync(path.join(REPO, '.ci', 'run'), 'utf8');
  // THEN
  expect(ci.trim().split('\n').pop()).toBe('npm test');
  expect(ci).toMatch(/^npm ci\b/m);
});

test('the field reference in the README is the one generated from the schema', () => {
  // GIVEN
  const m = /<!-- reference:start -->\n([\s\S]*?)<!-- reference:end -->/.exec(readme);
  // THEN (regenerate with: npx worker-stacks schema --markdown)
  expect(m?.[1]).toBe(clusterReferenceMarkdown());
});
