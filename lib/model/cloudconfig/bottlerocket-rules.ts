import * as net from 'node:net';
import { parse as parseToml } from 'smol-toml';
import {
  BottlerocketKind,
  EVICTION_SIGNALS,
  REQUIRED_KUBERNETES_SETTINGS,
  RESERVED_RESOURCES,
  SETTINGS_TABLES,
  TAINT_EFFECTS,
} from './bottlerocket-settings';

/**
 * The stored Bottlerocket settings, checked before anything reaches AWS: parsed with a maintained TOML parser
 * (smol-toml, TOML 1.0), every key against the settings reference's table (bottlerocket-settings.ts) with its type, the
 * settings an aws-k8s-* node needs to join, and the CloudFormation signal's names. Each rule is a named unit: id,
 * check. None has a CEL twin: they read the rendered TOML, which the API server never sees.
 */
export interface BottlerocketFinding {
  /** The rule's id. */
  readonly rule: string;
  /** Path in the TOML, e.g. `settings.kubernetes.max-pods`. */
  readonly path: string;
  readonly message: string;
}

type Table = Record<string, unknown>;
interface BottlerocketRule {
  readonly id: string;
  readonly check: (doc: Table) => Array<{ path: string; message: string }>;
}

const REFERENCE = 'https://bottlerocket.dev/en/os/latest/api/settings/';
const isTable = (v: unknown): v is Table => !!v && typeof v === 'object' && !Array.isArray(v) && !isDate(v);
const isDate = (v: unknown) => v instanceof Date;
const table = (v: unknown): Table => (isTable(v) ? v : {});
const isInt = (v: unknown): v is bigint => typeof v === 'bigint';

/** What a TOML value is, in the words of the TOML spec. */
function kindOf(v: unknown): string {
  if (typeof v === 'bigint') return 'an integer';
  if (typeof v === 'number') return 'a float';
  if (typeof v === 'string') return 'a string';
  if (typeof v === 'boolean') return 'a boolean';
  if (Array.isArray(v)) return 'an array';
  if (isDate(v)) return 'a date-time';
  return 'a table';
}

