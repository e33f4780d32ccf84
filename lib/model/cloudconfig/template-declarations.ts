import * as fs from 'node:fs';
import * as path from 'node:path';
import { TemplateError } from '../../core/errors';
import { declarationFrom, TemplateValues, VALUES_FILE } from '../cluster/values/template-values';
import { readTemplateText } from './template-files';

// Reading a template's values.yaml, beside the other reads of the templates directory (templates.ts,
// template-files.ts): what the declaration says and how values are checked against it is
// lib/model/cluster/values/template-values.ts's, which reads no file.

const cache = new Map<string, { mtimeMs: number; size: number; result: TemplateValues }>();

/** Reads and checks one template's declaration. Never throws: a bad declaration comes back as problems. */
export function templateValues(
  templatesDir: string,
  template: string,
  shownAs: string = path.join(path.basename(path.resolve(templatesDir)), template, VALUES_FILE),
): TemplateValues {
  const file = path.join(templatesDir, template, VALUES_FILE);
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch {
    return { values: [], problems: [] };
  }
  const hit = cache.get(file);
  if (hit && hit.mtimeMs === stat.mtimeMs && hit.size === stat.size) return hit.result;
  const result = readDeclaration(templatesDir, file, shownAs);
  cache.set(file, { mtimeMs: stat.mtimeMs, size: stat.size, result });
  return result;
}

function readDeclaration(templatesDir: string, file: string, shown: string): TemplateValues {
  let text: string;
  try {
    text = readTemplateText(path.resolve(templatesDir), file);
  } catch (e) {
    if (!(e instanceof TemplateError)) throw e;
    return { file: shown, values: [], problems: [e.message] };
  }
  return declarationFrom(text, shown);
}
