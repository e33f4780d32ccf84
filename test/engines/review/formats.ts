import Ajv2020 from 'ajv/dist/2020';
import { lexer, parse, Tokens } from 'marked';
import schema from '../../../lib/engines/review/review.schema.json';
import { Json } from '../../helpers/json';

const ajv = new Ajv2020({ allErrors: true, strict: true });
const validate = ajv.compile(schema);

/** The JSON Schema's verdict on a document: the list of problems, empty when it is valid. */
export function schemaProblems(doc: unknown): string[] {
  return validate(doc) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}`);
}

export interface ParsedMarkdown {
  readonly headings: string[];
  /** The first table: header cells, then row cells, as text. */
  readonly table: { header: string[]; rows: string[][] } | undefined;
  /** Raw HTML blocks and inline HTML, in order. */
  readonly html: string[];
  /** Fenced code blocks. */
  readonly code: Array<{ lang: string; text: string }>;
  /** The document rendered to HTML. */
  readonly rendered: string;
}

/** The text a reader sees of inline tokens (code spans without their backticks, emphasis without its stars). */
function plain(tokens: readonly Json[]): string {
  return tokens
    .map((t) =>
      t.tokens ? plain(t.tokens) : t.type === 'codespan' || t.type === 'text' || t.type === 'escape' ? t.text : t.raw,
    )
    .join('');
}

/** Parses markdown with a real parser (marked), the way a pull-request comment is rendered. */
export function parseMarkdown(md: string): ParsedMarkdown {
  const tokens = lexer(md);
  const all: Array<{ type: string } & Record<string, Json>> = [];
  const walk = (ts: readonly Json[]) => {
    for (const t of ts) {
      all.push(t);
      if (t.tokens) walk(t.tokens);
    }
  };
  walk(tokens);
  const table = tokens.find((t): t is Tokens.Table => t.type === 'table');
  return {
    headings: all.filter((t) => t.type === 'heading').map((t) => t.text),
    table: table && {
      header: table.header.map((c) => plain(c.tokens)),
      rows: table.rows.map((r) => r.map((c) => plain(c.tokens))),
    },
    html: all.filter((t) => t.type === 'html').map((t) => String(t.raw).trim()),
    code: all.filter((t) => t.type === 'code').map((t) => ({ lang: t.lang ?? '', text: t.text })),
    rendered: parse(md, { async: false }),
  };
}
