import { withRuleId } from '../../../core/errors';
import { Found } from './loose';
import { IMAGE_RULES } from './rule-ids-images';
import { NETWORK_RULES } from './rule-ids-network';
import { POOL_RULES } from './rule-ids-pools';
import { VALUE_RULES } from './rule-ids-values';

/**
 * The named rules of a WorkerCluster, as cdk-nag names its rules: every problem a rule over several fields finds
 * carries the rule's id, its message ends with `(rule <id>)`, and the CRD's CEL twin says the same id, so that
 * `validate` and the API server name one rule. docs/reference.md lists them, generated from this registry
 * (`npx worker-stacks schema --rules`). A field's own type, format or range is no named rule: its path says it.
 */

/** Every named rule, in the order of the reference. */
export const CLUSTER_RULES = [...POOL_RULES, ...IMAGE_RULES, ...NETWORK_RULES, ...VALUE_RULES] as const;

/** The id of a named rule: a rule that is not in the registry does not compile. */
export type RuleId = (typeof CLUSTER_RULES)[number]['id'];

/** What rule `rule` found at `path`: the message ends with `(rule <id>)`, once. */
export function found(rule: RuleId, path: string, message: string): Found {
  return { path, message: withRuleId(message, rule), rule };
}

/**
 * A zod issue of the named rule `rule` (a refinement of a schema): its message ends with `(rule <id>)`, and
 * issueToProblems (validate.ts) gives the problem the id.
 */
export function ruleIssue(rule: RuleId, message: string) {
  return { code: 'custom' as const, message: withRuleId(message, rule), params: { rule } };
}
