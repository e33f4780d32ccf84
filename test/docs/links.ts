import * as fs from 'node:fs';
import * as path from 'node:path';
import { marked, Token, Tokens } from 'marked';

/** Directories never searched for markdown: dependencies, build output, VCS and tool state. */
const SKIPPED = new Set(['node_modules', 'build', 'cdk.out']);

/** Every markdown file under `root` (relative paths, sorted), outside dependencies, build output and dot-directories. */
export function markdownFiles(root: string, dir = ''): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
    const rel = path.join(dir, entry.name);
    if (entry.isDirectory() && !SKIPPED.has(entry.name) && !entry.name.startsWith('.'))
      out.push(...markdownFiles(root, rel));
    else if (entry.isFile() && entry.name.endsWith('.md')) out.push(rel);
  }
  return out.sort();
}

/** The plain text of inline tokens, as a browser shows it (code without its backticks, a link by its text). */
function plain(tokens: readonly Token[] | undefined, fallback: string): string {
  if (!tokens) return fallback;
  return tokens
    .map((t) => ('tokens' in t && t.tokens ? plain(t.tokens, '') : 'text' in t ? String(t.text) : ''))
    .join('');
}

/** GitHub's anchor for a heading's text (github-slugger): lower case, punctuation dropped, each space a hyphen. */
export function slug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors a markdown text defines: one per heading, a repeated one numbered `-1`, `-2`, ... as GitHub does. */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  void marked.walkTokens(marked.lexer(text), (t) => {
    if (t.type !== 'heading') return;
    const base = slug(plain((t as Tokens.Heading).tokens, (t as Tokens.Heading).text));
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n ? `${base}-${n}` : base);
  });
  return out;
}

/** Every link target of a markdown text (inline links, autolinks and links in tables and lists alike). */
export function links(text: string): string[] {
  const out: string[] = [];
  void marked.walkTokens(marked.lexer(text), (t) => {
    if (t.type === 'link' || t.type === 'image') out.push((t as Tokens.Link).href);
  });
  return out;
}

/** A relative link that does not resolve: the file that has it, the link, and what is missing. */
export interface BrokenLink {
  readonly file: string;
  readonly link: string;
  readonly problem: string;
}

/** The relative links of `files` (paths relative to `root`) whose file, or whose heading anchor, does not exist. */
export function brokenLinks(root: string, files: readonly string[]): BrokenLink[] {
  const broken: BrokenLink[] = [];
  const anchorsOf = new Map<string, Set<string>>();
  const anchorsIn = (file: string) => {
    if (!anchorsOf.has(file)) anchorsOf.set(file, anchors(fs.readFileSync(path.join(root, file), 'utf8')));
    return anchorsOf.get(file)!;
  };
  for (const file of files) {
    for (const link of links(fs.readFileSync(path.join(root, file), 'utf8'))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue; // https:, mailto: ...: not a file of this repository
      const hash = link.indexOf('#');
      const target = hash < 0 ? link : link.slice(0, hash);
      const anchor = hash < 0 ? undefined : link.slice(hash + 1);
      const resolved = target ? path.normalize(path.join(path.dirname(file), decodeURIComponent(target))) : file;
      if (resolved.startsWith('..') || !fs.existsSync(path.join(root, resolved))) {
        broken.push({ file, link, problem: `no file ${resolved}` });
        continue;
      }
      if (anchor !== undefined && resolved.endsWith('.md') && !anchorsIn(resolved).has(anchor)) {
        broken.push({ file, link, problem: `no heading #${anchor} in ${resolved}` });
      }
    }
  }
  return broken;
}
