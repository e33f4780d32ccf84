import * as path from 'node:path';
import { createHash } from 'node:crypto';
import Handlebars from 'handlebars';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { CORE_VALUES, DERIVED_VALUES, VALUES_FILE } from '../cluster/values/template-values';
import { templateValues } from './template-declarations';
import { TemplateError } from '../../core/errors';
import { CONFIG_FORMATS, ConfigFormat } from './node-config';
import { MAX_TEMPLATE_FILE_BYTES, TemplateSource } from './template-source';

const ManifestSchema = z.strictObject({
  format: z.enum(CONFIG_FORMATS),
  description: z.string(),
  files: z
    .array(
      z.strictObject({
        path: z.string().regex(/^\/[^\0]+$/),
        mode: z.string().regex(/^0[0-7]{3}$/),
        template: z.string(),
      }),
    )
    .default([]),
  units: z
    .array(
      z.strictObject({
        name: z.string().regex(/^[\w@.-]+\.(service|timer|path|socket|mount|target)$/),
        enabled: z.boolean().default(true),
        template: z.string(),
      }),
    )
    .default([]),
});

export interface CompiledTemplate {
  readonly name: string;
  readonly format: ConfigFormat;
  readonly description: string;
  /** `source` is the template file as the manifest names it, for error messages. */
  readonly files: ReadonlyArray<{ path: string; mode: number; source: string; render: Handlebars.TemplateDelegate }>;
  readonly units: ReadonlyArray<{
    name: string;
    enabled: boolean;
    source: string;
    render: Handlebars.TemplateDelegate;
  }>;
}

/** The template names of one source; it knows the source, so validation finds each template's value declaration. */
export class TemplateSet extends Set<string> {
  public constructor(
    names: Iterable<string>,
    /** The templates the names came from. */
    public readonly source: TemplateSource,
  ) {
    super(names);
  }
}

/** Template names are the directories of the source with a template.yaml; `_`-prefixed ones hold shared parts. */
export function listTemplates(source: TemplateSource): TemplateSet {
  return new TemplateSet(
    source
      .entries('')
      .filter(
        (e) => e.kind === 'directory' && !e.name.startsWith('_') && source.exists(path.join(e.name, 'template.yaml')),
      )
      .map((e) => e.name),
    source,
  );
}

/** A file under the source's label as the source names it (relative to its root). */
const within = (source: TemplateSource, file: string) => path.relative(source.label, file);

const cache = new Map<string, CompiledTemplate>();

/**
 * The manifest's YAML, or a TemplateError naming the manifest: an alias bomb (a few lines that expand to millions of
 * nodes) or a syntax error would otherwise surface as the parser's bare words, naming neither the file nor the template.
 */
function parseManifest(text: string, manifestFile: string): unknown {
  try {
    return parseYaml(text, { maxAliasCount: 100, prettyErrors: false, uniqueKeys: true });
  } catch (e) {
    throw new TemplateError(`${manifestFile}: not a template manifest: ${(e as Error).message.split('\n')[0]}`, {
      cause: e,
      hint: `correct ${manifestFile}: a manifest is plain YAML that lists the template's files and units (an alias expands at most 100 times)`,
    });
  }
}

/** Loads and compiles one template; compiled templates are cached per source (its label) for the process. */
export function loadTemplate(name: string, source: TemplateSource): CompiledTemplate {
  // The label is absolute and without a trailing separator, so the "outside the template dir" check below holds.
  const dir = source.label;
  const root = path.join(dir, name);
  const key = root;
  const hit = cache.get(key);
  if (hit) return hit;
  const manifestFile = path.join(root, 'template.yaml');
  if (!source.exists(within(source, manifestFile))) {
    throw new TemplateError(`unknown cloud-config template ${JSON.stringify(name)}: ${manifestFile} does not exist`, {
      hint: `use one of: ${[...listTemplates(source)].sort().join(', ')}`,
    });
  }
  const parsed = ManifestSchema.safeParse(parseManifest(source.readText(within(source, manifestFile)), manifestFile));
  if (!parsed.success) {
    const lines = parsed.error.issues.map(
      (i) => `${manifestFile}: ${i.path.length ? `${i.path.join('.')}: ` : ''}${i.message}`,
    );
    throw new TemplateError(`invalid template manifest:\n  ${lines.join('\n  ')}`, {
      cause: parsed.error,
      hint: 'correct the manifest fields named above',
    });
  }
  const compile = (rel: string) => {
    const file = path.resolve(root, rel);
    if (!file.startsWith(dir + path.sep)) throw new TemplateError(`${manifestFile}: template ${rel} is outside ${dir}`);
    if (!source.exists(within(source, file)))
      throw new TemplateError(`${manifestFile}: template file ${rel} does not exist`, {
        hint: `create ${file} or fix the name`,
      });
    // strict: a value the template names but the cluster lacks is an error, never an empty string.
    return hbs.compile(source.readText(within(source, file)), { strict: true, noEscape: true });
  };
  const hbs = handlebarsFor(source);
  const m = parsed.data;
  checkDeclaredValues(
    source,
    name,
    [...m.files.map((f) => f.template), ...m.units.map((u) => u.template)].map((rel) => path.resolve(root, rel)),
  );
  const compiled: CompiledTemplate = {
    name,
    format: m.format,
    description: m.description,
    files: m.files.map((f) => ({
      path: f.path,
      mode: parseInt(f.mode, 8),
      source: f.template,
      render: compile(f.template),
    })),
    units: m.units.map((u) => ({ name: u.name, enabled: u.enabled, source: u.template, render: compile(u.template) })),
  };
  cache.set(key, compiled);
  return compiled;
}

/** `cloudconfig/_shared/x.hbs`: a template file as messages name it, the same on every machine. */
const shownPath = (dir: string, file: string) => path.join(path.basename(dir), path.relative(dir, file));

