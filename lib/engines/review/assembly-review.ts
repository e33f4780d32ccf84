import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ReviewError } from '../../core/errors';
import { withCleanup } from './git';
import { ClusterReview, ReviewResult } from './model';
import { readSideInputs, stageClusters } from './inputs';
import { synthesizeProject } from './synth-revision';
import { compareSides } from './compare-sides';

/*
 * The pre-upgrade review: the same objects, the release in use against this one. As `cdk diff` compares a deployed
 * template with a new synthesis, this compares the cloud assembly the release in use made of the objects (its
 * `npx cdk synth -o <dir>`, what it deploys) with this checkout's synthesis of the same objects, stack by stack, so
 * every "rolls" is the roll key's answer for a change of code alone: what the reconciler of this release will do to
 * each cluster's nodes. `review --base <ref>` cannot say it: it reads each revision's own objects, inside the repo.
 */
export interface AssemblyReviewOptions {
  /** The project directory of this release (head). */
  readonly projectDir: string;
  /** The cloud assembly (cdk.out) the release in use synthesized from the same objects. */
  readonly baseAssembly: string;
  /** The cluster objects (absolute, or relative to the current directory; anywhere: no git is read). */
  readonly clustersDir: string;
  /** The cloud-config templates. @default this release's own (`cloudconfig/`) */
  readonly templatesDir?: string;
  /** The release in use, as its reasons name it. @default `in use` */
  readonly baseRelease?: string;
  /** Only this cluster. @default every cluster */
  readonly cluster?: string;
}

const HOW_TO_MAKE =
  "make it with the release in use, from the same objects: in that release's checkout, WORKER_STACKS_CLUSTERS=<clusters dir> npx cdk synth -o <dir>";

export async function reviewAgainstAssembly(opts: AssemblyReviewOptions): Promise<ReviewResult> {
  const baseDir = path.resolve(opts.baseAssembly);
  if (!fs.existsSync(path.join(baseDir, 'manifest.json'))) {
    throw new ReviewError(`--base-assembly ${opts.baseAssembly}: no manifest.json there, so it is no cloud assembly`, {
      side: 'base',
      hint: HOW_TO_MAKE,
    });
  }
  const clustersDir = path.resolve(opts.clustersDir);
  if (!fs.existsSync(clustersDir)) {
    throw new ReviewError(`--clusters ${opts.clustersDir}: no such directory`, {
      side: 'head',
      hint: 'pass the directory of the cluster objects the base assembly was synthesized from',
    });
  }
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'worker-stacks-review-out-'));
  return withCleanup(
    () => fs.rmSync(tmp, { recursive: true, force: true }),
    async () => {
      // A copy: the synthesis leaves an invalid object out by removing it from the directory it reads.
      const inputs = readSideInputs(
        opts.projectDir,
        clustersDir,
        path.resolve(opts.templatesDir ?? path.join(opts.projectDir, 'cloudconfig')),
      );
      const staged = path.join(tmp, 'head.clusters');
      stageClusters(inputs, [...inputs.clusters.keys()], staged);
      const headLabel = `head (this release, ${path.basename(opts.projectDir)})`;
      const outdir = path.join(tmp, 'head.out');
      const head = await synthesizeProject(
        opts.projectDir,
        outdir,
        'head',
        headLabel,
        {},
        { dir: staged, shownAs: opts.clustersDir.replace(/[/]+$/, '') },
        opts.templatesDir ? path.resolve(opts.templatesDir) : undefined,
      );
      const label = `base assembly ${opts.baseAssembly}`;
      const result = compareSides(
        { side: 'base', label, outdir: baseDir, ref: label, empty: false, invalid: new Map() },
        { side: 'head', label: headLabel, outdir, ...head },
        { cluster: opts.cluster },
      );
      const release = `release ${opts.baseRelease ?? 'in use'} → ${releaseOf(opts.projectDir)}`;
      sameObjects(result.clusters, opts);
      return { ...result, clusters: result.clusters.map((c) => byRelease(c, release, opts.baseAssembly)) };
    },
  );
}

/**
 * The assembly must be of these objects: with none of their clusters in it, every line would blame the release for
 * what other objects did, so it is refused. (A cluster on one side only is said on that cluster: see byRelease.)
 */
function sameObjects(clusters: readonly ClusterReview[], opts: AssemblyReviewOptions): void {
  if (clusters.length === 0 || clusters.some((c) => c.status !== 'added' && c.status !== 'removed')) return;
  const only = (status: ClusterReview['status']) =>
    clusters
      .filter((c) => c.status === status)
      .map((c) => c.name)
      .join(', ') || 'none';
  throw new ReviewError(
    `--base-assembly ${opts.baseAssembly} holds none of the clusters of --clusters ${opts.clustersDir} (the assembly: ${only('removed')}; the objects: ${only('added')}): it was synthesized from other objects`,
    { side: 'base', hint: HOW_TO_MAKE },
  );
}

/**
 * The objects are the same on both sides: whatever replaces nodes is the release's doing, and its reasons say so. A
 * cluster on one side only is no change of the release's: the assembly was made from other objects (or the release
 * in use refused the object), and the cluster says so.
 */
function byRelease(c: ClusterReview, release: string, assembly: string): ClusterReview {
  if (c.status === 'added')
    return {
      ...c,
      notes: [
        ...c.notes,
        `not in the base assembly ${assembly}: the release in use did not synthesize this object (made from other objects, or it refused it); nothing here is the release's doing`,
      ],
    };
  if (c.status === 'removed')
    return {
      ...c,
      notes: [
        ...c.notes,
        `in the base assembly ${assembly} but not among the objects: the assembly was made from other objects; upgrading removes nothing`,
      ],
    };
  const say = (reasons: readonly string[]) => reasons.map((r) => `${release}: ${r}`);
  return {
    ...c,
    rollReasons: say(c.rollReasons),
    pools: c.pools.map((p) =>
      p.rollReasons.length ? { ...p, rollReasons: say(p.rollReasons), why: `${release}: ${p.why}` } : p,
    ),
  };
}

/** This release's version (package.json), as the reconciler's roll words name it. */
function releaseOf(projectDir: string): string {
  try {
    const pkg = JSON.parse(fs.readFileSync(path.join(projectDir, 'package.json'), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : 'this release';
  } catch {
    return 'this release';
  }
}
