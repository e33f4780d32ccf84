import { CfnElement, Stack } from 'aws-cdk-lib';

/**
 * aws-cdk-lib works an element's logical id out again (an MD5 of its construct path) every time a reference to it
 * is resolved, and each of the ~70 rules references the security groups several times per synthesis (in a profile of
 * 200 generated stacks, about a tenth of the time went to it). Once the stack is built every id is final, so each is allocated once by the stack itself
 * (what its logicalId resolves to now: renames and overrides included) and pinned; the template is the same, which
 * test/engines/stacks/pin-logical-ids.test.ts checks. Call it last: a rename after it would not be seen.
 */
export function pinLogicalIds(stack: Stack): void {
  for (const c of stack.node.findAll()) {
    if (CfnElement.isCfnElement(c) && Stack.of(c) === stack) c.overrideLogicalId(stack.resolve(c.logicalId) as string);
  }
}
