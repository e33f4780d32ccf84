import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * Issue 32 item 19: each release says what it newly refuses. The newest section of CHANGELOG.md has a "Newly refused"
 * list (an empty release says "nothing"), and the upgrade doc names the check to run before upgrading.
 */
const REPO = path.resolve(__dirname, '..', '..');
const read = (f: string) => fs.readFileSync(path.join(REPO, f), 'utf8');

test('the newest release section says what it newly refuses', () => {
  // GIVEN the changelog; WHEN its first release section is read
  const text = read('CHANGELOG.md');
  const newest = text.split(/^## /m)[1];
  // THEN it has a Newly refused heading with at least one item
  expect(newest).toBeDefined();
  const refused = /^### Newly refused\n\n((?:- .*\n(?: {2}.*\n)*)+)/m.exec(newest);
  expect(refused?.[1]).toMatch(/^- \S/);
});

test('the upgrade doc and the changelog name the check before upgrading', () => {
  for (const f of ['CHANGELOG.md', 'docs/kubernetes-operations.md'])
    expect(read(f)).toContain('kubectl get workerclusters -A -o yaml');
  expect(read('docs/kubernetes-operations.md')).toContain('validate --objects -');
});
