/**
 * The review engine's front door: what `worker-stacks review` and the status rows use of it.
 */
export { reviewAgainstAssembly } from './assembly-review';
export { formatJson } from './format-json';
export { DEFAULT_MAX_BYTES, MIN_MAX_BYTES, formatMarkdown } from './format-markdown';
export { formatTerminal } from './format-terminal';
export { type ReviewResult } from './model';
export { type FailOn, review, reviewExitCode } from './review';
export { describeRollout, specRollout } from './rollout-words';
export { type InputOverrides } from './synth-revision';
