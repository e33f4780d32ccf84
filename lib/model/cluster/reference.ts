import { z } from 'zod';
import { listTemplates } from '../cloudconfig/templates';
import { TemplateSource } from '../cloudconfig/template-source';
import { WorkerClusterSchema } from './schema/schema';
import { CORE_VALUES } from './values/template-values';
import { templateValues } from '../cloudconfig/template-declarations';

/** A JSON Schema node: the keywords this reference reads are typed, any other is carried unread. */
export type SchemaNode = {
  readonly [keyword: string]: unknown;
  readonly const?: unknown;
  readonly enum?: readonly unknown[];
  readonly anyOf?: readonly SchemaNode[];
  readonly type?: string;
  readonly items?: SchemaNode;
  readonly additionalProperties?: boolean | SchemaNode;
  readonly description?: string;
  readonly properties?: Readonly<Record<string, SchemaNode>>;
  readonly required?: readonly string[];
};

/** The cluster object's schema: an object, so its root has properties. */
export type ClusterJsonSchema = SchemaNode & { readonly properties: Readonly<Record<string, SchemaNode>> };

/** The JSON Schema of the cluster object (input side: defaults are optional), for editors and the CRD. */
export function clusterJsonSchema(): ClusterJsonSchema {
  return z.toJSONSchema(WorkerClusterSchema, { io: 'input', unrepresentable: 'any' }) as ClusterJsonSchema;
}

function typeOf(s: SchemaNode): string {
  if (s.const !== undefined) return `\`${JSON.stringify(s.const)}\``;
  if (s.enum) return s.enum.map((v) => `\`${JSON.stringify(v)}\``).join(' \\| ');
  if (s.anyOf) return s.anyOf.map(typeOf).join(' \\| ');
  if (s.type === 'array') return `list of ${typeOf(s.items ?? {})}`;
  if (s.type === 'object' && s.additionalProperties && typeof s.additionalProperties === 'object')
    return `map of ${typeOf(s.additionalProperties)}`;
  return s.type ?? 'any';
}

/**
 * The field reference of docs/reference.md, generated from the schema so that the
 * two cannot drift (a test compares them).
 */
export function clusterReferenceMarkdown(templates: TemplateSource): string {
  const rows: string[] = ['| field | type | required | description |', '| --- | --- | --- | --- |'];
  const walk = (s: SchemaNode, at: string, required: boolean) => {
    if (at) {
      const desc = (s.description ?? '').replace(/\|/g, '\\|');
      rows.push(`| \`${at}\` | ${typeOf(s)} | ${required ? 'yes' : ''} | ${desc} |`);
    }
    const obj = s.type === 'array' ? s.items : s;
    const props = obj?.properties;
    if (!props || at === 'status') return;
    const req = new Set<string>(obj.required ?? []);
    const prefix = s.type === 'array' ? `${at}[]` : at;
    for (const key of Object.keys(props)) walk(props[key], prefix ? `${prefix}.${key}` : key, req.has(key));
  };
  walk(clusterJsonSchema(), '', true);
  return rows.join('\n') + '\n' + templateValuesMarkdown(templates);
}

/** Each template's own values (cloudconfig/<template>/values.yaml), after the fields every template takes. */
function templateValuesMarkdown(templates: TemplateSource): string {
  const out: string[] = [];
  for (const name of [...listTemplates(templates)].sort()) {
    const decl = templateValues(templates, name);
    const uses = decl.values.filter((v) => CORE_VALUES.includes(v.name)).map((v) => `\`${v.name}\``);
    const own = decl.values.filter((v) => !CORE_VALUES.includes(v.name));
    out.push(
      '',
      `Template \`${name}\` (\`cloudconfig/${name}/values.yaml\`) uses ${uses.join(', ') || 'none of the values above'}; its own values: ${own.length ? '' : 'none.'}`,
    );
    if (own.length) {
      out.push('', '| value | type | required | description |', '| --- | --- | --- | --- |');
      for (const v of own) {
        const rules = [
          v.enum && `one of ${v.enum.map((e) => JSON.stringify(e)).join(', ')}`,
          v.nested && 'a value may also be a list or a map of scalars, one level deep',
          v.keyPattern && `keys match \`${v.keyPattern}\``,
          v.pattern && `${v.keyPattern ? 'values match' : 'matches'} \`${v.pattern}\``,
          (v.min !== undefined || v.max !== undefined) && `${v.min ?? '…'}-${v.max ?? '…'}`,
        ].filter(Boolean);
        const desc =
          `${v.description}${rules.length ? ` (${rules.join('; ')})` : ''}${v.default !== undefined ? ` @default ${JSON.stringify(v.default)}` : ''}`.replace(
            /\|/g,
            '\\|',
          );
        out.push(`| \`spec.cloudConfig.values.${v.name}\` | ${v.type} | ${v.required ? 'yes' : ''} | ${desc} |`);
      }
    }
  }
  return out.length ? out.join('\n') + '\n' : '';
}
