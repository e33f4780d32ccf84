import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { ReviewError } from '../../core/errors';
import { asRecord } from '../../core/json';

/**
 * What a revision's synthesis reads besides node_modules: its code. When any
 * of it differs between base and head, every cluster may synthesize
 * differently, so every cluster is synthesized. (`build/` is not listed: the
 * launcher uses it only when it is newer than every source, i.e. equal to them.)
 */
export const CODE_PARTS = [
  'bin',
  'lib',
  'package.json',
  'package-lock.json',
  'cdk.json',
  'tsconfig.json',
  'tsconfig.build.json',
];

/** Cluster files above this size are not read here: they are always synthesized and the app itself judges them. */
const MAX_HASHED_BYTES = 16 * 1024 * 1024;

/** A cluster file as seen on one side: its content hash, or null when it is no regular file small enough to read. */
export interface ClusterFile {
  /** The file name in the clusters directory (`prod-eu1.yaml`). */
  readonly file: string;
  /** The cluster name: the file name without `.yaml`/`.yml` (validation requires metadata.name to equal it). */
  readonly name: string;
  /** SHA-256 of the bytes; null when the entry is not a regular file (a symlink, a FIFO, a directory) or too big. */
  readonly hash: string | null;
  /** The absolute path, for copying into a scratch directory. */
  readonly source: string;
}

/** Everything one side's synthesis reads, by content. */
export interface SideInputs {
  /** By file name; the files the app would read (`*.yaml`, `*.yml` directly in the clusters directory). */
  readonly clusters: ReadonlyMap<string, ClusterFile>;
  /** Template directory files by path relative to it ('/'-separated), with their hashes. */
  readonly templates: ReadonlyMap<string, string>;
  /** Names of the templates (directories with a template.yaml). */
  readonly templateNames: ReadonlySet<string>;
  /** Per template, the other top-level directories its template.yaml names (`../_shared/x.hbs`, `../other/y.hbs`). */
  readonly templateRefs: ReadonlyMap<string, ReadonlySet<string>>;
  /** Code files by path relative to the project, with their hashes. */
  readonly code: ReadonlyMap<string, string>;
}

