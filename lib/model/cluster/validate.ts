import * as path from 'node:path';
import { z } from 'zod';
import { TemplateSource } from '../cloudconfig/template-source';
import { Problem } from '../../core/errors';
import { crossFieldProblems } from './rules/cross-field';
import { formatPath } from './rules/format-path';
import { kubeletPinProblems, PIN_VALUE } from './values/kubelet-pins';
import { obj } from './rules/loose';
import { poolValueProblems, withPoolValueDefaults } from './pools/pool-values';
import { found } from './rules/rule-registry';
import { tokenProblems } from './values/tokens';
import { imageResolver, ImageResolver } from '../channel/image-pins';
import { pinPools } from '../channel/pin-pools';
import { WorkerCluster, WorkerClusterSchema } from './schema/schema';
import { TemplateUse, templateValueProblems, withValueDefaults } from './values/template-values';
import { templateValues } from '../cloudconfig/template-declarations';

export interface ValidationContext {
  /** The file the object came from, as shown to the user. */
  readonly file: string;
  /** Names of the templates under cloudconfig/ (listTemplates' set also carries its source). */
  readonly templates: ReadonlySet<string>;
  /**
   * Where the templates come from, for each template's value declaration (values.yaml).
   * @default the source the `templates` set came from (listTemplates); one of the two is needed once a template is named
   */
  readonly templateSource?: TemplateSource;
  /**
   * The image channels' pins (lib/model/channel/image-pins.ts): a pool that names a channel gets its release's AMI id.
   * @default no channel is known: a pool naming one is refused (rule image-channel)
   */
  readonly images?: ImageResolver;
}

export interface ValidationResult {
  /** The object with defaults applied, when there is no problem. */
  readonly cluster?: WorkerCluster;
  /** Every problem at once, sorted by field path. */
  readonly problems: readonly Problem[];
}

function typeName(v: unknown): string {
  return Array.isArray(v) ? 'a list' : typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

const EXPECTED: Record<string, string> = {
  object: 'an object',
  array: 'a list',
  string: 'a string',
  number: 'a number',
  boolean: 'true or false',
  record: 'a map',
};

/** One zod issue as the problems a user reads (file: field path: rule). */
export function issueToProblems(file: string, issue: z.core.$ZodIssue): Problem[] {
  const at = formatPath(issue.path);
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((k) => ({
      file,
      path: formatPath([...issue.path, k]),
      message: 'unknown field (check the spelling against docs/reference.md)',
    }));
  }
  if (issue.code === 'invalid_type' && issue.input === undefined) {
    return [{ file, path: at, message: `required field is missing (expected ${issue.expected})` }];
  }
  if (issue.code === 'invalid_type') {
    // e.g. `port: "443"` (quoted in YAML) or `account: 111111111111` (unquoted): name the value and what was expected.
    const expected = EXPECTED[issue.expected] ?? issue.expected;
    const hint =
      issue.expected === 'number' && typeof issue.input === 'string'
        ? ' (remove the quotes)'
        : issue.expected === 'string' && typeof issue.input === 'number'
          ? ' (quote it in YAML)'
          : '';
    if (issue.input === null) return [{ file, path: at, message: `is empty (null), expected ${expected}` }];
    // A scalar is shown as written (`"443"`); a list or map only by its kind.
    const value =
      typeof issue.input === 'object'
        ? ''
        : `${issue.input === undefined ? 'undefined' : JSON.stringify(issue.input)} `;
    return [{ file, path: at, message: `${value}is ${typeName(issue.input)}, expected ${expected}${hint}` }];
  }
  if (issue.code === 'invalid_value' && issue.input !== undefined) {
    return [
      {
        file,
        path: at,
        message: `${JSON.stringify(issue.input)} is not allowed (expected one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')})`,
      },
    ];
  }
  if (issue.code === 'invalid_key') {
    // A record key broke its rule; the inner issue carries the rule and the key.
    return issue.issues.map((inner) => ({
      file,
      path: at,
      message: inner.code === 'custom' ? inner.message : `key ${JSON.stringify(issue.input)}: ${inner.message}`,
    }));
  }
  if (
    (issue.code === 'too_small' || issue.code === 'too_big') &&
    (issue.origin === 'array' || issue.origin === 'string')
  ) {
    const limit =
      issue.code === 'too_small' ? `at least ${issue.minimum} required` : `at most ${issue.maximum} allowed`;
    const unit = issue.origin === 'array' ? 'item' : 'character';
    const len = (issue.input as { length?: number } | undefined)?.length;
    const value =
      issue.origin === 'string' && typeof issue.input === 'string' && issue.input.length <= 40
        ? `${JSON.stringify(issue.input)} has`
        : 'has';
    return [{ file, path: at, message: `${value} ${len ?? '?'} ${unit}${len === 1 ? '' : 's'}, ${limit}` }];
  }
  if (issue.code === 'invalid_format' && issue.input !== undefined) {
    return [
      {
        file,
        path: at,
        message: `${JSON.stringify(issue.input)} is not a valid ${issue.format === 'ipv4' ? 'IPv4 address' : issue.format}`,
      },
    ];
  }
  if (issue.code === 'invalid_union') return unionProblems(file, issue);
  // A named rule's refinement (rule-registry.ts ruleIssue) carries its id.
  const rule = issue.code === 'custom' ? (issue.params as { rule?: unknown } | undefined)?.rule : undefined;
  return [{ file, path: at, message: issue.message, ...(typeof rule === 'string' ? { rule } : {}) }];
}

