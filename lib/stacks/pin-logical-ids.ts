import { CfnElement, Stack } from 'aws-cdk-lib';

/**
 * aws-cdk-lib works an element's logical id out again (an MD5 of its construct path) every time a reference to it
 * is resolved, and each of the ~70 rules references the security groups several times per synthesis: about a tenth
 * of the time. Once the stack is built every id is final, so each is allocated once by the stack itself
 * (Stack.getLogicalId: renames included) and pinned; the template is the same, which test/stacks/pin-logical-ids.test.ts
 * checks. Call it last (a rename after it would not be seen), on elements without an override of their own (it would
 * be replaced by the path-derived id).
 */
export function pinLogicalIds(stack: Stack): void {
  for (const c of stack.node.findAll()) {
    if (CfnElement.isCfnElement(c) && Stack.of(c) === stack) c.overrideLogicalId(stack.getLogicalId(c));
  }
}
