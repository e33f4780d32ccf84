import * as path from 'node:path';
import { REASON_NAMES } from '../../../lib/engines/reconciler/workflow/conditions';
import { markedBlock, readDoc } from '../../docs/docs';

test("docs/troubleshooting.md explains exactly the reconciler's reason union, in order: each with what it means and what to do", () => {
  // GIVEN the troubleshooting page
  const page = readDoc(path.join('docs', 'troubleshooting.md'));

  // WHEN its reasons block is read, one table row per reason
  const block = markedBlock(page, 'reasons') ?? '';
  const rows = [...block.matchAll(/^\| `([A-Za-z]+)` \|(.*)\|$/gm)].map((m) => ({
    reason: m[1],
    cells: m[2].split(' | ').map((c) => c.trim()),
  }));

  // THEN it names every reason the code can write, and no other
  expect(rows.map((r) => r.reason)).toEqual(REASON_NAMES);
  // AND each says what it means and what to do
  for (const { reason, cells } of rows)
    expect({ reason, cells: cells.length, empty: cells.filter((c) => !c) }).toEqual({ reason, cells: 2, empty: [] });
});
