/**
 * `['spec','listeners',2,'port']` → `spec.listeners[2].port`. A map key that is not a plain
 * identifier (a label key such as `node.kubernetes.io/pool`) is quoted in brackets, so the
 * path stays unambiguous: `spec.cloudConfig.values.nodeLabels["node.kubernetes.io/pool"]`.
 */
export function formatPath(segments: readonly PropertyKey[]): string {
  return segments
    .map((s, i) => {
      if (typeof s === 'number') return `[${s}]`;
      const k = String(s);
      if (!/^[A-Za-z_$][\w$]*$/.test(k)) return `[${JSON.stringify(k)}]`;
      return i === 0 ? k : `.${k}`;
    })
    .join('');
}
