/**
 * JSON as parsed (a template, a YAML object before validation, an API answer): nothing in it is typed until it is
 * checked, so it is read through `asRecord` one level at a time. A value of another shape reads as an empty object,
 * as a missing one does: what cannot be read is what is not there.
 */
export type JsonObject = Readonly<Record<string, unknown>>;

/** Whether `v` is a JSON object (not null, not an array). */
export function isRecord(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `v` when it is a JSON object, else an empty object. */
export function asRecord(v: unknown): JsonObject {
  return isRecord(v) ? v : {};
}
