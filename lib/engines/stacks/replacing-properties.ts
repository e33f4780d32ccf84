import { diffTemplate, ResourceImpact } from '@aws-cdk/cloudformation-diff';

/*
 * Which properties of a resource type make CloudFormation replace the resource when they change, as the CloudFormation
 * resource specification says (its `causesReplacement`: yes, or maybe, counted as a replacement: the roll key says
 * "rolls" rather than miss one). Read through @aws-cdk/cloudformation-diff's public diff, the engine `cdk diff` and
 * review use, so the roll key and review's oracle read one specification: the property is changed in a template of
 * one resource and the diff's impact read back. The package does not export its specification lookup.
 */
const cache = new Map<string, boolean>();

/** Whether a change of `property` replaces a resource of `type` (false for a type or property the spec does not know). */
export function replacesResource(type: string, property: string): boolean {
  const k = `${type}\u0000${property}`;
  let found = cache.get(k);
  if (found === undefined) {
    const one = (value: string) => ({ Resources: { R: { Type: type, Properties: { [property]: value } } } });
    const updates = diffTemplate(one('a'), one('b')).resources.get('R').propertyUpdates;
    const impact = (updates[property] as (typeof updates)[string] | undefined)?.changeImpact;
    found = impact === ResourceImpact.WILL_REPLACE || impact === ResourceImpact.MAY_REPLACE;
    cache.set(k, found);
  }
  return found;
}
