/** Walks over the JSON schemas of the CRD tests (test/platform/kube/crd.test.ts, policy-crd.test.ts). */

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON schemas are read freely
export type Json = Record<string, any>;

/** Every property path of a JSON schema: `spec.listeners[].port`, `spec.tags{}`. */
export function fieldPaths(s: Json, at = '', out: string[] = []): string[] {
  if (s.properties) {
    for (const [k, v] of Object.entries<Json>(s.properties)) {
      out.push(`${at}${at ? '.' : ''}${k}`);
      fieldPaths(v, `${at}${at ? '.' : ''}${k}`, out);
    }
  }
  if (s.items) fieldPaths(s.items, `${at}[]`, out);
  // A catchall (the template's own values): additionalProperties {} in JSON Schema, x-kubernetes-preserve-unknown-fields in the CRD.
  if (s['x-kubernetes-preserve-unknown-fields'] && s.properties) out.push(`${at}{}`);
  if (s.additionalProperties && typeof s.additionalProperties === 'object') {
    out.push(`${at}{}`);
    fieldPaths(s.additionalProperties, `${at}{}`, out);
  }
  return out;
}

/** Every schema node with its path. */
export function nodes(s: Json, at = '<root>', out: Array<[string, Json]> = []): Array<[string, Json]> {
  out.push([at, s]);
  for (const [k, v] of Object.entries<Json>(s.properties ?? {})) nodes(v, `${at}.${k}`, out);
  if (s.items) nodes(s.items, `${at}[]`, out);
  if (s.additionalProperties && typeof s.additionalProperties === 'object')
    nodes(s.additionalProperties, `${at}{}`, out);
  return out;
}
