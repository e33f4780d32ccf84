/**
 * A module loaded at its first use instead of at import: `lazyModule(() => require('cdk-nag') as typeof Nag)`.
 *
 * Why: cdk-nag (~160 ms of CPU to load), the EC2, SSM and IAM clients of the AWS SDK (~240, ~100 ms) and the template
 * diff engine (~90 ms) were loaded by every CLI start, every `cdk synth` and every test file that imports the
 * reconciler, though most of those runs (a `validate`, a `crd`, a reconcile with nag off, a test of one task) never
 * call them. The type comes from an `import type` of the module, so callers stay typed.
 */
export function lazyModule<T>(load: () => T): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= load());
}
