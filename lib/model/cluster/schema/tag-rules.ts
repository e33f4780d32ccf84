import { z } from 'zod';
import { cel, fmt, quoted } from './openapi';
import { badCharacters, custom, NO_TOKEN_CEL } from './rules';

// The rules of a tag key and value (spec.tags): what every AWS service takes, and the keys worker-stacks sets itself.

/** Letters, digits and white space in any script, and `_ . : / = + - @`: what every AWS service takes in a tag. */
const TAG_CHARS = /^[\p{L}\p{Z}\p{N}_.:/=+\-@]*$/u;

/**
 * Tag keys that worker-stacks writes itself: a user tag with the same key would fight it (the last one wins,
 * silently) and the reconciler and Kubernetes' AWS integrations read them.
 */
// aws-node-termination-handler/: its queue mode drains only nodes of groups tagged aws-node-termination-handler/managed
// (lib/engines/constructs/node-drain.ts NTH_MANAGED_TAG), which the stack sets; a user tag would override it (spec.tags apply last).
// k8s.io/cluster-autoscaler/: the group's auto-discovery and node-template tags (constructs/autoscaler-tags.ts), which a
// user tag could override to hide a pool from its cluster's autoscaler or hand it to another cluster's.
// IAM and AWS compare tag keys without regard to case (a key differing in case only is the same key to IAM's
// aws:ResourceTag, and refused as a duplicate by some services), so the prefixes are matched without regard to case.
export const RESERVED_TAG_PREFIXES = [
  'worker-stacks.io/',
  'kubernetes.io/cluster/',
  'aws-node-termination-handler/',
  'k8s.io/cluster-autoscaler/',
] as const;

export function tagKeyProblem(k: string): string | undefined {
  // eslint-disable-next-line @typescript-eslint/no-misused-spread -- code points are meant: AWS and CEL's size() count them
  const length = [...k].length;
  if (length < 1 || length > 128) return `tag key ${JSON.stringify(k)} has ${length} characters (AWS takes 1-128)`;
  if (/^aws:/i.test(k)) return `tag key ${JSON.stringify(k)} starts with aws:, which AWS reserves for its own tags`;
  if (!TAG_CHARS.test(k))
    return `tag key ${JSON.stringify(k)} has characters AWS refuses in a tag: ${badCharacters(k, /^[\p{L}\p{Z}\p{N}_.:/=+\-@]$/u)} (allowed: letters, digits, spaces and _.:/=+-@)`;
  const reserved = RESERVED_TAG_PREFIXES.find((p) => k.toLowerCase().startsWith(p));
  return reserved ? `tag key ${JSON.stringify(k)} starts with ${reserved}, which worker-stacks sets itself` : undefined;
}

// CEL's size() counts code points, as [...k].length does.
export const tagKey = custom(z.string(), tagKeyProblem, {
  maxLength: 512,
  cel: [
    cel(
      'size(self) >= 1 && size(self) <= 128',
      fmt('tag key "%s" has %d characters (AWS takes 1-128)', 'self', 'size(self)'),
    ),
    cel(
      `!self.lowerAscii().startsWith('aws:')`,
      `'tag key "' + self + '" starts with aws:, which AWS reserves for its own tags'`,
    ),
    cel(
      `self.matches(${quoted(TAG_CHARS.source)})`,
      `'tag key "' + self + '" has characters AWS refuses in a tag (allowed: letters, digits, spaces and _.:/=+-@)'`,
    ),
    ...RESERVED_TAG_PREFIXES.map((p) =>
      cel(
        `!self.lowerAscii().startsWith(${quoted(p)})`,
        `'tag key "' + self + ${quoted(`" starts with ${p}, which worker-stacks sets itself`)}`,
      ),
    ),
    NO_TOKEN_CEL,
  ],
});

export const tagValue = custom(
  z.string(),
  (v) => {
    // eslint-disable-next-line @typescript-eslint/no-misused-spread -- code points are meant: AWS and CEL's size() count them
    const length = [...v].length;
    if (length > 256) return `has ${length} characters, at most 256 allowed (AWS's limit for a tag value)`;
    return TAG_CHARS.test(v)
      ? undefined
      : `has characters AWS refuses in a tag value: ${badCharacters(v, /^[\p{L}\p{Z}\p{N}_.:/=+\-@]$/u)} (allowed: letters, digits, spaces and _.:/=+-@)`;
  },
  {
    maxLength: 1024,
    cel: [
      cel(
        'size(self) <= 256',
        fmt("has %d characters, at most 256 allowed (AWS's limit for a tag value)", 'size(self)'),
      ),
      cel(
        `self.matches(${quoted(TAG_CHARS.source)})`,
        `'has characters AWS refuses in a tag value (allowed: letters, digits, spaces and _.:/=+-@)'`,
      ),
      NO_TOKEN_CEL,
    ],
  },
);
