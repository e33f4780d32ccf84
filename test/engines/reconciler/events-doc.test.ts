import * as path from 'node:path';
import { EVENT_REASONS } from '../../../lib/engines/reconciler/workflow/events';
import { readDoc } from '../../docs/docs';

const page = readDoc(path.join('docs', 'kubernetes.md'));

test("docs/kubernetes.md's table of the clusters' events names every event reason of the reconciler", () => {
  // GIVEN the Events section's table
  const start = page.indexOf('\n## Events\n');
  const section = page.slice(start, page.indexOf('\n## ', start + 1));
  expect(start).toBeGreaterThan(0);
  // WHEN its reasons are read
  const listed = [...section.matchAll(/^\| ((?:`\w+`(?:, )?)+) \|/gm)].flatMap((m) =>
    [...m[1].matchAll(/`(\w+)`/g)].map((x) => x[1]),
  );
  // THEN
  expect(listed.sort()).toEqual(Object.keys(EVENT_REASONS).sort());
});