const shown = (v: unknown) => (typeof v === 'bigint' ? v.toString() : JSON.stringify(v));
const BASE64 = /^([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const GO_DURATION = /^-?(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$|^0$/;
const QUANTITY = /^[0-9]+(\.[0-9]+)?(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$/;
const PERCENT = /^[0-9]+(\.[0-9]+)?%$/;
/** A Kubernetes label or taint key: an optional DNS prefix and a name of at most 63 characters. */
const LABEL_KEY =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const LABEL_VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;

/** The type problems of one value of `kind` at `at` (nothing when it fits). */
function typeProblems(kind: BottlerocketKind, v: unknown, at: string): Array<{ path: string; message: string }> {
  const bad = (want: string) => [{ path: at, message: `${shown(v)} is ${kindOf(v)}, Bottlerocket wants ${want}` }];
  const mapOf = (
    keys: readonly string[] | RegExp,
    what: string,
    each: (x: unknown, p: string) => Array<{ path: string; message: string }>,
  ) => {
    if (!isTable(v)) return bad(`a table of ${what}`);
    return Object.entries(v).flatMap(([k, x]) => {
      const p = `${at}.${/^[A-Za-z0-9_-]+$/.test(k) ? k : JSON.stringify(k)}`;
      const known = Array.isArray(keys) ? keys.includes(k) : (keys as RegExp).test(k);
      if (!known)
        return [
          {
            path: p,
            message: Array.isArray(keys)
              ? `unknown key ${JSON.stringify(k)}: ${at} takes ${keys.join(', ')}`
              : `${JSON.stringify(k)} is not a Kubernetes label key`,
          },
        ];
      return each(x, p);
    });
  };
  const stringMatching = (re: RegExp, what: string) => (x: unknown, p: string) =>
    typeof x !== 'string'
      ? [{ path: p, message: `${shown(x)} is ${kindOf(x)}, Bottlerocket wants ${what}` }]
      : re.test(x)
        ? []
        : [{ path: p, message: `${JSON.stringify(x)} is not ${what}` }];
  const ip = (x: unknown, p: string) =>
    typeof x === 'string' && net.isIP(x) ? [] : [{ path: p, message: `${shown(x)} is not an IP address` }];
  switch (kind) {
    case 'string':
      return typeof v === 'string' ? [] : bad('a string');
    case 'url':
      if (typeof v !== 'string') return bad('a string (an https:// URL)');
      return /^https:\/\/[^\s/]+(\/\S*)?$/.test(v) ? [] : [{ path: at, message: `${shown(v)} is not an https:// URL` }];
    case 'base64':
      if (typeof v !== 'string') return bad('a base64 string');
      return v !== '' && BASE64.test(v) ? [] : [{ path: at, message: 'is not base64 (Bottlerocket decodes it)' }];
    case 'ip':
      return ip(v, at);
    case 'ip-or-ips':
      return Array.isArray(v) ? v.flatMap((x, i) => ip(x, `${at}[${i}]`)) : ip(v, at);
    case 'unsigned':
      return isInt(v) && v >= 0n ? [] : isInt(v) ? [{ path: at, message: `${v} is below 0` }] : bad('an integer');
    case 'integer':
      return isInt(v) ? [] : bad('an integer');
    case 'percent':
      return isInt(v) && v >= 0n && v <= 100n
        ? []
        : isInt(v)
          ? [{ path: at, message: `${v} is not a percentage (0-100)` }]
          : bad('an integer (0-100)');
    case 'boolean':
      return typeof v === 'boolean' ? [] : bad('true or false');
    case 'duration':
      return stringMatching(GO_DURATION, 'a duration (Go syntax, such as 30s or 1m30s)')(v, at);
    case 'quantity':
      return stringMatching(QUANTITY, 'a Kubernetes quantity (such as 100Mi or 500m)')(v, at);
    case 'strings':
      return Array.isArray(v) && v.every((x) => typeof x === 'string') ? [] : bad('an array of strings');
    case 'labels':
      return mapOf(LABEL_KEY, 'label keys to values', stringMatching(LABEL_VALUE, 'a Kubernetes label value'));
    case 'taints': {
      const taint = stringMatching(
        new RegExp(`^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?:(${TAINT_EFFECTS.join('|')})$`),
        `a taint "value:Effect" (effect ${TAINT_EFFECTS.join(', ')})`,
      );
      return mapOf(LABEL_KEY, 'taint keys to "value:Effect" lists', (x, p) =>
        Array.isArray(x) ? x.flatMap((t, i) => taint(t, `${p}[${i}]`)) : taint(x, p),
      );
    }
    case 'reserved':
      return mapOf(
        RESERVED_RESOURCES,
        'resources to quantities',
        stringMatching(QUANTITY, 'a Kubernetes quantity (such as 100Mi or 500m)'),
      );
    case 'eviction':
      return mapOf(EVICTION_SIGNALS, 'eviction signals to thresholds', (x, p) =>
        typeof x === 'string' && (QUANTITY.test(x) || PERCENT.test(x))
          ? []
          : [
              {
                path: p,
                message: `${shown(x)} is not a threshold (a quantity such as 100Mi, or a percentage such as 10%)`,
              },
            ],
      );
    case 'eviction-durations':
      return mapOf(
        EVICTION_SIGNALS,
        'eviction signals to durations',
        stringMatching(GO_DURATION, 'a duration (Go syntax, such as 30s or 1m30s)'),
      );
    case 'table':
      return isTable(v) ? [] : bad('a table');
  }
}

/** Every rule, in the order findings are reported. */
export const BOTTLEROCKET_RULES: readonly BottlerocketRule[] = [
  {
    // An unknown key is a typo or a setting of another Bottlerocket: refused, never written to a node.
    id: 'bottlerocket/known-settings',
    check: (doc) => {
      const out: Array<{ path: string; message: string }> = [];
      for (const k of Object.keys(doc))
        if (k !== 'settings') out.push({ path: k, message: 'unknown key: Bottlerocket user data holds settings only' });
      for (const [name, v] of Object.entries(table(doc.settings))) {
        const known = Object.hasOwn(SETTINGS_TABLES, name) ? SETTINGS_TABLES[name] : undefined;
        if (!known) {
          out.push({
            path: `settings.${name}`,
            message: `unknown or unsupported settings table: an eks-bottlerocket config writes ${Object.keys(
              SETTINGS_TABLES,
            )
              .map((t) => `settings.${t}`)
              .join(' and ')} (${REFERENCE})`,
          });
          continue;
        }
        if (!isTable(v)) continue; // setting-types says so
        for (const key of Object.keys(v))
          if (!Object.hasOwn(known, key))
            out.push({
              path: `settings.${name}.${key}`,
              message: `unknown setting: the Bottlerocket settings reference has no settings.${name}.${key} (${REFERENCE}${name}/)`,
            });
      }
      return out;
    },
  },
  {
    id: 'bottlerocket/setting-types',
    check: (doc) => {
      const out: Array<{ path: string; message: string }> = [];
      if (doc.settings !== undefined && !isTable(doc.settings))
        return [{ path: 'settings', message: `is ${kindOf(doc.settings)}, Bottlerocket wants a table` }];
      for (const [name, v] of Object.entries(table(doc.settings))) {
        const known = Object.hasOwn(SETTINGS_TABLES, name) ? SETTINGS_TABLES[name] : undefined;
        if (!known) continue;
        if (!isTable(v)) {
          out.push({ path: `settings.${name}`, message: `is ${kindOf(v)}, Bottlerocket wants a table` });
          continue;
        }
        for (const [key, x] of Object.entries(v))
          if (Object.hasOwn(known, key)) out.push(...typeProblems(known[key], x, `settings.${name}.${key}`));
      }
      return out;
    },
  },
  {
    id: 'bottlerocket/eks-join',
    check: (doc) => {
      const k8s = table(table(doc.settings).kubernetes);
      return REQUIRED_KUBERNETES_SETTINGS.filter((key) => k8s[key] === undefined || k8s[key] === '').map((key) => ({
        path: `settings.kubernetes.${key}`,
        message: 'is required: an aws-k8s-* node cannot join its EKS cluster without it',
      }));
    },
  },
  {
    id: 'bottlerocket/cloudformation-signal',
    check: (doc) => {
      const cf = table(table(doc.settings).cloudformation);
      if (cf['should-signal'] !== true) return [];
      return ['stack-name', 'logical-resource-id']
        .filter((key) => typeof cf[key] !== 'string' || cf[key] === '')
        .map((key) => ({ path: `settings.cloudformation.${key}`, message: 'is required when should-signal is true' }));
    },
  },
];

/** The TOML document, integers as bigint (so an integer and a float stay apart), or the parser's error. */
export function parseBottlerocketToml(text: string): Table {
  return parseToml(text, { integersAsBigInt: true });
}

/** Every finding of every rule on stored Bottlerocket settings. */
export function checkBottlerocket(text: string): BottlerocketFinding[] {
  let doc: Table;
  try {
    doc = parseBottlerocketToml(text);
  } catch (e) {
    return [{ rule: 'bottlerocket/toml', path: '', message: `is not TOML: ${(e as Error).message.split('\n')[0]}` }];
  }
  return BOTTLEROCKET_RULES.flatMap((r) => r.check(doc).map((f) => ({ rule: r.id, ...f })));
}