/**
 * A value no alternative of a union took. zod says only "Invalid input"; the user needs the rule: the problems of the
 * alternatives whose type the value has (it broke their rules), else the types it could have had.
 */
function unionProblems(file: string, issue: z.core.$ZodIssueInvalidUnion): Problem[] {
  const at = formatPath(issue.path);
  const within = (i: z.core.$ZodIssue): z.core.$ZodIssue => ({ ...i, path: [...issue.path, ...i.path] });
  const ruled = issue.errors.filter((b) => b.length > 0 && b.every((i) => i.code !== 'invalid_type'));
  if (ruled.length) {
    const all = ruled.flat().flatMap((i) => issueToProblems(file, within(i)));
    return all.filter((p, i) => all.findIndex((q) => q.path === p.path && q.message === p.message) === i);
  }
  const expected = [
    ...new Set(
      issue.errors.flat().flatMap((i) => (i.code === 'invalid_type' ? [EXPECTED[i.expected] ?? i.expected] : [])),
    ),
  ];
  const value = typeof issue.input === 'object' || issue.input === undefined ? '' : `${JSON.stringify(issue.input)} `;
  return [
    {
      file,
      path: at,
      message: expected.length
        ? `${value}is ${typeName(issue.input)}, expected ${expected.join(' or ')}`
        : `${value}is not allowed here`,
    },
  ];
}

/**
 * Validates one raw object (parsed YAML). Pure: the caller supplies the file
 * name and the known templates. Schema problems and cross-field problems are
 * collected together, so a user fixes everything in one round.
 */
