import { z } from 'zod';
import { cel, fmt, OpenApiRule, openApiRules, quoted } from './openapi';

/**
 * Reusable field rules. Each one reports the offending value and the rule in
 * words, because these messages are what an operator reads in a failed PR check.
 */

/** `openapi`: the same rule as the CRD states it (lib/model/cluster/schema/openapi.ts), so the API server refuses what this refuses. */
export function custom<T extends z.ZodType>(
  base: T,
  check: (v: z.output<T>) => string | undefined,
  openapi?: OpenApiRule,
): T {
  const refined = base.superRefine((v, ctx) => {
    const problem = check(v);
    if (problem) ctx.addIssue({ code: 'custom', message: problem, input: v });
  });
  if (openapi) openApiRules.add(refined, openapi);
  return refined;
}

const intRule = (min: number, max: number, message: string): OpenApiRule => ({
  type: 'integer',
  cel: [cel(`self >= ${min} && self <= ${max}`, fmt(message, 'self'))],
});

export const port = (what = 'port') =>
  custom(
    z.number(),
    (v) => (Number.isInteger(v) && v >= 1 && v <= 65535 ? undefined : `${v} is not a ${what} (1-65535)`),
    intRule(1, 65535, `%d is not a ${what} (1-65535)`),
  );

export const intIn = (min: number, max: number, what: string) =>
  custom(
    z.number(),
    (v) =>
      Number.isInteger(v) && v >= min && v <= max
        ? undefined
        : `${v} is not a valid ${what} (a whole number ${min}-${max})`,
    intRule(min, max, `%d is not a valid ${what} (a whole number ${min}-${max})`),
  );

