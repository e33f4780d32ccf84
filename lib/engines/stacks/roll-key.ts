import { canonicalJson } from '../../model/cloudconfig/canonical-json';
import { sha256Hex } from '../../model/cloudconfig/checksum';
import { replacesResource } from './replacing-properties';

/*
 * The roll key: one answer to "does this change replace the nodes", read from a synthesized (or live) template, never
 * from the object. Every gate (the fleet waves, maxConcurrentPools), log line, event, status row, metric and review
 * line reads it, so a code change that alters the launch template is a roll like an edit of the object.
 *
 * What CloudFormation replaces instances for (AWS CloudFormation User Guide, "UpdatePolicy attribute",
 * AutoScalingRollingUpdate and AutoScalingReplacingUpdate; AutoScalingInstanceRefresh follows the same list): a change
 * of the group's LaunchConfigurationName (a new launch configuration), of its LaunchTemplate (a new launch template
 * version: any change of LaunchTemplateData), of its MixedInstancesPolicy, of its VPCZoneIdentifier or of its
 * PlacementGroup. Nothing else of the group (sizes, tags, target groups, lifecycle hooks, metrics) replaces an
 * instance, and nothing outside the groups does: listeners, rules, queues and policies are outside the key by
 * construction, as a reference to another resource is (its logical id, not its value, is digested: the launch template
 * of a stack that imports a value does not change when the value does).
 *
 * What replaces the group or its launch template replaces the nodes too, and is in the key (rk2): the logical ids of
 * the group and of its launch template (a new id is a new resource), the properties of each whose change replaces it
 * (AutoScalingGroupName, LaunchTemplateName: CloudFormation's resource specification says which), and those
 * properties of every resource the launch data or a rolling property of the group references in the stack (a
 * security group whose GroupDescription changes is replaced, and the launch data reads its new id at deploy time).
 */

/**
 * Why a pool's nodes are replaced, in the words an operator reads (status, logs, review). `launch template` is any
 * other property of the launch template (or configuration) or group: one the object sets indirectly (a security group
 * narrowed to the pool), or one a worker-stacks release writes differently (the reconciler says `release` then).
 */
export const ROLL_CAUSES = [
  'config',
  'image',
  'instance types',
  'root volume',
  'subnets',
  'capacity',
  'launch template',
  'group replaced',
  'launch template replaced',
  'security group replaced',
  'resource replaced',
] as const;
export type RollCause = (typeof ROLL_CAUSES)[number];

/** What an object field becomes in the template: a launch template (or configuration) property, or a group property. */
const CAUSE_OF_PROPERTY: Readonly<Record<string, RollCause>> = {
  UserData: 'config',
  ImageId: 'image',
  InstanceType: 'instance types',
  Overrides: 'instance types',
  BlockDeviceMappings: 'root volume',
  VPCZoneIdentifier: 'subnets',
  InstancesDistribution: 'capacity',
};

/** One pool's (one stack's) roll key: the digest, and a digest per property it covers (so a change can say its cause). */
export interface RollKey {
  /** `rk2:` and 16 hex digits of the SHA-256 of `parts` (the prefix names the recipe: a new recipe is a new prefix). */
  readonly key: string;
  /** Short digest by property, `<group>.<property>` when the template has more than one group. */
  readonly parts: Readonly<Record<string, string>>;
}

/**
 * The recipe of the key, its prefix: rk1 read the launch data and the group's rolling properties; rk2 adds what
 * replaces the group, its launch template and the resources they reference. Keys of two recipes are not compared
 * (status.controller.rollKeys may hold a key an older release wrote).
 */
const ROLL_KEY_RECIPE = 'rk2';

/** Whether a key (as a status or a cache holds it) was made by this release's recipe, so comparing it means something. */
export function isCurrentRecipe(key: string | undefined): boolean {
  return key?.startsWith(`${ROLL_KEY_RECIPE}:`) ?? false;
}

type Template = { readonly Resources?: Readonly<Partial<Record<string, { Type?: string; Properties?: unknown }>>> };

/**
 * The roll key of a template's Auto Scaling groups (one per stack in worker-stacks). Undefined when the template has
 * no group (a stack that replaces no instance).
 */
export function rollKeyOf(template: unknown): RollKey | undefined {
  const resources = (template as Template | undefined)?.Resources ?? {};
  const groups = Object.keys(resources)
    .filter((id) => resources[id]?.Type === 'AWS::AutoScaling::AutoScalingGroup')
    .sort();
  if (groups.length === 0) return undefined;
  const parts: Record<string, string> = {};
  for (const id of groups) {
    const prefix = groups.length === 1 ? '' : `${id}.`;
    for (const [name, value] of Object.entries(groupParts(resources, id))) parts[prefix + name] = partDigest(value);
  }
  return { key: `${ROLL_KEY_RECIPE}:${partDigest(parts)}`, parts };
}

