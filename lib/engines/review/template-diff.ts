import { Writable } from 'node:stream';
import type * as CfnDiff from '@aws-cdk/cloudformation-diff';
import { asRecord, isRecord, JsonObject } from '../../core/json';
import { lazyModule } from '../../core/lazy-module';

// Loaded at the first diff (lib/core/lazy-module.ts): importing the review engine (the CLI does) costs nothing.
// eslint-disable-next-line @typescript-eslint/no-require-imports -- see above
const cfnDiff = lazyModule(() => require('@aws-cdk/cloudformation-diff') as typeof CfnDiff);

/** One resource that differs between the base and the head template. */
export interface ResourceChange {
  readonly logicalId: string;
  /** The resource type (the head's when it changed). */
  readonly type: string;
  readonly change: 'added' | 'removed' | 'modified';
  /** What CloudFormation will do: the diff engine's ResourceImpact (WILL_UPDATE, WILL_REPLACE, MAY_REPLACE, WILL_CREATE, WILL_DESTROY, ...). */
  readonly impact: string;
  /** The construct path (aws:cdk:path metadata), when the template has it. */
  readonly path: string | null;
  /** Properties and attributes that changed; object-valued ones one level deeper (`LaunchTemplateData.UserData`). */
  readonly properties: readonly string[];
}

export interface TemplateChanges {
  readonly resources: readonly ResourceChange[];
  /** Outputs that were added, removed or modified. */
  readonly outputs: ReadonlyArray<{ readonly name: string; readonly change: 'added' | 'removed' | 'modified' }>;
  /** Other template sections that changed (Description, Parameters, ...). */
  readonly sections: readonly string[];
  /** The diff as `cdk diff` prints it (its own formatter; coloured only when chalk sees a colour terminal). */
  readonly text: string;
  /** No difference at all, as `cdk diff` says "There were no differences". */
  readonly empty: boolean;
}

/**
 * The resource-level diff of two templates with AWS's own engine (the one
 * behind `cdk diff`), computed the way `cdk diff` computes it: non-ASCII
 * mangling forgiven, CDK metadata and bootstrap-version checks hidden, and
 * every entry named by its construct path and logical id.
 */
export function diffTemplates(
  oldTemplate: JsonObject,
  newTemplate: JsonObject,
  /** The head stack's `aws:cdk:logicalId` metadata: logical id -> construct path. */
  newLogicalIdPaths: Readonly<Record<string, string>> = {},
): TemplateChanges {
  let diff = cfnDiff().fullDiff(oldTemplate, newTemplate);
  if (diff.differenceCount) {
    // CloudFormation turns non-ASCII characters into '?'; cdk diff does not report what that alone changes.
    const mangled = cfnDiff().fullDiff(
      oldTemplate,
      JSON.parse(cfnDiff().mangleLikeCloudFormation(JSON.stringify(newTemplate))) as JsonObject,
    );
    if (mangled.differenceCount < diff.differenceCount) diff = mangled;
  }
  obscure(diff);
  const paths = constructPaths(oldTemplate, newTemplate, newLogicalIdPaths);
  const resources: ResourceChange[] = [];
  diff.resources.forEachDifference((logicalId, c) => {
    if (!c.isDifferent) return;
    const properties: string[] = [];
    c.forEachDifference((_kind, name, d) => {
      const deeper =
        isRecord(d.oldValue) && isRecord(d.newValue)
          ? changedKeys(d.oldValue, d.newValue).map((k) => `${name}.${k}`)
          : [];
      properties.push(...(deeper.length ? deeper : [name]));
    });
    resources.push({
      logicalId,
      type: c.newResourceType ?? c.oldResourceType ?? 'unknown',
      change: c.isAddition ? 'added' : c.isRemoval ? 'removed' : 'modified',
      impact: c.changeImpact,
      path: paths[logicalId] ?? null,
      properties: properties.sort(),
    });
  });
  const outputs: Array<{ name: string; change: 'added' | 'removed' | 'modified' }> = [];
  diff.outputs.forEachDifference((name, d) => {
    if (d.isDifferent) outputs.push({ name, change: d.isAddition ? 'added' : d.isRemoval ? 'removed' : 'modified' });
  });
  const sections = [
    ...(['awsTemplateFormatVersion', 'transform', 'description'] as const)
      .filter((k) => diff[k]?.isDifferent)
      .map((k) => k[0].toUpperCase() + k.slice(1)),
    ...(['parameters', 'metadata', 'mappings', 'conditions', 'unknown'] as const)
      .filter((k) => diff[k].differenceCount > 0)
      .map((k) => k[0].toUpperCase() + k.slice(1)),
  ];
  return {
    resources: resources.sort((a, b) => (a.logicalId < b.logicalId ? -1 : 1)),
    outputs: outputs.sort((a, b) => (a.name < b.name ? -1 : 1)),
    sections,
    text: diff.isEmpty ? '' : format(diff, paths),
    empty: diff.isEmpty,
  };
}

