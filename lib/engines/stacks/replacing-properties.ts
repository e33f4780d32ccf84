import table from './replacing-properties-table.json';

/*
 * Which properties of a resource type make CloudFormation replace the resource when they change, as the CloudFormation
 * resource specification says (its `causesReplacement`: yes, or maybe, counted as a replacement: the roll key says
 * "rolls" rather than miss one). The table is what @aws-cdk/cloudformation-diff's public diff (the engine `cdk diff`
 * and review use) reports for each type, so the roll key and review's oracle read one specification; it is generated
 * by `node scripts/replacing-properties.js` because loading the specification costs about 2 s per process, and
 * test/engines/stacks/replacing-properties.test.ts fails when it no longer matches the installed package.
 */
const replacing: Readonly<Record<string, readonly string[] | undefined>> = table;
const sets = new Map<string, ReadonlySet<string>>();

/** Whether a change of `property` replaces a resource of `type` (false for a type or property the spec does not know). */
export function replacesResource(type: string, property: string): boolean {
  let found = sets.get(type);
  if (found === undefined) {
    found = new Set(Object.hasOwn(replacing, type) ? replacing[type] : []);
    sets.set(type, found);
  }
  return found.has(property);
}