/** The roll key of a template body (JSON, as CloudFormation's GetTemplate returns it); undefined when it is not JSON. */
export function rollKeyOfBody(body: string | undefined): RollKey | undefined {
  if (!body) return undefined;
  try {
    return rollKeyOf(JSON.parse(body));
  } catch {
    return undefined;
  }
}

/** What replaces the nodes between two roll keys, as causes (sorted, each once); empty when none does. */
export function rollCauses(from: RollKey | undefined, to: RollKey | undefined): RollCause[] {
  if (!from || !to || from.key === to.key) return [];
  // A referenced resource on one side only is a reference added or removed (the launch data says that change), not a
  // replacement: a rule narrowed to a pool adds its security group to the launch data.
  const referenced = (p: string) => REPLACED.exec(p)?.[2] !== undefined;
  return causesOf(changedProperties(from, to).filter((p) => !referenced(p) || (p in from.parts && p in to.parts)));
}

/** The properties whose digest differs (present on one side only included), sorted. */
export function changedProperties(from: RollKey, to: RollKey): string[] {
  const names = new Set([...Object.keys(from.parts), ...Object.keys(to.parts)]);
  return [...names].filter((n) => from.parts[n] !== to.parts[n]).sort();
}

/** Causes of changed property names (`launchTemplate.ImageId`, `g.MixedInstancesPolicy.Overrides` …). */
export function causesOf(properties: readonly string[]): RollCause[] {
  const found = new Set<RollCause>();
  for (const p of properties) found.add(causeOf(p));
  return ROLL_CAUSES.filter((c) => found.has(c));
}

/** `replaced.group`, `replaced.launchTemplate`, `replaced.<Type>.<logical id>` (a referenced resource), with a group prefix. */
const REPLACED =
  /(?:^|\.)replaced\.(group|launchTemplate|launchConfiguration|(AWS::[A-Za-z0-9]+::[A-Za-z0-9]+)\.[^.]+)$/;

function causeOf(property: string): RollCause {
  const replaced = REPLACED.exec(property);
  if (replaced) {
    if (replaced[1] === 'group') return 'group replaced';
    const type = replaced[2] as string | undefined;
    if (type === undefined) return 'launch template replaced';
    return type === 'AWS::EC2::SecurityGroup' ? 'security group replaced' : 'resource replaced';
  }
  return CAUSE_OF_PROPERTY[property.split('.').pop() ?? ''] ?? 'launch template';
}

/**
 * The properties of one group that replace its instances, each with the resource it references read in place (a
 * launch template's data, a launch configuration's properties), so the key changes when they do even though the
 * group's own reference (`{Ref}`, `LatestVersionNumber`) reads the same.
 */
