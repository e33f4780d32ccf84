import { CORE_VALUES, templateValues } from '../../model/cluster/template-values';
import { POOL_OWN_VALUES } from '../../model/cluster/schema';
import { quoted } from '../../model/cluster/openapi';
import { DEFAULT_TEMPLATES_DIR, listTemplates } from '../../model/cloudconfig/templates';
import { bound, PlacedValidation, v } from './cel-build';

/**
 * template-values.ts's "required field is missing" for the values every template takes (the typed ones CEL can read)
 * that a template of this repository's cloudconfig/ requires (`required: true` in its values.yaml: kubernetesVersion
 * and bootstrapTokenSecretArn, by flatcar-worker and al2023-worker; an EKS template requires neither). The schema
 * leaves them optional, so these rules make the API server refuse what `validate` refuses, with its message.
 * A template's own values stay the reconciler's (cel-rules.ts says why).
 */

/** value → template → the description that template's values.yaml gives it (validate's message quotes it). */
function requiredCoreValues(dir: string): Map<string, Map<string, string>> {
  const out = new Map<string, Map<string, string>>();
  for (const template of [...listTemplates(dir)].sort())
    for (const d of templateValues(dir, template).values)
      if (d.required && CORE_VALUES.includes(d.name))
        out.set(d.name, (out.get(d.name) ?? new Map<string, string>()).set(template, d.description));
  return out;
}

const mapLiteral = (m: Map<string, string>) =>
  `{${[...m].map(([k, text]) => `${quoted(k)}: ${quoted(text)}`).join(', ')}}`;
const listLiteral = (m: Map<string, string>) => `[${[...m.keys()].map(quoted).join(', ')}]`;

/** `has(<obj>.values.<name>)`, safe when values is absent. */
const hasValue = (cc: string, name: string) => `(has(${cc}.values) && has(${cc}.values.${name}))`;

export function templateRequiredRules(dir: string = DEFAULT_TEMPLATES_DIR): PlacedValidation[] {
  return [...requiredCoreValues(dir)].flatMap(([name, templates]) => {
    const needs = (template: string) =>
      `'required field is missing (template ' + ${template} + ' needs it: ' + ${mapLiteral(templates)}[${template}] + ')'`;
    // The cluster's template needs it only while a pool renders it (validate.ts templateUse): spec.pool, or a pool
    // of spec.pools with no template of its own, or the same one.
    const rendered =
      '(!has(self.pools) || size(self.pools) == 0 || self.pools.exists(p, !has(p.cloudConfig) || !has(p.cloudConfig.template) || p.cloudConfig.template == self.cloudConfig.template))';
    const cluster = v(
      'spec',
      `!(self.cloudConfig.template in ${listLiteral(templates)}) || !${rendered} || ${hasValue('self.cloudConfig', name)}`,
      { expr: needs('self.cloudConfig.template') },
      `.cloudConfig.values.${name}`,
    );
    // A pool under a template of its own that needs it: the pool's value (for one a pool may set) or the cluster's.
    const poolOwn = (POOL_OWN_VALUES as readonly string[]).includes(name);
    const ok = (p: string) =>
      `!(has(${p}.cloudConfig) && has(${p}.cloudConfig.template) && ${p}.cloudConfig.template in ${listLiteral(templates)}) || ${poolOwn ? `${hasValue(`${p}.cloudConfig`, name)} || ` : ''}${hasValue('self.cloudConfig', name)}`;
    const pool = v(
      'spec',
      `!has(self.pools) || self.pools.all(p, ${ok('p')})`,
      {
        expr: bound(
          'i',
          `self.pools.map(p, ${ok('p')}).indexOf(false)`,
          `'spec.pools[' + string(i) + '].cloudConfig.values.${name} ' + ${needs('self.pools[i].cloudConfig.template')}`,
        ),
      },
      '.pools',
    );
    return [cluster, pool];
  });
}
