/**
 * The synthesis engine's front door: what the CLI uses of it (the synthesis pool, the checks, bootstrap's synthesis).
 */
export { KeptSyntheses } from './kept-syntheses';
export { SynthPool } from './synth-pool';
export { synthesisProblems } from './synthesis-check';
export { synthesizeBootstrap } from './synthesize';