/** Reads one side's inputs from a project directory (the working tree, or the base's temporary worktree). */
export function readSideInputs(projectDir: string, clustersDir: string, templatesDir: string): SideInputs {
  const clusters = new Map<string, ClusterFile>();
  const dir = path.resolve(projectDir, clustersDir);
  const entries = fs.existsSync(dir) ? fs.readdirSync(dir, { withFileTypes: true }) : [];
  for (const e of entries.filter((x) => /\.ya?ml$/.test(x.name)).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const source = path.join(dir, e.name);
    // lstat, never stat: a link to /dev/zero or a FIFO must not be opened here.
    const st = fs.lstatSync(source);
    const hash = st.isFile() && st.size <= MAX_HASHED_BYTES ? sha256(fs.readFileSync(source)) : null;
    clusters.set(e.name, { file: e.name, name: e.name.replace(/\.ya?ml$/, ''), hash, source });
  }
  const templates = hashTree(path.resolve(projectDir, templatesDir));
  const templateNames = new Set(
    [...templates.keys()].filter((p) => /^[^_/][^/]*\/template\.yaml$/.test(p)).map((p) => p.split('/')[0]),
  );
  const templateRefs = new Map<string, Set<string>>();
  for (const t of templateNames) {
    const text = fs.readFileSync(path.resolve(projectDir, templatesDir, t, 'template.yaml'), 'utf8');
    templateRefs.set(t, new Set([...text.matchAll(/\.\.\/([^/\s'"]+)\//g)].map((m) => m[1])));
  }
  const code = new Map<string, string>();
  for (const part of CODE_PARTS)
    for (const [p, h] of hashTree(path.join(projectDir, part))) code.set(part + (p ? `/${p}` : ''), h);
  return { clusters, templates, templateNames, templateRefs, code };
}

/** What to synthesize on each side, and which clusters need no synthesis at all. */
export interface SynthesisPlan {
  /** Whether the code differs: then every cluster is synthesized on both sides. */
  readonly codeChanged: boolean;
  /** Template names whose files differ (`*`: a file outside any template's own directory, e.g. `_shared/`). */
  readonly templatesChanged: readonly string[];
  /** Cluster file names to synthesize at base and at head. */
  readonly base: readonly string[];
  readonly head: readonly string[];
  /** Clusters whose inputs are byte-identical at both sides: unchanged by construction, not synthesized. */
  readonly skipped: readonly ClusterFile[];
}

/**
 * Which clusters must be synthesized: those whose object bytes differ (or
 * exist on one side only), whose template's files differ, or all of them when
 * the code differs. `templateOf` reads the template an unchanged object uses;
 * when it cannot tell (undefined), the cluster is synthesized.
 */
export function planSynthesis(
  base: SideInputs,
  head: SideInputs,
  templateOf: (f: ClusterFile) => string | undefined = readTemplateName,
): SynthesisPlan {
  const codeChanged = !sameMap(base.code, head.code);
  const templatesChanged = changedTemplates(base, head);
  const affected = (f: ClusterFile) => {
    if (templatesChanged.length === 0) return false;
    if (templatesChanged.includes('*')) return true;
    const t = templateOf(f);
    return t === undefined || templatesChanged.includes(t);
  };
  const skipped: ClusterFile[] = [];
  const changed = new Set<string>();
  for (const file of new Set([...base.clusters.keys(), ...head.clusters.keys()])) {
    const a = base.clusters.get(file);
    const b = head.clusters.get(file);
    if (!codeChanged && a && b && a.hash !== null && a.hash === b.hash && !affected(b)) skipped.push(b);
    else changed.add(file);
  }
  const pick = (side: SideInputs) => [...side.clusters.keys()].filter((f) => changed.has(f)).sort();
  return {
    codeChanged,
    templatesChanged,
    base: pick(base),
    head: pick(head),
    skipped: skipped.sort((x, y) => (x.file < y.file ? -1 : 1)),
  };
}

/**
 * Templates whose files differ: a changed file in a template's directory
 * affects that template and every template whose manifest names a file there
 * (`../other/x.hbs`); one outside every template's directory (`_shared/`, a
 * file at the top) affects all of them (`*`).
 */
function changedTemplates(base: SideInputs, head: SideInputs): string[] {
  const names = new Set([...base.templateNames, ...head.templateNames]);
  const out = new Set<string>();
  for (const p of new Set([...base.templates.keys(), ...head.templates.keys()])) {
    if (base.templates.get(p) === head.templates.get(p)) continue;
    const top = p.split('/')[0];
    if (!p.includes('/') || !names.has(top)) return ['*'];
    out.add(top);
  }
  // Until nothing is added: a template may name a file of one that names a changed one.
  for (let size = -1; size !== out.size;) {
    size = out.size;
    for (const side of [base, head])
      for (const [t, refs] of side.templateRefs) if ([...refs].some((r) => out.has(r))) out.add(t);
  }
  return [...out].sort();
}

/** `spec.cloudConfig.template` of a cluster file, or undefined when the file cannot be read as such. */
export function readTemplateName(f: ClusterFile): string | undefined {
  const t = asRecord(asRecord(asRecord(readObject(f)).spec).cloudConfig).template;
  return typeof t === 'string' ? t : undefined;
}

/** `aws://account/region` of a cluster file, as the stack's environment is written; undefined when unreadable. */
export function readEnvironment(f: ClusterFile): string | undefined {
  const spec = asRecord(asRecord(readObject(f)).spec);
  return typeof spec.account === 'string' && typeof spec.region === 'string'
    ? `aws://${spec.account}/${spec.region}`
    : undefined;
}

function readObject(f: ClusterFile): unknown {
  if (f.hash === null) return undefined;
  try {
    return parseYaml(fs.readFileSync(f.source, 'utf8'), { schema: 'core' });
  } catch {
    return undefined;
  }
}

/**
 * Copies the named cluster files into `dir` (created): regular files by
 * their bytes; anything else as a symbolic link to the original, so that the
 * app judges it exactly as it would in place.
 */
export function stageClusters(inputs: SideInputs, files: readonly string[], dir: string): void {
  fs.mkdirSync(dir, { recursive: true });
  for (const file of files) {
    const f = inputs.clusters.get(file);
    if (!f) throw new ReviewError(`${file}: not among the cluster files read for this side; only those are staged`);
    if (f.hash !== null) fs.copyFileSync(f.source, path.join(dir, file));
    else fs.symlinkSync(f.source, path.join(dir, file));
  }
}

/** Every file under `root` (relative '/'-separated path -> SHA-256); a file root gives one entry ''. Links are hashed by target. */
function hashTree(root: string): Map<string, string> {
  const out = new Map<string, string>();
  const visit = (abs: string, rel: string) => {
    const st = fs.lstatSync(abs, { throwIfNoEntry: false });
    if (!st) return;
    if (st.isDirectory()) {
      for (const e of fs.readdirSync(abs).sort())
        if (e !== 'node_modules') visit(path.join(abs, e), rel ? `${rel}/${e}` : e);
    } else if (st.isSymbolicLink()) out.set(rel, `link:${fs.readlinkSync(abs)}`);
    else if (st.isFile()) out.set(rel, sha256(fs.readFileSync(abs)));
  };
  visit(root, '');
  return out;
}

function sameMap(a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) if (b.get(k) !== v) return false;
  return true;
}

function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}
