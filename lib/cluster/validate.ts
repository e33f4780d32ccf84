import * as path from 'node:path';
import { z } from 'zod';
import { Problem } from '../errors';
import { crossFieldProblems } from './cross-field';
import { WorkerCluster, WorkerClusterSchema } from './schema';

export interface ValidationContext {
  /** The file the object came from, as shown to the user. */
  readonly file: string;
  /** Names of the templates under cloudconfig/. */
  readonly templates: ReadonlySet<string>;
}

export interface ValidationResult {
  /** The object with defaults applied, when there is no problem. */
  readonly cluster?: WorkerCluster;
  /** Every problem at once, sorted by field path. */
  readonly problems: readonly Problem[];
}

/** `['spec','listeners',2,'port']` → `spec.listeners[2].port` */
export function formatPath(segments: readonly PropertyKey[]): string {
  return segments
    .map((s, i) => (typeof s === 'number' ? `[${s}]` : i === 0 ? String(s) : `.${String(s)}`))
    .join('');
}

function issueToProblems(file: string, issue: z.core.$ZodIssue): Problem[] {
  const at = formatPath(issue.path);
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((k) => ({ file, path: formatPath([...issue.path, k]), message: 'unknown field (check the spelling against the README reference)' }));
  }
  if (issue.code === 'invalid_type' && issue.input === undefined) {
    return [{ file, path: at, message: `required field is missing (expected ${issue.expected})` }];
  }
  if (issue.code === 'invalid_value' && issue.input !== undefined) {
    return [{ file, path: at, message: `${JSON.stringify(issue.input)} is not allowed (expected one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')})` }];
  }
  return [{ file, path: at, message: issue.message }];
}

/**
 * Validates one raw object (parsed YAML). Pure: the caller supplies the file
 * name and the known templates. Schema problems and cross-field problems are
 * collected together, so a user fixes everything in one round.
 */
export function validateCluster(raw: unknown, ctx: ValidationContext): ValidationResult {
  const parsed = WorkerClusterSchema.safeParse(raw, { reportInput: true });
  const problems: Problem[] = parsed.success ? [] : parsed.error.issues.flatMap((i) => issueToProblems(ctx.file, i));
  problems.push(...crossFieldProblems(raw, ctx.templates).map((p) => ({ file: ctx.file, ...p })));

  const expectedName = path.basename(ctx.file).replace(/\.ya?ml$/, '');
  const name = (raw as { metadata?: { name?: unknown } } | undefined)?.metadata?.name;
  if (/\.ya?ml$/.test(ctx.file) && typeof name === 'string' && name !== expectedName) {
    problems.push({ file: ctx.file, path: 'metadata.name', message: `${JSON.stringify(name)} must match the file name (${expectedName})` });
  }

  const unique = dedupe(problems).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return unique.length === 0 && parsed.success ? { cluster: parsed.data, problems: [] } : { problems: unique };
}

function dedupe(problems: Problem[]): Problem[] {
  const seen = new Set<string>();
  return problems.filter((p) => {
    const k = `${p.path}\0${p.message}`;
    return seen.has(k) ? false : (seen.add(k), true);
  });
}
