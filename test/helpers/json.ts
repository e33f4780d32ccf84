/**
 * Untyped JSON that a test reads or edits on purpose: a raw cluster object it breaks field by field (with values of
 * the wrong type, which is the point), a synthesized template, an API server's answer, moto's. `any` is written here
 * once, with its reason, and tests and benchmarks name this type instead.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests write wrong-typed values into raw objects and read templates freely (eslint.config.mjs: tests may read untyped JSON)
export type Json = any;
