import * as net from 'node:net';
import { parse as parseToml } from 'smol-toml';
import { parse as parseYaml } from 'yaml';
import { cidrRange, ipToBigInt } from '../cluster/network/address-space';
import { KUBELET_CONFIG_FIELDS, KubeletFieldKind } from './kubelet-config-fields';
import { GO_DURATION, kubeletMapProblems } from './kubelet-config-maps';

/**
 * The rendered NodeConfig, checked stricter than nodeadm checks it: a port of nodeadm's own validation
 * (internal/api/validation.go of v0.0.0-20240229193347-cfab22a10647), strict decoding against its API types
 * (api/v1alpha1/nodeconfig_types.go: nodeadm's decoder drops an unknown field without a word), the kubelet settings
 * against KubeletConfiguration v1beta1, and the service range. Each rule is a named unit: id, message, check. None has
 * a CEL twin: they read the rendered NodeConfig, which the API server never sees (the object's own fields keep their
 * CEL rules in the CRD).
 */
export interface NodeConfigFinding {
  /** The rule's id (`nodeadm/...` for a port of nodeadm's own check). */
  readonly rule: string;
  /** Path in the NodeConfig, e.g. `spec.kubelet.config.shutdownGracePeriod`. */
  readonly path: string;
  readonly message: string;
}

type Doc = Record<string, unknown>;
interface NodeConfigRule {
  readonly id: string;
  readonly check: (doc: Doc) => Array<{ path: string; message: string }>;
}

const obj = (v: unknown): Doc => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Doc) : {});
const cluster = (doc: Doc) => obj(obj(doc.spec).cluster);

/** nodeadm's ValidateNodeConfig: a required cluster field, with nodeadm's own message. */
const required = (id: string, field: string, said: string): NodeConfigRule => ({
  id,
  check: (doc) => {
    const v = cluster(doc)[field];
    // nodeadm tests name, endpoint and cidr against "" and the CA against nil (an empty CA passes it; not here).
    return v === undefined || v === '' || v === null
      ? [{ path: `spec.cluster.${field}`, message: `${said} (nodeadm's own check)` }]
      : [];
  },
});

/** The fields of NodeConfig v1alpha1, as its Go types declare them (json names; leaves are their JSON kinds). */
type Shape = 'string' | 'boolean' | 'base64' | 'strings' | 'kubelet-config' | { readonly [k: string]: Shape };
const NODECONFIG: Shape = {
  apiVersion: 'string',
  kind: 'string',
  metadata: { name: 'string' },
  spec: {
    cluster: {
      name: 'string',
      apiServerEndpoint: 'string',
      certificateAuthority: 'base64',
      cidr: 'string',
      enableOutpost: 'boolean',
      id: 'string',
    },
    containerd: { config: 'string' },
    instance: { localStorage: { strategy: 'string' } },
    kubelet: { config: 'kubelet-config', flags: 'strings' },
  },
};

const BASE64 = /^([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function strict(v: unknown, shape: Shape, at: string, out: Array<{ path: string; message: string }>): void {
  const kind = (x: unknown) => (Array.isArray(x) ? 'a list' : x === null ? 'null' : `a ${typeof x}`);
  if (typeof shape === 'object') {
    if (!v || typeof v !== 'object' || Array.isArray(v)) {
      out.push({ path: at, message: `is ${kind(v)}, NodeConfig wants an object` });
      return;
    }
    for (const [k, x] of Object.entries(v)) {
      const p = at ? `${at}.${k}` : k;
      if (!Object.hasOwn(shape, k))
        out.push({
          path: p,
          message: `unknown field: NodeConfig v1alpha1 has none (${Object.keys(shape).join(', ')})`,
        });
      else strict(x, shape[k], p, out);
    }
    return;
  }
  const bad = (want: string) => out.push({ path: at, message: `is ${kind(v)}, NodeConfig wants ${want}` });
  switch (shape) {
    case 'string':
      if (typeof v !== 'string') bad('a string');
      break;
    case 'boolean':
      if (typeof v !== 'boolean') bad('true or false');
      break;
    case 'base64':
      if (typeof v !== 'string') bad('a base64 string');
      else if (!BASE64.test(v)) out.push({ path: at, message: 'is not base64 (nodeadm decodes it as []byte)' });
      break;
    case 'strings':
      if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) bad('a list of strings');
      break;
    case 'kubelet-config':
      if (!v || typeof v !== 'object' || Array.isArray(v)) bad('a map of KubeletConfiguration fields');
      else for (const [k, x] of Object.entries(v)) kubeletField(k, x, `${at}.${k}`, out);
      break;
  }
}

function kubeletField(key: string, v: unknown, at: string, out: Array<{ path: string; message: string }>): void {
  // Own keys only: `constructor` or `toString` are no kubelet fields.
  const kind: KubeletFieldKind | undefined = Object.hasOwn(KUBELET_CONFIG_FIELDS, key)
    ? KUBELET_CONFIG_FIELDS[key]
    : undefined;
  if (!kind) {
    out.push({
      path: at,
      message: `unknown KubeletConfiguration field ${key} (kubelet.config.k8s.io/v1beta1 of k8s.io/kubelet v0.29.1, which this nodeadm merges into): nodeadm would drop it without a word`,
    });
    return;
  }
  const ok =
    kind === 'string'
      ? typeof v === 'string'
      : kind === 'duration'
        ? typeof v === 'string' && GO_DURATION.test(v)
        : kind === 'integer'
          ? typeof v === 'number' && Number.isInteger(v)
          : kind === 'number'
            ? typeof v === 'number'
            : kind === 'boolean'
              ? typeof v === 'boolean'
              : kind === 'strings'
                ? Array.isArray(v) && v.every((x) => typeof x === 'string')
                : kind === 'object'
                  ? typeof v === 'object' && v !== null
                  : typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!ok)
    out.push({
      path: at,
      message: `${JSON.stringify(v)} is not ${KIND_SAYS[kind]}, which KubeletConfiguration's ${key} is`,
    });
  else if (kind === 'string-map' || kind === 'boolean-map')
    out.push(...kubeletMapProblems(key, kind === 'boolean-map', v as Record<string, unknown>, at));
}

