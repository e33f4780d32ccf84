import * as fs from 'node:fs';
import * as path from 'node:path';
import { REASON_NAMES } from '../../lib/reconciler/workflow/conditions';

test("README's list of condition reasons is exactly the reconciler's reason union, in order", () => {
  // GIVEN the README
  const readme = fs.readFileSync(path.resolve(__dirname, '..', '..', 'README.md'), 'utf8');

  // WHEN its reasons block is read
  const block = /<!-- reasons:start -->\n([\s\S]*?)<!-- reasons:end -->/.exec(readme)?.[1] ?? '';
  const listed = [...block.matchAll(/`([A-Za-z]+)`/g)].map((m) => m[1]);

  // THEN it names every reason the code can write, and no other
  expect(listed).toEqual(REASON_NAMES);
});