/** The impacts that replace a resource (ResourceChange.impact is the engine's ResourceImpact, kept as a string). */
// The engine's enum values as strings (`satisfies` checks them against it), so this module loads without it.
const REPLACING: ReadonlySet<string> = new Set([
  'WILL_REPLACE' satisfies `${CfnDiff.ResourceImpact.WILL_REPLACE}`,
  'MAY_REPLACE' satisfies `${CfnDiff.ResourceImpact.MAY_REPLACE}`,
]);

/** Whether a change makes CloudFormation replace the resource. */
export function replaces(r: ResourceChange): boolean {
  return REPLACING.has(r.impact);
}

function format(diff: CfnDiff.TemplateDiff, paths: Record<string, string>): string {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      chunks.push(String(chunk));
      cb();
    },
  });
  cfnDiff().formatDifferences(stream, diff, paths);
  return chunks.join('');
}

/** As cdk diff does: the CDK's own metadata resource and bootstrap-version rule are not changes of the stack. */
function obscure(diff: CfnDiff.TemplateDiff): void {
  diff.unknown = diff.unknown.filter(
    (c) => !(asRecord(c?.newValue).CheckBootstrapVersion || asRecord(c?.oldValue).CheckBootstrapVersion),
  );
  diff.resources = diff.resources.filter(
    (c) => !(c?.newResourceType === 'AWS::CDK::Metadata' || c?.oldResourceType === 'AWS::CDK::Metadata'),
  );
}

/**
 * As `cdk diff` names entries: resources by their `aws:cdk:path` metadata (old,
 * then new template), then anything else the head template defines (outputs,
 * parameters, conditions) by the stack's logical-id metadata.
 */
function constructPaths(
  oldTemplate: JsonObject,
  newTemplate: JsonObject,
  logicalIds: Readonly<Record<string, string>>,
): Record<string, string> {
  const own = new Set(
    ['Resources', 'Parameters', 'Conditions', 'Outputs', 'Rules', 'Mappings'].flatMap((s) =>
      Object.keys(asRecord(newTemplate[s])),
    ),
  );
  const fromNew = pathsOf(newTemplate);
  for (const [id, p] of Object.entries(logicalIds)) if (own.has(id) && !(id in fromNew)) fromNew[id] = p;
  return { ...pathsOf(oldTemplate), ...fromNew };
}

function pathsOf(template: JsonObject): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [id, r] of Object.entries(asRecord(template.Resources))) {
    const p = asRecord(asRecord(r).Metadata)['aws:cdk:path'];
    if (typeof p === 'string') out[id] = p;
  }
  return out;
}

function changedKeys(a: Readonly<Record<string, unknown>>, b: Readonly<Record<string, unknown>>): string[] {
  return [...new Set([...Object.keys(a), ...Object.keys(b)])]
    .filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k]))
    .sort();
}