const KIND_SAYS: Readonly<Record<KubeletFieldKind, string>> = {
  string: 'a string',
  duration: 'a duration (Go syntax, such as 30s or 1m30s)',
  integer: 'an integer',
  number: 'a number',
  boolean: 'a boolean',
  strings: 'a list of strings',
  'string-map': 'a map of strings',
  'boolean-map': 'a map of booleans',
  object: 'an object',
};

/** Every rule, in the order findings are reported. */
export const NODECONFIG_RULES: readonly NodeConfigRule[] = [
  required('nodeadm/cluster-name', 'name', 'Name is missing in cluster configuration'),
  required('nodeadm/cluster-endpoint', 'apiServerEndpoint', 'Apiserver endpoint is missing in cluster configuration'),
  required('nodeadm/cluster-ca', 'certificateAuthority', 'Certificate authority is missing in cluster configuration'),
  required('nodeadm/cluster-cidr', 'cidr', 'CIDR is missing in cluster configuration'),
  {
    // nodeadm requires id on an Outpost; that version's message says "CIDR is missing" there (a copy-paste slip).
    id: 'nodeadm/outpost-id',
    check: (doc) =>
      cluster(doc).enableOutpost === true && !cluster(doc).id
        ? [{ path: 'spec.cluster.id', message: "is required when enableOutpost is true (nodeadm's own check)" }]
        : [],
  },
  {
    id: 'nodeconfig/strict-fields',
    check: (doc) => {
      const out: Array<{ path: string; message: string }> = [];
      strict(doc, NODECONFIG, '', out);
      return out;
    },
  },
  {
    // nodeadm writes containerd.config as a file the AMI's containerd config imports: containerd refuses to start on
    // TOML it cannot parse, and the node never joins. nodeadm takes any string; this is stricter.
    id: 'nodeconfig/containerd-toml',
    check: (doc) => {
      const config = obj(obj(doc.spec).containerd).config;
      if (typeof config !== 'string') return [];
      try {
        parseToml(config);
        return [];
      } catch (e) {
        return [{ path: 'spec.containerd.config', message: `is not TOML: ${(e as Error).message.split('\n')[0]}` }];
      }
    },
  },
  {
    // nodeadm derives the cluster DNS address from cidr (its .10); a clusterDNS outside the range is not the service
    // range's DNS Service, and a cidr that is the pod or VPC range gives a DNS address nothing answers on.
    id: 'nodeconfig/cluster-dns-in-service-cidr',
    check: (doc) => {
      const cidr = cluster(doc).cidr;
      const dns = obj(obj(obj(doc.spec).kubelet).config).clusterDNS;
      if (typeof cidr !== 'string' || !Array.isArray(dns)) return [];
      const range = cidrRange(cidr);
      if (!range) return [{ path: 'spec.cluster.cidr', message: `${JSON.stringify(cidr)} is not an IPv4 CIDR` }];
      return dns.flatMap((ip, i) => {
        const n = typeof ip === 'string' && net.isIPv4(ip) ? ipToBigInt(ip) : undefined;
        return n !== undefined && n >= range.first && n <= range.last
          ? []
          : [
              {
                path: `spec.kubelet.config.clusterDNS[${i}]`,
                message: `${JSON.stringify(ip)} is not in the service range ${cidr} (spec.cluster.cidr): cidr is the cluster's service CIDR, and the DNS Service has an address in it`,
              },
            ];
      });
    },
  },
];

/** Every finding of every rule on a stored NodeConfig's bytes. */
export function checkNodeConfig(text: string): NodeConfigFinding[] {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (e) {
    return [{ rule: 'nodeconfig/yaml', path: '', message: `is not YAML: ${(e as Error).message}` }];
  }
  return NODECONFIG_RULES.flatMap((r) => r.check(obj(doc)).map((f) => ({ rule: r.id, ...f })));
}
