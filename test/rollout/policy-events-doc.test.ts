import * as fs from 'node:fs';
import * as path from 'node:path';
import { POLICY_EVENT_REASONS, POLICY_WARNINGS } from '../../lib/rollout/policy-events';

const readme = fs.readFileSync(path.resolve(__dirname, '..', '..', 'README.md'), 'utf8');

test("README's table of policy events is exactly the events the daemon puts on a policy, in order, with their types", () => {
  // GIVEN the README's policy-events block
  const block = /<!-- policy-events:start -->\n([\s\S]*?)<!-- policy-events:end -->/.exec(readme)?.[1] ?? '';
  // WHEN its rows are read
  const rows = [...block.matchAll(/^\| `(\w+)` \| (Normal|Warning) \|/gm)].map((m) => `${m[1]} ${m[2]}`);
  // THEN
  expect(rows).toEqual(Object.keys(POLICY_EVENT_REASONS).map((r) => `${r} ${POLICY_WARNINGS.has(r as keyof typeof POLICY_EVENT_REASONS) ? 'Warning' : 'Normal'}`));
});
