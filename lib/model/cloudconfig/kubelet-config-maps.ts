/**
 * The keys and values of the KubeletConfiguration maps a platform engineer sets on EKS nodes, checked before any node
 * boots: the kubelet decodes any key and string into these maps and refuses an unknown signal or resource only when it
 * starts, on the node, which then never joins (and nodeadm's `config check` does not start it). Sources, at Kubernetes 1.29
 * (the k8s.io/kubelet v0.29.1 nodeadm pins): the eviction signals of k8s.io/kubernetes pkg/kubelet/eviction/api/types.go
 * (without allocatableMemory.available, which the kubelet derives itself and no threshold may name), and the
 * resources cmd/kubelet/app/server.go's parseResourceList takes for kubeReserved and systemReserved.
 */

/** The eviction signals a threshold may name (evictionHard, evictionSoft, evictionSoftGracePeriod, evictionMinimumReclaim). */
export const KUBELET_EVICTION_SIGNALS = [
  'memory.available',
  'nodefs.available',
  'nodefs.inodesFree',
  'imagefs.available',
  'imagefs.inodesFree',
  'containerfs.available',
  'containerfs.inodesFree',
  'pid.available',
] as const;

/** The resources kubeReserved and systemReserved take. */
export const KUBELET_RESERVED_RESOURCES = ['cpu', 'memory', 'ephemeral-storage', 'pid'] as const;

/** A metav1.Duration as Go's time.ParseDuration reads it. */
export const GO_DURATION = /^-?(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$|^0$/;
/** A resource.Quantity (the forms a node setting uses: decimal and binary SI suffixes, no exponent). */
export const QUANTITY = /^[0-9]+(\.[0-9]+)?(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$/;
const PERCENT = /^[0-9]+(\.[0-9]+)?%$/;

const THRESHOLD = {
  test: (v: string) => QUANTITY.test(v) || PERCENT.test(v),
  says: 'a threshold (a quantity such as 100Mi, or a percentage such as 10%)',
};

/** The keys a map field may have and what each value must be; a string-map field not listed takes any key and string. */
const MAP_RULES: Readonly<
  Record<string, { keys: readonly string[]; keysAre: string; value: { test(v: string): boolean; says: string } }>
> = {
  evictionHard: { keys: KUBELET_EVICTION_SIGNALS, keysAre: 'an eviction signal', value: THRESHOLD },
  evictionSoft: { keys: KUBELET_EVICTION_SIGNALS, keysAre: 'an eviction signal', value: THRESHOLD },
  evictionMinimumReclaim: { keys: KUBELET_EVICTION_SIGNALS, keysAre: 'an eviction signal', value: THRESHOLD },
  evictionSoftGracePeriod: {
    keys: KUBELET_EVICTION_SIGNALS,
    keysAre: 'an eviction signal',
    value: { test: (v) => GO_DURATION.test(v), says: 'a duration (Go syntax, such as 30s or 1m30s)' },
  },
  kubeReserved: {
    keys: KUBELET_RESERVED_RESOURCES,
    keysAre: 'a resource the kubelet reserves',
    value: { test: (v) => QUANTITY.test(v), says: 'a Kubernetes quantity (such as 100Mi or 500m)' },
  },
  systemReserved: {
    keys: KUBELET_RESERVED_RESOURCES,
    keysAre: 'a resource the kubelet reserves',
    value: { test: (v) => QUANTITY.test(v), says: 'a Kubernetes quantity (such as 100Mi or 500m)' },
  },
};

/** `a.b` for a bare key, `a["memory.available"]` otherwise: the form validate's paths use. */
export const keyPath = (at: string, key: string) =>
  /^[A-Za-z_$][\w$]*$/.test(key) ? `${at}.${key}` : `${at}[${JSON.stringify(key)}]`;

/**
 * The problems of the map `field` (its kind string-map or boolean-map, already known to be an object) at `at`: each
 * value's JSON type, and for the maps of MAP_RULES each key and value.
 */
export function kubeletMapProblems(
  field: string,
  booleans: boolean,
  map: Record<string, unknown>,
  at: string,
): Array<{ path: string; message: string }> {
  const rule = Object.hasOwn(MAP_RULES, field) ? MAP_RULES[field] : undefined;
  return Object.entries(map).flatMap(([k, v]) => {
    const p = keyPath(at, k);
    if (booleans)
      return typeof v === 'boolean'
        ? []
        : [{ path: p, message: `${JSON.stringify(v)} is not true or false, which ${field}'s values are` }];
    if (typeof v !== 'string')
      return [
        {
          path: p,
          message: `${JSON.stringify(v)} is not a string, which ${field}'s values are (map[string]string${typeof v === 'number' ? ': quote it' : ''})`,
        },
      ];
    if (rule && !rule.keys.includes(k))
      return [
        {
          path: p,
          message: `${JSON.stringify(k)} is not ${rule.keysAre}: ${field} takes ${rule.keys.join(', ')} (the kubelet of Kubernetes 1.29 refuses any other when it starts, and the node never joins)`,
        },
      ];
    if (rule && !rule.value.test(v))
      return [{ path: p, message: `${JSON.stringify(v)} is not ${rule.value.says}, which ${field}'s values are` }];
    return [];
  });
}