export function validateCluster(raw: unknown, ctx: ValidationContext): ValidationResult {
  const parsed = WorkerClusterSchema.safeParse(raw, { reportInput: true });
  const problems: Problem[] = parsed.success ? [] : parsed.error.issues.flatMap((i) => issueToProblems(ctx.file, i));
  problems.push(...tokenProblems(raw).map((p) => ({ file: ctx.file, ...p })));
  problems.push(...crossFieldProblems(raw, ctx.templates).map((p) => ({ file: ctx.file, ...p })));

  // The chosen template's own values, against its declaration (only for a template that exists).
  const cloudConfig = (raw as { spec?: { cloudConfig?: { template?: unknown; values?: unknown } } } | undefined)?.spec
    ?.cloudConfig;
  const template =
    typeof cloudConfig?.template === 'string' && ctx.templates.has(cloudConfig.template)
      ? cloudConfig.template
      : undefined;
  const decl = template === undefined ? undefined : templateValues(templateSourceOf(ctx), template);
  if (template !== undefined && decl)
    problems.push(
      ...templateValueProblems(cloudConfig?.values, template, decl, 'spec.cloudConfig', templateUse(raw, ctx)).map(
        (p) => ({ file: ctx.file, ...p }),
      ),
    );

  problems.push(...poolsValueProblems(raw, ctx));
  problems.push(
    ...kubeletPinProblems(obj(obj(raw).spec), (t) =>
      ctx.templates.has(t) ? templateValues(templateSourceOf(ctx), t).values.some((d) => d.name === PIN_VALUE) : false,
    ).map((p) => ({ file: ctx.file, ...p })),
  );

  const expectedName = path.basename(ctx.file).replace(/\.ya?ml$/, '');
  const name = (raw as { metadata?: { name?: unknown } } | undefined)?.metadata?.name;
  if (/\.ya?ml$/.test(ctx.file) && typeof name === 'string' && name !== expectedName) {
    problems.push({
      file: ctx.file,
      ...found(
        'name-matches-file',
        'metadata.name',
        `${JSON.stringify(name)} must match the file name (${expectedName})`,
      ),
    });
  }

  const unique = dedupe(problems).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  if (unique.length > 0 || !parsed.success) return { problems: unique };
  const cluster = parsed.data;
  const unpinned = pinPools(cluster, ctx.images ?? NO_CHANNELS, ctx.file);
  if (unpinned.length > 0) return { problems: unpinned };
  if (decl) cluster.spec.cloudConfig.values = withValueDefaults(cluster.spec.cloudConfig.values, decl);
  // A pool under a template of its own gets that template's defaults for what neither it nor the cluster sets.
  for (const pool of cluster.spec.pools ?? []) {
    const own = pool.cloudConfig;
    if (own?.template === undefined || own.template === cluster.spec.cloudConfig.template) continue;
    own.values = withPoolValueDefaults(
      own.values,
      cluster.spec.cloudConfig.values,
      templateValues(templateSourceOf(ctx), own.template),
    );
  }
  return { cluster, problems: [] };
}

/**
 * Whether any pool renders the cluster's template (spec.pool does, and a pool without a template of its own), and the
 * declarations of the templates the pools name instead: a value is required only by the template that uses it, and a
 * cluster value that a pool's template takes is for that pool to inherit.
 */
function templateUse(raw: unknown, ctx: ValidationContext): TemplateUse {
  const spec = (raw as { spec?: { pools?: unknown; cloudConfig?: { template?: unknown } } } | undefined)?.spec;
  if (!Array.isArray(spec?.pools) || spec.pools.length === 0) return {};
  const own = spec.pools.map(
    (p: unknown) => (p as { cloudConfig?: { template?: unknown } } | null)?.cloudConfig?.template,
  );
  const others = [...new Set(own.filter((t): t is string => typeof t === 'string' && ctx.templates.has(t)))];
  return {
    rendered: own.some((t) => t === undefined || t === spec.cloudConfig?.template),
    otherTemplates: others.map((t) => templateValues(templateSourceOf(ctx), t)),
  };
}

/** Each pool's cloud-config values merged over the cluster's, under the pool's template (pool-values.ts). */
function poolsValueProblems(raw: unknown, ctx: ValidationContext): Problem[] {
  const spec = (raw as { spec?: { pools?: unknown; cloudConfig?: { template?: unknown } } } | undefined)?.spec;
  if (!Array.isArray(spec?.pools)) return [];
  return spec.pools.flatMap((pool: unknown, i) => {
    const cloudConfig = (pool as { cloudConfig?: { template?: unknown } } | null)?.cloudConfig;
    const named = cloudConfig?.template ?? spec.cloudConfig?.template;
    const template = typeof named === 'string' && ctx.templates.has(named) ? named : undefined;
    return poolValueProblems({
      cloudConfig,
      at: `spec.pools[${i}]`,
      cluster: spec.cloudConfig,
      template,
      decl: template === undefined ? undefined : templateValues(templateSourceOf(ctx), template),
    }).map((p) => ({ file: ctx.file, ...p }));
  });
}

const NO_CHANNELS = imageResolver([]);

function templateSourceOf(ctx: ValidationContext): TemplateSource {
  const source = ctx.templateSource ?? (ctx.templates as { source?: TemplateSource }).source;
  // The model reads no directory of its own: a caller that names templates says where they are.
  if (!source) throw new Error('validateCluster: pass templateSource, or templates as listTemplates lists them');
  return source;
}

function dedupe(problems: Problem[]): Problem[] {
  const seen = new Set<string>();
  return problems.filter((p) => {
    const k = `${p.path}\0${p.message}`;
    return seen.has(k) ? false : (seen.add(k), true);
  });
}
