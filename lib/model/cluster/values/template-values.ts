import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { PatternError } from './bounded-regex';
import { compiled, ValueDeclaration, ValueDeclarationSchema, valueProblem } from './value-declaration';
import { Found } from '../rules/loose';
import { found } from '../rules/rule-registry';
import { CloudConfigValuesSchema } from '../schema/cloud-config-schema';

/**
 * Typed values per config template. Each template directory may hold a `values.yaml` next to its `template.yaml`
 * that declares the values the template takes (name, type, required or default, rules). The values that
 * worker-stacks itself reads (the API endpoint, the CA, the bootstrap-token secret ...) are typed in
 * lib/model/cluster/schema/cloud-config-schema.ts for every template; any other key of spec.cloudConfig.values must be declared by the
 * chosen template, and is checked against that declaration. So a template gains a kubelet setting by declaring
 * it here and using it; nothing in lib/ changes.
 */

/** Values every template gets, typed by the schema. */
export const CORE_VALUES: readonly string[] = Object.keys(CloudConfigValuesSchema.shape);
/** Values worker-stacks derives from the core ones for templates (lib/model/cloudconfig/render.ts). */
export const DERIVED_VALUES: readonly string[] = ['nodeLabelsFlag', 'nodeTaintsFlag', 'nodeTaintsByKey'];

export const VALUES_FILE = 'values.yaml';

const DeclarationFileSchema = z.strictObject({ values: z.array(ValueDeclarationSchema).default([]) });

export interface TemplateValues {
  /** The declaration file, as shown in messages (`cloudconfig/<name>/values.yaml`), or undefined when there is none. */
  readonly file?: string;
  readonly values: readonly ValueDeclaration[];
  /** What is wrong with the declaration file itself (each `file: field: rule`); empty when it is usable. */
  readonly problems: readonly string[];
}

/**
 * One template's declaration from the text of its values.yaml (`shown` names that file in problems). Never throws: a
 * bad declaration comes back as problems. Reading the file (through the TemplateSource port) is
 * lib/model/cloudconfig/template-declarations.ts's.
 */
export function declarationFrom(text: string, shown: string): TemplateValues {
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (e) {
    return { file: shown, values: [], problems: [`${shown}: YAML error: ${(e as Error).message.split('\n')[0]}`] };
  }
  const parsed = DeclarationFileSchema.safeParse(raw ?? {});
  if (!parsed.success)
    return {
      file: shown,
      values: [],
      problems: parsed.error.issues.map((i) => `${shown}: ${i.path.join('.') || '(file)'}: ${i.message}`),
    };
  const problems: string[] = [];
  const seen = new Set<string>();
  parsed.data.values.forEach((v, i) => {
    const at = `${shown}: values.${i}`;
    if (seen.has(v.name)) problems.push(`${at}.name: ${v.name} is declared twice`);
    seen.add(v.name);
    if (DERIVED_VALUES.includes(v.name))
      problems.push(`${at}.name: ${v.name} is derived by worker-stacks, not taken from the cluster object`);
    // A core value is typed by the schema for every template; a declaration may describe it, never retype it. It may
    // say the template requires it (kubernetesVersion: the templates that install a kubelet; an EKS one does not).
    if (
      CORE_VALUES.includes(v.name) &&
      (v.default !== undefined ||
        v.multiline ||
        v.nested ||
        v.pattern ||
        v.keyPattern ||
        v.enum ||
        v.min !== undefined ||
        v.max !== undefined)
    ) {
      problems.push(
        `${at}: ${v.name} is typed by worker-stacks (docs/reference.md); give only name, type, description and required`,
      );
    }
    for (const field of ['pattern', 'keyPattern'] as const) {
      const source = v[field];
      if (source === undefined) continue;
      try {
        compiled(source);
      } catch (e) {
        if (!(e instanceof PatternError)) throw e;
        problems.push(
          `${at}.${field}: not a pattern worker-stacks matches (lib/model/cluster/values/bounded-regex.ts: linear time, the syntax RE2 and JavaScript share): ${e.message}`,
        );
      }
    }
    // Every string a template takes reaches a file on the node (a root shell script, TOML, YAML, a systemd unit):
    // the template says which strings it takes, so that no value can break out of the context it is written into.
    if (
      !CORE_VALUES.includes(v.name) &&
      v.pattern === undefined &&
      (v.type === 'list' || v.type === 'map' || (v.type === 'string' && v.enum === undefined))
    ) {
      problems.push(
        `${at}: ${v.name} is a ${v.type}${v.type === 'string' ? '' : ' of strings'} without a pattern${v.type === 'string' ? ' or enum' : ''}; declare the characters it may hold (e.g. pattern: "[a-z0-9.-]{1,63}"), so that no value can inject into the file it is rendered into`,
      );
    }
    if (v.default !== undefined) {
      const p = valueProblem(v, v.default);
      if (p) problems.push(`${at}.default: ${p}`);
    }
  });
  return { file: shown, values: parsed.data.values, problems };
}

