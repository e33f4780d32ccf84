import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO } from '../helpers/clusters';

/** The user documentation: README.md and every page of docs/, as paths relative to the repository. */
export const DOCS: readonly string[] = [
  'README.md',
  ...fs
    .readdirSync(path.join(REPO, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => path.join('docs', f)),
];

/** The text of one documentation file, by its path relative to the repository. */
export function readDoc(relative: string): string {
  return fs.readFileSync(path.join(REPO, relative), 'utf8');
}

/** The lines of every shell block (```sh, ```bash, ```text) of a document, prompts and comments dropped, spaces folded. */
export function shellLines(text: string): string[] {
  const lines: string[] = [];
  for (const block of text.matchAll(/```(?:sh|bash|text)\n([\s\S]*?)```/g)) {
    for (const raw of block[1].split('\n'))
      lines.push(
        raw
          .replace(/^\$ /, '')
          .replace(/\s+#.*$/, '')
          .replace(/\s+/g, ' ')
          .trim(),
      );
  }
  return lines;
}

/** The text between two markers of a document (`<!-- name:start -->` and `<!-- name:end -->`), or undefined. */
export function markedBlock(text: string, name: string): string | undefined {
  return new RegExp(`<!-- ${name}:start -->\\n([\\s\\S]*?)<!-- ${name}:end -->`).exec(text)?.[1];
}
