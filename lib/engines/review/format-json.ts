import { ReviewResult } from './model';

/**
 * The review as JSON for bots: the ReviewResult, pretty-printed with keys in
 * a fixed order. Its schema is lib/engines/review/review.schema.json (validated in
 * the tests); `schemaVersion` changes when the shape does.
 */
export function formatJson(r: ReviewResult): string {
  return `${JSON.stringify(r, undefined, 2)}\n`;
}