/**
 * How the cluster's template is used, when spec.pools name templates of their own (issue 32 item 8: a value is
 * required only by the template that uses it).
 */
export interface TemplateUse {
  /** False when no pool renders this template (every pool names another): its required values are not required. @default true */
  readonly rendered?: boolean;
  /** The declarations of the pools' own templates: a cluster value one of them takes is theirs to inherit, not unknown. @default none */
  readonly otherTemplates?: readonly TemplateValues[];
}

/**
 * The problems of spec.cloudConfig.values under the chosen template's declaration: keys that are neither core
 * nor declared, declared values of the wrong type or out of their rules, required ones that are missing. `at` is the
 * cloudConfig the values are reported under (`spec.pools[1].cloudConfig` for a pool's, merged over the cluster's).
 */
export function templateValueProblems(
  rawValues: unknown,
  template: string,
  decl: TemplateValues,
  at = 'spec.cloudConfig',
  use: TemplateUse = {},
): Found[] {
  const base = `${at}.values`;
  if (decl.problems.length)
    return [
      found(
        'template-declaration',
        `${at}.template`,
        `template ${template} has a bad value declaration: ${decl.problems.join('; ')}`,
      ),
    ];
  const values =
    rawValues && typeof rawValues === 'object' && !Array.isArray(rawValues)
      ? (rawValues as Record<string, unknown>)
      : {};
  const declared = new Map(decl.values.map((d) => [d.name, d]));
  const out: Found[] = [];
  const key = (k: string) => (/^[A-Za-z_$][\w$]*$/.test(k) ? `${base}.${k}` : `${base}[${JSON.stringify(k)}]`);
  for (const k of Object.keys(values).sort()) {
    if (CORE_VALUES.includes(k)) continue; // the schema checks these
    const d = declared.get(k);
    if (!d && use.otherTemplates?.some((t) => t.values.some((x) => x.name === k))) continue; // a pool's template's
    if (!d) {
      const takes = decl.values.filter((x) => !CORE_VALUES.includes(x.name)).map((x) => x.name);
      out.push(
        found(
          'template-value-known',
          key(k),
          `unknown value: template ${template} does not declare it (${takes.length ? `it also takes ${takes.join(', ')}` : 'it takes only the values every template takes'}; see docs/reference.md)`,
        ),
      );
      continue;
    }
    const p = valueProblem(d, values[k]);
    if (p) out.push(found('template-value', key(k), p));
  }
  for (const d of decl.values) {
    if (use.rendered !== false && d.required && values[d.name] === undefined) {
      out.push(
        found(
          'template-value-required',
          key(d.name),
          `required field is missing (template ${template} needs it: ${d.description})`,
        ),
      );
    }
  }
  return out;
}

/** The declared defaults of the values the object leaves out, added to the (already valid) values. */
export function withValueDefaults<T extends Record<string, unknown>>(values: T, decl: TemplateValues): T {
  const out: Record<string, unknown> = { ...values };
  for (const d of decl.values) if (out[d.name] === undefined && d.default !== undefined) out[d.name] = d.default;
  return out as T;
}