/** `maxLength` bounds the CRD's CEL cost estimate; it is well above any value the pattern takes. */
export const pattern = (re: RegExp, what: string, maxLength = 256) =>
  custom(z.string(), (v) => (re.test(v) ? undefined : `${JSON.stringify(v)} is not ${what}`), {
    maxLength,
    cel: [cel(`self.matches(${quoted(re.source)})`, `'"' + self + ${quoted(`" is not ${what}`)}`)],
  });

/**
 * The CEL twin of tokens.ts, for the fields whose characters could spell a CDK token marker (`$`, `#`, `{`, `[`, or the
 * stringified number `-1.<digits>e+289`); every other string field's pattern already excludes them. validate walks
 * the whole object instead (tokens.ts), map keys and template values included.
 */
export const NO_TOKEN_CEL = cel(
  `!self.matches(${quoted(/[$#]\{Token\[|-1\.[0-9]{10,16}e\+289/.source)})`,
  quoted(
    'has a CDK token marker (${Token[, #{Token[ or -1.<digits>e+289); synthesis would resolve it into a CloudFormation expression (or fail without naming this file); write the literal value',
  ),
);

/** `schema` (a rule of this file), with NO_TOKEN_CEL added to what the CRD says of it. */
export function noTokens<T extends z.ZodType>(schema: T): T {
  const rule = openApiRules.get(schema) ?? {};
  openApiRules.add(schema, { ...rule, cel: [...(rule.cel ?? []), NO_TOKEN_CEL] });
  return schema;
}

/** RFC 1123 DNS label: it becomes part of a stack name, S3 keys and resource names. */
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_LABEL_RULE = `is not a DNS label (lower-case letters, digits and '-', starting and ending with a letter or digit, at most 40 characters)`;
export const dnsLabel = custom(
  z.string(),
  (v) => (DNS_LABEL.test(v) && v.length <= 40 ? undefined : `${JSON.stringify(v)} ${DNS_LABEL_RULE}`),
  {
    maxLength: 63,
    cel: [
      cel(
        `self.matches(${quoted(DNS_LABEL.source)}) && size(self) <= 40`,
        `'"' + self + ${quoted(`" ${DNS_LABEL_RULE}`)}`,
      ),
    ],
  },
);

/** ISO 8601 duration as CloudFormation's PauseTime takes it, at most one hour. */
const PAUSE_TIME = /^PT(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?$/;
const PAUSE_TIME_OK = `self != 'PT' && self.matches(${quoted(PAUSE_TIME.source)})`;
export const pauseTime = custom(
  z.string(),
  (v) => {
    const m = PAUSE_TIME.exec(v);
    if (!m || v === 'PT') return `${JSON.stringify(v)} is not an ISO 8601 duration such as PT5M or PT1M30S`;
    const seconds = Number(m.at(1) ?? 0) * 3600 + Number(m.at(2) ?? 0) * 60 + Number(m.at(3) ?? 0);
    return seconds > 3600 ? `${v} is longer than CloudFormation's maximum pause time (PT1H)` : undefined;
  },
  {
    maxLength: 24,
    cel: [
      cel(PAUSE_TIME_OK, `'"' + self + '" is not an ISO 8601 duration such as PT5M or PT1M30S'`),
      // PT1H30M -> CEL's duration('1h30m'): the same arithmetic as above.
      cel(
        `!(${PAUSE_TIME_OK}) || duration(self.substring(2).lowerAscii()) <= duration('1h')`,
        `self + " is longer than CloudFormation's maximum pause time (PT1H)"`,
      ),
    ],
  },
);

export const awsId = (prefix: string, what: string) =>
  pattern(
    new RegExp(`^${prefix}-([0-9a-f]{8}|[0-9a-f]{17})$`),
    `${what} id (${prefix}- followed by 8 or 17 hex digits)`,
    64,
  );

/** The characters EC2 takes in a security-group rule description (the API refuses anything else at deploy time). */
const EC2_DESCRIPTION = /^[a-zA-Z0-9. _\-:/()#,@[\]+=&;{}!$*]*$/;

/** The characters of `v` outside `allowed`, each once, shown so that an invisible or look-alike one is still seen. */
export function badCharacters(v: string, allowed: RegExp): string {
  // eslint-disable-next-line @typescript-eslint/no-misused-spread -- code points are meant: each is shown as U+XXXX, and a combining mark alone is what is refused
  const bad = [...new Set([...v].filter((c) => !allowed.test(c)))];
  return bad
    .map((c) =>
      /^[\x21-\x7e]$/.test(c)
        ? JSON.stringify(c)
        : `U+${(c.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`,
    )
    .join(', ');
}

/** A security-group rule description as EC2 takes it: 1-255 characters of a-zA-Z0-9, space and `._-:/()#,@[]+=&;{}!$*`. */
export const ec2Description = custom(
  z.string(),
  (v) => {
    if (v.length === 0) return `"" has 0 characters, at least 1 required`;
    if (!EC2_DESCRIPTION.test(v)) {
      return `has characters EC2 refuses in a rule description: ${badCharacters(v, /^[a-zA-Z0-9. _\-:/()#,@[\]+=&;{}!$*]$/)} (allowed: letters, digits, space and ._-:/()#,@[]+=&;{}!$*)`;
    }
    return v.length > 255
      ? `has ${v.length} characters, at most 255 allowed (EC2's limit for a rule description)`
      : undefined;
  },
  {
    maxLength: 1024,
    cel: [
      cel('size(self) >= 1', `'"" has 0 characters, at least 1 required'`),
      cel(
        `self.matches(${quoted(EC2_DESCRIPTION.source)})`,
        `'has characters EC2 refuses in a rule description (allowed: letters, digits, space and ._-:/()#,@[]+=&;{}!$*)'`,
      ),
      cel(
        'size(self) <= 255',
        fmt("has %d characters, at most 255 allowed (EC2's limit for a rule description)", 'size(self)'),
      ),
      NO_TOKEN_CEL,
    ],
  },
);

// Host names in either case: DNS and TLS compare them case-insensitively, and EKS's DescribeCluster gives its
// endpoint's host in upper case. The path takes the URL characters that mean nothing in any file a URL is written into on the node (TOML's "...",
// a shell's '...', YAML, a systemd directive): no quote, backslash, $, backtick, space or control character.
const HTTPS_URL =
  // eslint-disable-next-line no-useless-escape -- the source is also the CEL pattern of the published CRD (deploy/crd.yaml, the chart); kept byte for byte
  /^https:\/\/([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*)(:(\d{1,5}))?(\/[A-Za-z0-9._~%\/:+=,-]*)?$/;
const HTTPS_HOST =
  /^https:\/\/([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*)(:(\d{1,5}))?$/;
const USER_INFO = `has user info (credentials before "@") in the URL; credentials never go in a cluster object, which is not a secret (give the URL without them; the node gets registry credentials from its own configuration)`;

function httpsUrlRule(what: string, withPath: boolean): OpenApiRule {
  const shape = `self.matches(${quoted((withPath ? HTTPS_URL : HTTPS_HOST).source)})`;
  // The port as written (https://host:<port>...); a host has no ':', so the first ':' after the scheme starts it.
  const port = `int(self.find('^https://[^/:]+:[0-9]+').split(':')[2])`;
  return {
    maxLength: 2048,
    cel: [
      cel(`!self.contains('@')`, quoted(USER_INFO)),
      cel(`self.contains('@') || ${shape}`, `'"' + self + ${quoted(`" is not ${what}`)}`),
      NO_TOKEN_CEL,
      cel(
        `!(${shape}) || self.find('^https://[^/:]+:[0-9]+') == '' || (${port} >= 1 && ${port} <= 65535)`,
        `'"' + self + '" has port ' + self.find('^https://[^/:]+:[0-9]+').split(':')[2] + ', which is not a port (1-65535)'`,
      ),
    ],
  };
}

/**
 * An https:// URL of a host, an optional port 1-65535 and, when `withPath`, a path. A URL with user info
 * (`user:password@`) is refused as what it is, and never echoed: the part before `@` is a credential, and
 * messages end up in PR checks, logs and the cluster object's status.
 */
export const httpsUrl = (what: string, withPath: boolean) =>
  custom(
    z.string(),
    (v) => {
      if (v.includes('@')) return USER_INFO;
      const m = HTTPS_URL.exec(v);
      if (!m || (m.at(7) !== undefined && !withPath)) return `${JSON.stringify(v)} is not ${what}`;
      const p = m.at(6) === undefined ? undefined : Number(m[6]);
      if (p !== undefined && (p < 1 || p > 65535))
        return `${JSON.stringify(v)} has port ${m[6]}, which is not a port (1-65535)`;
      return undefined;
    },
    httpsUrlRule(what, withPath),
  );
