import * as path from 'node:path';
import { TemplateError } from '../../core/errors';
import { declarationFrom, TemplateValues, VALUES_FILE } from '../cluster/values/template-values';
import { TemplateSource } from './template-source';

// Reading a template's values.yaml from its source, beside the other reads of templates (templates.ts): what the
// declaration says and how values are checked against it is lib/model/cluster/values/template-values.ts's, which
// reads no file.

const cache = new Map<string, { mtimeMs: number; size: number; result: TemplateValues }>();

/** Reads and checks one template's declaration. Never throws: a bad declaration comes back as problems. */
export function templateValues(
  source: TemplateSource,
  template: string,
  shownAs: string = path.join(path.basename(source.label), template, VALUES_FILE),
): TemplateValues {
  const file = path.join(template, VALUES_FILE);
  const stat = source.stat(file);
  if (!stat) return { values: [], problems: [] };
  // Keyed by the source's label: sources with one label are one source (template-source.ts).
  const key = path.join(source.label, file);
  const hit = cache.get(key);
  if (hit && hit.mtimeMs === stat.mtimeMs && hit.size === stat.size) return hit.result;
  const result = readDeclaration(source, file, shownAs);
  cache.set(key, { mtimeMs: stat.mtimeMs, size: stat.size, result });
  return result;
}

function readDeclaration(source: TemplateSource, file: string, shown: string): TemplateValues {
  let text: string;
  try {
    text = source.readText(file);
  } catch (e) {
    if (!(e instanceof TemplateError)) throw e;
    return { file: shown, values: [], problems: [e.message] };
  }
  return declarationFrom(text, shown);
}
