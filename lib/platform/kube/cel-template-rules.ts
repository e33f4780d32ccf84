import { CORE_VALUES } from '../../model/cluster/values/template-values';
import { templateValues } from '../../model/cloudconfig/template-declarations';
import { quoted } from '../../model/cluster/schema/openapi';
import { listTemplates } from '../../model/cloudconfig/templates';
import { TemplateSource } from '../../model/cloudconfig/template-source';
import { defaultTemplates } from '../files/template-directory';
import { named, PlacedValidation, v } from './cel-build';

/**
 * template-values.ts's "required field is missing" for the values every template takes (the typed ones CEL can read)
 * that a template of this repository's cloudconfig/ requires (`required: true` in its values.yaml: kubernetesVersion
 * and bootstrapTokenSecretArn, by flatcar-worker and al2023-worker; an EKS template requires neither). The schema
 * leaves them optional, so these rules make the API server refuse what `validate` refuses, with its message.
 * A template's own values stay the reconciler's (cel-rules.ts says why).
 */

/** value → template → the description that template's values.yaml gives it (validate's message quotes it). */
function requiredCoreValues(templates: TemplateSource): Map<string, Map<string, string>> {
  const out = new Map<string, Map<string, string>>();
  for (const template of [...listTemplates(templates)].sort())
    for (const d of templateValues(templates, template).values)
      if (d.required && CORE_VALUES.includes(d.name))
        out.set(d.name, (out.get(d.name) ?? new Map<string, string>()).set(template, d.description));
  return out;
}

const mapLiteral = (m: Map<string, string>) =>
  `{${[...m].map(([k, text]) => `${quoted(k)}: ${quoted(text)}`).join(', ')}}`;
const listLiteral = (m: Map<string, string>) => `[${[...m.keys()].map(quoted).join(', ')}]`;

/** `has(<obj>.values.<name>)`, safe when values is absent. */
const hasValue = (cc: string, name: string) => `(has(${cc}.values) && has(${cc}.values.${name}))`;

export function templateRequiredRules(templates: TemplateSource = defaultTemplates()): PlacedValidation[] {
  return [...requiredCoreValues(templates)].flatMap(([name, templates]) => {
    // The whole message by template, from literals: a message that joined the object's own template name would be
    // unbounded text to the API server's cost estimate, which refuses the CRD.
    const messages = new Map(
      [...templates].map(([t, text]) => [t, `required field is missing (template ${t} needs it: ${text})`]),
    );
    const needs = (template: string) => `${mapLiteral(messages)}[${template}]`;
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
    // A pool under a template of its own that needs it is not ruled on here: the rule that names the pool's index
    // and template costs the API server's estimate more than it allows for the whole CRD (it refused it), so that
    // case stays the reconciler's, as a pool's template values are (validate says it, at spec.pools[i]).
    return [named('template-value-required', cluster)];
  });
}
