import { isDeepStrictEqual } from 'node:util';
import { Document, isMap, isPair, isScalar, Pair, parseDocument, YAMLMap } from 'yaml';
import { WorkerStacksError } from '../../core/errors';

/**
 * `spec.paused` set or removed in the text of a user's cluster object, changing nothing else: the file is usually in
 * a GitOps repository, where a re-serialized file (indentation, flow sequences, quotes, blank lines) is a full-file
 * diff. The edit is textual, at the positions the YAML parser gives:
 *
 * - pause, the field present: its value is replaced in place by `true` (a comment after it stays);
 * - pause, the field absent: a line `paused: true` is added as the first key under `spec:`, with the indentation
 *   of spec's own keys (in a flow mapping, `paused: true, ` before its first key);
 * - resume: the `paused` line goes (in a flow mapping, the entry and its comma).
 *
 * So pause then resume gives back the exact bytes of a file that had no `paused` field. Whatever the edit gives is
 * parsed again and compared with the intended object; should a layout be one this edit does not handle, the
 * document is re-serialized by the `yaml` library instead (comments kept, layout normalized) rather than written wrong.
 */
export function withPaused(text: string, paused: boolean, shown = 'the cluster object'): string {
  const doc = parseDocument(text);
  if (doc.errors.length) {
    throw new WorkerStacksError(`${shown} is not valid YAML: ${doc.errors[0].message.split('\n')[0]}`, {
      hint: 'fix the file (worker-stacks validate names the problem), then pause or resume again',
    });
  }
  const intended = expected(doc, paused);
  const edited = textualEdit(text, doc, paused);
  if (edited !== undefined && sameObject(edited, intended)) return edited;
  // A layout the textual edit does not handle: the library's serialization, which keeps comments.
  if (!paused && !isMap(doc.get('spec', true))) return text;
  if (paused) doc.setIn(['spec', 'paused'], true);
  else doc.deleteIn(['spec', 'paused']);
  return doc.toString();
}

/** The object the edit must produce. */
function expected(doc: Document, paused: boolean): unknown {
  const js = doc.toJS() as { spec?: unknown } | null;
  const spec = js?.spec && typeof js.spec === 'object' ? { ...(js.spec as Record<string, unknown>) } : undefined;
  if (!paused) {
    if (spec) delete spec.paused;
    return spec ? { ...js, spec } : js;
  }
  return { ...(js ?? {}), spec: { ...(spec ?? {}), paused: true } };
}

function sameObject(text: string, intended: unknown): boolean {
  const doc = parseDocument(text);
  return doc.errors.length === 0 && isDeepStrictEqual(doc.toJS(), intended);
}

function textualEdit(text: string, doc: Document, paused: boolean): string | undefined {
  const spec = doc.get('spec', true);
  if (!isMap(spec) || !spec.range) return undefined;
  const pair = spec.items.find((p) => isScalar(p.key) && p.key.value === 'paused');
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  if (pair) return paused ? setValue(text, pair) : removePair(text, spec, pair);
  if (!paused) return text;
  return spec.flow ? addToFlow(text, spec) : addToBlock(text, doc, spec, eol);
}

/** `paused: <anything>` → `paused: true`, in place. */
function setValue(text: string, pair: Pair): string | undefined {
  const value = pair.value;
  if (!isScalar(value) || !value.range) return undefined;
  if (value.value === true) return text;
  return text.slice(0, value.range[0]) + 'true' + text.slice(value.range[1]);
}

function removePair(text: string, spec: YAMLMap, pair: Pair): string | undefined {
  const key = pair.key;
  const value = pair.value;
  if (!isScalar(key) || !key.range || !isScalar(value) || !value.range) return undefined;
  if (spec.flow) {
    const after = /^\s*,\s*/.exec(text.slice(value.range[1]));
    if (after) return text.slice(0, key.range[0]) + text.slice(value.range[1] + after[0].length);
    const before = /,\s*$/.exec(text.slice(0, key.range[0]));
    return before
      ? text.slice(0, before.index) + text.slice(value.range[1])
      : text.slice(0, key.range[0]) + text.slice(value.range[1]);
  }
  // The whole line, from its indentation to its line break (a comment after the value goes with it).
  const lineStart = text.lastIndexOf('\n', key.range[0] - 1) + 1;
  if (text.slice(lineStart, key.range[0]).trim() !== '') return undefined;
  const newline = text.indexOf('\n', value.range[1]);
  return text.slice(0, lineStart) + (newline < 0 ? '' : text.slice(newline + 1));
}

/** `spec:` then, on the next line and indented like spec's first key, `paused: true`. */
function addToBlock(text: string, doc: Document, spec: YAMLMap, eol: string): string | undefined {
  const first = spec.items.at(0);
  const specPair = isMap(doc.contents)
    ? doc.contents.items.find((p) => isPair(p) && isScalar(p.key) && p.key.value === 'spec')
    : undefined;
  if (!first || !isScalar(first.key) || !first.key.range || !specPair || !isScalar(specPair.key) || !specPair.key.range)
    return undefined;
  const firstKey = first.key.range[0];
  const indent = text.slice(text.lastIndexOf('\n', firstKey - 1) + 1, firstKey);
  if (!/^[ ]+$/.test(indent)) return undefined;
  // Right after the line of `spec:` (and its comment), before any comment that introduces the first key.
  const lineEnd = text.indexOf('\n', specPair.key.range[1]);
  if (lineEnd < 0 || lineEnd >= firstKey) return undefined;
  return text.slice(0, lineEnd + 1) + `${indent}paused: true${eol}` + text.slice(lineEnd + 1);
}

/** `spec: { a: 1 }` → `spec: { paused: true, a: 1 }`; `spec: {}` → `spec: {paused: true}`. */
function addToFlow(text: string, spec: YAMLMap): string | undefined {
  const first = spec.items.at(0);
  if (!first) {
    // A parsed document's nodes carry their ranges; without one there is nothing to edit in place.
    if (!spec.range) return undefined;
    const open = text.indexOf('{', spec.range[0]);
    return open < 0 ? undefined : text.slice(0, open + 1) + 'paused: true' + text.slice(open + 1);
  }
  if (!isScalar(first.key) || !first.key.range) return undefined;
  return text.slice(0, first.key.range[0]) + 'paused: true, ' + text.slice(first.key.range[0]);
}