function groupParts(resources: NonNullable<Template['Resources']>, id: string): Record<string, unknown> {
  const props = (resources[id]?.Properties ?? {}) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  const spread = (prefix: string, value: unknown) => {
    if (value && typeof value === 'object' && !Array.isArray(value))
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[`${prefix}.${k}`] = v;
    else if (value !== undefined) out[prefix] = value;
  };
  // A new group (a new logical id, or a replacing property such as AutoScalingGroupName): every node is new.
  out['replaced.group'] = { id, ...replacingProperties(resources, id) };
  const launchConfiguration = referenced(resources, props.LaunchConfigurationName);
  const readsOf: unknown[] = [];
  if (launchConfiguration) {
    spread('launchConfiguration', launchConfiguration);
    out['replaced.launchConfiguration'] = { id: refOf(props.LaunchConfigurationName) };
    readsOf.push(launchConfiguration);
  } else if (props.LaunchConfigurationName !== undefined) out.LaunchConfigurationName = props.LaunchConfigurationName;
  const mixed = props.MixedInstancesPolicy as
    | {
        LaunchTemplate?: { LaunchTemplateSpecification?: unknown; Overrides?: unknown };
        InstancesDistribution?: unknown;
      }
    | undefined;
  const spec = (props.LaunchTemplate ?? mixed?.LaunchTemplate?.LaunchTemplateSpecification) as
    { LaunchTemplateId?: unknown; LaunchTemplateName?: unknown; Version?: unknown } | undefined;
  if (spec) {
    const lt = referenced(resources, spec.LaunchTemplateId ?? spec.LaunchTemplateName) as
      { LaunchTemplateData?: unknown; LaunchTemplateName?: unknown } | undefined;
    // The one property of the launch template itself that replaces it (a new id for the group); its own tags and
    // version description are updated in place.
    if (lt?.LaunchTemplateName !== undefined) out.LaunchTemplateName = lt.LaunchTemplateName;
    if (lt) {
      // A new logical id is a new launch template, a new LaunchTemplateId for the group. Its name is its own part.
      const ltId = refOf(spec.LaunchTemplateId ?? spec.LaunchTemplateName) ?? '';
      const { LaunchTemplateName: _name, ...others } = replacingProperties(resources, ltId);
      out['replaced.launchTemplate'] = { id: ltId, ...others };
      readsOf.push(lt.LaunchTemplateData);
    }
    if (lt?.LaunchTemplateData) spread('launchTemplate', lt.LaunchTemplateData);
    // A template outside the stack, or a pinned version: the reference itself is what changes.
    else out.launchTemplateSpecification = spec;
  }
  if (mixed) {
    out['MixedInstancesPolicy.Overrides'] = mixed.LaunchTemplate?.Overrides;
    out['MixedInstancesPolicy.InstancesDistribution'] = mixed.InstancesDistribution;
  }
  if (props.VPCZoneIdentifier !== undefined) out.VPCZoneIdentifier = props.VPCZoneIdentifier;
  if (props.PlacementGroup !== undefined) out.PlacementGroup = props.PlacementGroup;
  // A resource the launch data or a rolling property reads by Ref or Fn::GetAtt: when it is replaced, what the nodes
  // launch with reads its new id or attribute (CloudFormation resolves it at deploy time; the template text is equal).
  readsOf.push(props.MixedInstancesPolicy, props.VPCZoneIdentifier, props.PlacementGroup);
  const launchIds = new Set([
    refOf(props.LaunchConfigurationName),
    refOf(spec?.LaunchTemplateId),
    refOf(spec?.LaunchTemplateName),
  ]);
  for (const ref of [...referencesIn(readsOf)].sort()) {
    const type = resources[ref]?.Type;
    if (type === undefined || launchIds.has(ref) || ref === id) continue;
    out[`replaced.${type}.${ref}`] = replacingProperties(resources, ref);
  }
  return out;
}

/** The properties of a resource whose change replaces it, by CloudFormation's resource specification. */
function replacingProperties(resources: NonNullable<Template['Resources']>, id: string): Record<string, unknown> {
  const r = resources[id];
  const props = (r?.Properties ?? {}) as Record<string, unknown>;
  return Object.fromEntries(
    Object.entries(props).filter(([name]) => r?.Type !== undefined && replacesResource(r.Type, name)),
  );
}

const refOf = (value: unknown): string | undefined => {
  const ref = (value as { Ref?: unknown } | undefined)?.Ref;
  return typeof ref === 'string' ? ref : undefined;
};

/** Logical ids a value names by Ref or Fn::GetAtt (pseudo parameters and parameters included: the caller keeps resources). */
export function referencesIn(value: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(value)) value.forEach((v) => referencesIn(v, out));
  else if (value && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    if (typeof o.Ref === 'string') out.add(o.Ref);
    const att = o['Fn::GetAtt'];
    if (Array.isArray(att) && typeof att[0] === 'string') out.add(att[0]);
    else if (typeof att === 'string') out.add(att.split('.')[0]);
    Object.values(o).forEach((v) => referencesIn(v, out));
  }
  return out;
}

/** The properties of the resource a `{Ref}` names in the same template (undefined for anything else). */
function referenced(resources: NonNullable<Template['Resources']>, value: unknown): unknown {
  const ref = (value as { Ref?: unknown } | undefined)?.Ref;
  return typeof ref === 'string' ? resources[ref]?.Properties : undefined;
}

/** The digest of one roll-key part (its value in the template): a live key says which AMI id its stack runs by it. */
export function partDigest(value: unknown): string {
  return sha256Hex(canonicalJson(value ?? null)).slice(0, 16);
}

/**
 * A replacement's cause in one line: its causes, the other properties by name ("image, launch template:
 * NetworkInterfaces"). Empty when nothing rolls.
 */
export function describeRollChange(from: RollKey | undefined, to: RollKey | undefined): string {
  if (!from || !to || from.key === to.key) return '';
  const changed = changedProperties(from, to);
  const other = changed
    .filter((p) => !REPLACED.test(p))
    .map((p) => p.split('.').pop() ?? p)
    .filter((p) => !(p in CAUSE_OF_PROPERTY))
    .filter((p, i, all) => all.indexOf(p) === i);
  return rollCauses(from, to)
    .map((c) => (c === 'launch template' ? `launch template: ${other.join(', ')}` : c))
    .join(', ');
}
