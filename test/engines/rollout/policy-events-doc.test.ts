import * as path from 'node:path';
import { POLICY_EVENT_REASONS, POLICY_WARNINGS } from '../../../lib/engines/rollout/policy-events';
import { markedBlock, readDoc } from '../../docs/docs';

const page = readDoc(path.join('docs', 'fleet-rollouts.md'));

test("docs/fleet-rollouts.md's table of policy events is exactly the events the daemon puts on a policy, in order, with their types", () => {
  // GIVEN the page's policy-events block
  const block = markedBlock(page, 'policy-events') ?? '';
  // WHEN its rows are read
  const rows = [...block.matchAll(/^\| `(\w+)` \| (Normal|Warning) \|/gm)].map((m) => `${m[1]} ${m[2]}`);
  // THEN
  expect(rows).toEqual(
    Object.keys(POLICY_EVENT_REASONS).map(
      (r) => `${r} ${POLICY_WARNINGS.has(r as keyof typeof POLICY_EVENT_REASONS) ? 'Warning' : 'Normal'}`,
    ),
  );
});
