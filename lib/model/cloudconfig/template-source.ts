/**
 * Where templates come from: the port the model reads a template directory through (issue 34: the model touches no
 * file). The file system's is lib/platform/files/template-directory.ts; a test may give one of its own.
 *
 * Paths are relative to the source's root (`ubuntu/template.yaml`, `_shared/signal.hbs`; '' for the root itself).
 */

/** The largest template file read: the repository's largest is a few KiB; 256 KiB leaves room and bounds memory. */
export const MAX_TEMPLATE_FILE_BYTES = 256 * 1024;

/** One entry of a directory, by what it is itself (a symbolic link is 'other', whatever it points at). */
export interface TemplateEntry {
  readonly name: string;
  readonly kind: 'directory' | 'file' | 'other';
}

/** What the model needs to know of a file to reuse what it made of it (template-declarations.ts's cache). */
export interface TemplateFileStat {
  readonly size: number;
  readonly mtimeMs: number;
}

export interface TemplateSource {
  /**
   * The source's identity: the resolved directory path for the file system's. Messages name files under it (so they
   * read as before the port), and the model's caches (compiled templates, partials, declarations, versions) are keyed
   * by it: two sources with one label are one source.
   */
  readonly label: string;
  /**
   * The source of a format's own scripts (eks-al2023's signal part, cloudconfig/_shared/): the repository's, whatever
   * this source is, since an operator's template directory does not replace them.
   */
  readonly formatScripts: TemplateSource;
  /** The entries of a directory, in no particular order; none when it does not exist. */
  entries(dir: string): readonly TemplateEntry[];
  /** Whether anything is at `file` (a link counts when its target exists). */
  exists(file: string): boolean;
  /** Size and modification time of what is at `file` (a link's target's); undefined when there is nothing. */
  stat(file: string): TemplateFileStat | undefined;
  /**
   * The text of `file` with LF line endings, read only if it is a regular file that really lies inside the source and
   * is at most MAX_TEMPLATE_FILE_BYTES; a TemplateError naming the file (never a link's target) otherwise.
   */
  readText(file: string): string;
  /** The bytes of a regular file the model has found with entries() and stat() (at most MAX_TEMPLATE_FILE_BYTES), for hashing. */
  readBytes(file: string): Uint8Array;
}
