// aws-cdk-lib's built-in template validation costs ~1.7 s and ~350 MB per synth; cfn-lint covers the same
// ground in test/stacks/cfn-lint.test.ts, and the `cdk synth` CLI test runs with it on.
process.env.CDK_VALIDATION = process.env.CDK_VALIDATION ?? 'false';
