import * as fs from 'node:fs';
import * as path from 'node:path';
import { EVENT_REASONS } from '../../lib/reconciler/workflow/events';

const readme = fs.readFileSync(path.resolve(__dirname, '..', '..', 'README.md'), 'utf8');

test("README's table of the clusters' events names every event reason of the reconciler", () => {
  // GIVEN the Events section's table
  const section = readme.slice(readme.indexOf('### Events\n'), readme.indexOf('### Deleting an object'));
  // WHEN its reasons are read
  const listed = [...section.matchAll(/^\| ((?:`\w+`(?:, )?)+) \|/gm)].flatMap((m) => [...m[1].matchAll(/`(\w+)`/g)].map((x) => x[1]));
  // THEN
  expect(listed.sort()).toEqual(Object.keys(EVENT_REASONS).sort());
});