/**
 * Every `values.<name>` a template's files (and the partials they include) use must be a value every template
 * gets or one its values.yaml declares: a value used but not declared could never be checked at validation, and
 * would only fail (or render something unchecked) on some cluster. Names the file and line of the first use.
 */
function checkDeclaredValues(source: TemplateSource, name: string, files: readonly string[]): void {
  const dir = source.label;
  const decl = templateValues(source, name, shownPath(dir, path.join(dir, name, VALUES_FILE)));
  if (decl.problems.length)
    throw new TemplateError(`template ${name}: bad value declaration:\n  ${decl.problems.join('\n  ')}`, {
      hint: 'correct the declaration fields named above',
    });
  const known = new Set([...CORE_VALUES, ...DERIVED_VALUES, ...decl.values.map((v) => v.name)]);
  const seen = new Set<string>();
  const problems: string[] = [];
  const scan = (file: string) => {
    // A missing file or one outside the template dir is refused by compile() below, with its own message.
    if (seen.has(file) || !file.startsWith(dir + path.sep) || !source.exists(within(source, file))) return;
    seen.add(file);
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) {
        node.forEach(walk);
        return;
      }
      if (!node || typeof node !== 'object') return;
      const n = node as {
        type?: string;
        parts?: string[];
        data?: boolean;
        depth?: number;
        loc?: { start: { line: number } };
        name?: { original?: unknown };
      };
      if (n.type === 'PathExpression' && n.parts) {
        // `values.x` at the top level, or `@root.values.x` from inside a block.
        const parts = n.data && n.parts[0] === 'root' ? n.parts.slice(1) : n.data || n.depth ? [] : n.parts;
        if (parts[0] === 'values' && parts.length > 1 && !known.has(parts[1])) {
          problems.push(
            `${shownPath(dir, file)}:${n.loc?.start.line ?? '?'}: uses values.${parts[1]}, which ${decl.file ?? shownPath(dir, path.join(dir, name, VALUES_FILE))} does not declare`,
          );
        }
      }
      if (n.type === 'PartialStatement' && typeof n.name?.original === 'string')
        scan(path.join(dir, '_shared', `${n.name.original}.hbs`));
      for (const [k, v] of Object.entries(n)) if (k !== 'loc' && typeof v === 'object') walk(v);
    };
    walk(Handlebars.parse(source.readText(within(source, file))));
  };
  files.forEach(scan);
  if (problems.length) {
    throw new TemplateError(`template ${name} uses values it does not declare:\n  ${problems.join('\n  ')}`, {
      hint: `declare each in ${shownPath(dir, path.join(dir, name, VALUES_FILE))} (name, type, description, required or default), or fix the name in the template`,
    });
  }
}

/**
 * A script of a format's own user data from `scripts`' `_shared/` (with its partials), rendered with `context`: it
 * belongs to the format (eks-al2023's signal part), not to a template, so `scripts` is the repository's cloudconfig/
 * (a TemplateSource's formatScripts), never an operator's directory. Strict, as templates are: a name the context
 * lacks is an error.
 */
export function renderFormatScript(file: string, context: Record<string, unknown>, scripts: TemplateSource): string {
  const text = scripts.readText(path.join('_shared', file));
  return handlebarsFor(scripts).compile(text, { strict: true, noEscape: true })(context);
}

const envs = new Map<string, typeof Handlebars>();

/** One Handlebars environment per template source, with `_shared/*.hbs` as partials (`{{> name}}`) and the helpers json and base64. */
function handlebarsFor(source: TemplateSource): typeof Handlebars {
  const dir = source.label;
  let env = envs.get(dir);
  if (env) return env;
  env = Handlebars.create();
  // A value as a JSON scalar (valid YAML): quoting by the serializer, never by hand, so no value can break out of its
  // place in a YAML template (eks-al2023's NodeConfig). base64: nodeadm takes the CA as base64 of the PEM.
  env.registerHelper('json', (v: unknown) => JSON.stringify(v));
  env.registerHelper('base64', (v: unknown) => Buffer.from(String(v), 'utf8').toString('base64'));
  // Every entry whose name ends in .hbs, whatever it is: one that is not a regular file of the source is refused by readText.
  for (const f of source
    .entries('_shared')
    .map((e) => e.name)
    .filter((n) => n.endsWith('.hbs'))
    .sort()) {
    env.registerPartial(f.replace(/\.hbs$/, ''), source.readText(path.join('_shared', f)));
  }
  envs.set(dir, env);
  return env;
}

/**
 * Identity of everything in a template source (paths and bytes). A
 * long-running reconciler reads it once per pass: when it moved, the compiled
 * templates of that source are dropped and recompiled on next use.
 */
export function templatesVersion(source: TemplateSource): string {
  const dir = source.label;
  const hash = createHash('sha256');
  const walk = (d: string) => {
    for (const e of [...source.entries(d)].sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const p = path.join(d, e.name);
      if (e.kind === 'directory') walk(p);
      // Regular files only (an entry is the link itself, not its target); an oversized one by its size, unread: it is
      // refused when a template reads it (readText).
      else if (e.kind === 'file') {
        const size = source.stat(p)?.size ?? 0;
        hash
          .update(p)
          .update('\0')
          .update(size > MAX_TEMPLATE_FILE_BYTES ? `oversized:${size}` : source.readBytes(p))
          .update('\0');
      }
    }
  };
  walk('');
  const version = hash.digest('hex');
  if (versions.get(dir) !== version) {
    for (const key of [...cache.keys()]) if (key.startsWith(dir + path.sep)) cache.delete(key);
    envs.delete(dir);
    versions.set(dir, version);
  }
  return version;
}

const versions = new Map<string, string>();
