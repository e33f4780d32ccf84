/**
 * A role of the bootstrap stack deleted behind CloudFormation's back (issue 32 item 17). CloudFormation compares the
 * new template with the last one it deployed, not with the live resources: deploying the same template again is "no
 * change", and the role stays gone. A custom-named role cannot be replaced while it exists, and is made again only
 * when CloudFormation creates it anew. So bootstrap deploys the stack once without the missing roles (and without
 * whatever refers to them: their policies, an output, a policy naming the role's ARN by token), which CloudFormation
 * takes as their deletion (a delete of what is already gone succeeds: NotFound on delete is success in CloudFormation's
 * resource handler contract), and then the whole template, which creates them again, as new resources.
 *
 * Considered and not chosen: a drift-aware change set (CreateChangeSet's DeploymentMode REVERT_DRIFT) compares
 * with the live state, but no emulator we can test on has it, and whether it recreates a deleted resource is not
 * something its documentation promises; changing the role's logical id would recreate it too, but every bootstrap
 * after that would have to know which of two ids is live.
 */

/** A resource of a template, as far as this file reads it. */
interface TemplateResource {
  readonly Type?: string;
  readonly Properties?: Record<string, unknown>;
  readonly DependsOn?: string | readonly string[];
}

interface Template {
  Resources?: Record<string, TemplateResource>;
  Outputs?: Record<string, unknown>;
  [key: string]: unknown;
}

/** A role with a name of its own (RoleName, a literal) in a template. */
export interface NamedRole {
  readonly logicalId: string;
  readonly roleName: string;
}

function parse(templateBody: string): Template | undefined {
  try {
    const t = JSON.parse(templateBody) as unknown;
    return t !== null && typeof t === 'object' && !Array.isArray(t) ? (t as Template) : undefined;
  } catch {
    return undefined; // not JSON (a template in YAML): no role is read from it
  }
}

/** Every AWS::IAM::Role of the template whose RoleName is a literal string, in template order. */
export function namedRoles(templateBody: string): NamedRole[] {
  const resources = parse(templateBody)?.Resources ?? {};
  return Object.entries(resources).flatMap(([logicalId, r]) => {
    const name = r.Properties?.RoleName;
    return r.Type === 'AWS::IAM::Role' && typeof name === 'string' ? [{ logicalId, roleName: name }] : [];
  });
}

/** The logical ids a value refers to: Ref, Fn::GetAtt (both forms), Fn::Sub's ${Id} and ${Id.Attr}. */
function references(value: unknown, into: Set<string>): Set<string> {
  if (Array.isArray(value)) {
    for (const v of value) references(v, into);
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === 'Ref' && typeof v === 'string') into.add(v);
      else if (k === 'Fn::GetAtt' && Array.isArray(v) && typeof v[0] === 'string') into.add(v[0]);
      else if (k === 'Fn::GetAtt' && typeof v === 'string') into.add(v.split('.')[0]);
      else if (k === 'Fn::Sub') {
        const text: unknown = Array.isArray(v) ? (v as unknown[])[0] : v;
        if (typeof text === 'string') for (const m of text.matchAll(/\$\{([^}!.]+)[^}]*\}/g)) into.add(m[1]);
        references(v, into);
      } else references(v, into);
    }
  }
  return into;
}

/**
 * The template without the given resources and everything that refers to them, at any depth (a resource by Ref,
 * Fn::GetAtt, Fn::Sub or DependsOn, an output by its value): what CloudFormation must delete so that the whole
 * template creates them again. Returns the template and the logical ids it left out, sorted.
 */
export function withoutResources(
  templateBody: string,
  logicalIds: readonly string[],
): { templateBody: string; removed: string[] } {
  const t = parse(templateBody);
  if (!t) throw new Error('withoutResources: the template is not JSON');
  const resources = { ...(t.Resources ?? {}) };
  const removed = new Set(logicalIds.filter((id) => id in resources));
  for (let changed = true; changed;) {
    changed = false;
    for (const [id, r] of Object.entries(resources)) {
      if (removed.has(id)) continue;
      const refs = references(r, new Set<string>());
      for (const d of r.DependsOn === undefined ? [] : [r.DependsOn].flat()) refs.add(d);
      if ([...refs].some((x) => removed.has(x))) {
        removed.add(id);
        changed = true;
      }
    }
  }
  for (const id of removed) Reflect.deleteProperty(resources, id);
  const outputs = Object.fromEntries(
    Object.entries(t.Outputs ?? {}).filter(
      ([, o]) => ![...references(o, new Set<string>())].some((x) => removed.has(x)),
    ),
  );
  const out: Template = { ...t, Resources: resources };
  if (t.Outputs) out.Outputs = outputs;
  return { templateBody: JSON.stringify(out, undefined, 1), removed: [...removed].sort() };
}
