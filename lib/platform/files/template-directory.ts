import * as fs from 'node:fs';
import * as path from 'node:path';
import { PROJECT_ROOT } from '../../core/paths';
import { TemplateEntry, TemplateFileStat, TemplateSource } from '../../model/cloudconfig/template-source';
import { readTemplateText } from './template-files';

// A template directory on disk as the model's TemplateSource: the model decides what to read, and every read of a file's
// text goes through readTemplateText (template-files.ts), which refuses what a hostile directory could hold.

/** The repository's own template directory. */
export const DEFAULT_TEMPLATES_DIR = path.join(PROJECT_ROOT, 'cloudconfig');

/** The template directory `dir` (relative to the working directory), labelled by its resolved path. */
export function templateDirectory(dir: string = DEFAULT_TEMPLATES_DIR): TemplateSource {
  // Absolute and without a trailing separator, so "inside the directory" checks also hold for `cloudconfig/`.
  const root = path.resolve(dir);
  return root === path.resolve(DEFAULT_TEMPLATES_DIR) ? defaultTemplates() : directorySource(root);
}

let repository: TemplateSource | undefined;

/** The repository's cloudconfig/: one source for the process, so every use of it shares the model's caches. */
export function defaultTemplates(): TemplateSource {
  return (repository ??= directorySource(path.resolve(DEFAULT_TEMPLATES_DIR)));
}

function directorySource(root: string): TemplateSource {
  const at = (file: string) => path.join(root, file);
  return {
    label: root,
    get formatScripts() {
      return defaultTemplates();
    },
    entries(dir: string): readonly TemplateEntry[] {
      if (!fs.existsSync(at(dir))) return [];
      return fs.readdirSync(at(dir), { withFileTypes: true }).map((e) => ({
        name: e.name,
        // The entry itself (a Dirent is the link, not its target).
        kind: e.isDirectory() ? 'directory' : e.isFile() ? 'file' : 'other',
      }));
    },
    exists: (file: string) => fs.existsSync(at(file)),
    stat(file: string): TemplateFileStat | undefined {
      try {
        const st = fs.statSync(at(file));
        return { size: st.size, mtimeMs: st.mtimeMs };
      } catch {
        return undefined;
      }
    },
    readText: (file: string) => readTemplateText(root, at(file)),
    readBytes: (file: string) => fs.readFileSync(at(file)),
  };
}
