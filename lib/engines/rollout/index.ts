/**
 * The rollout engine's front door: what the CLI and the stores use of it (policies, the coordinator, the report).
 */
export { RolloutCoordinator } from './coordinator';
export { type PolicyEvent, type PolicyRef } from './policy-events';
export { policyOverlapProblems } from './policy-overlap';
export {
  FilePolicySource,
  type LoadedPolicies,
  type LoadedPolicy,
  type PolicyProblem,
  type RolloutPolicySource,
  validatePolicy,
} from './policy-source';
export { formatRolloutReport, recordedStack, rolloutReport } from './report';
