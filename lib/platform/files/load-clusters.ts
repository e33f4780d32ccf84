import type { ImageResolver } from '../../model/channel/image-pins';
import * as path from 'node:path';
import { Problem, ValidationError } from '../../core/errors';
import { hasControlCharacter, shownName } from '../../core/shown-name';
import { LoadedCluster, parseClusterYaml } from '../../model/cluster/load';
import { subnetVpcProblems } from '../../model/cluster/network/fleet-subnets';
import { WorkerCluster } from '../../model/cluster/schema/schema';
import { validateCluster } from '../../model/cluster/validate';
import { clusterFiles, readClusterFile } from './cluster-files';

// Loading cluster files: read (cluster-files.ts), then parsed and validated by the model, which never reads a file.

export interface LoadOptions {
  /** Names of the templates under cloudconfig/. */
  readonly templates: ReadonlySet<string>;
  /** Directory that file names are shown relative to. @default process.cwd() */
  readonly relativeTo?: string;
  /** Cluster files larger than this are refused unread. @default MAX_CLUSTER_FILE_BYTES (1 MiB) */
  readonly maxBytes?: number;
  /** The image channels' pins (lib/model/channel/image-pins.ts). @default none: a pool that names a channel is refused */
  readonly images?: ImageResolver;
}

export function loadClusterFile(
  file: string,
  opts: LoadOptions,
): { cluster?: WorkerCluster; problems: readonly Problem[] } {
  const shown = shownName(path.relative(opts.relativeTo ?? process.cwd(), file) || file);
  // A cluster file is named after its object, a DNS label: a control character in the name can only mislead the
  // reader of a message (a newline would start a line that passes for another file's), so it is refused unread.
  if (hasControlCharacter(path.basename(file)))
    return {
      problems: [
        {
          file: shown,
          path: '',
          message: `the file name has a control character (shown escaped); a cluster file is named <metadata.name>.yaml: rename it`,
        },
      ],
    };
  const read = readClusterFile(file, { maxBytes: opts.maxBytes, shown });
  if (read.problem) return { problems: [read.problem] };
  const { raw, problems } = parseClusterYaml(read.text, shown);
  if (problems.length) return { problems };
  return validateCluster(raw, { file: shown, templates: opts.templates, images: opts.images });
}

/** Loads every cluster in `dir` and returns the good ones and every problem of the bad ones. */
export function loadClusters(dir: string, opts: LoadOptions): { clusters: LoadedCluster[]; problems: Problem[] } {
  const clusters: LoadedCluster[] = [];
  const problems: Problem[] = [];
  for (const file of clusterFiles(dir)) {
    const r = loadClusterFile(file, opts);
    if (r.cluster)
      clusters.push({
        file: shownName(path.relative(opts.relativeTo ?? process.cwd(), file) || file),
        cluster: r.cluster,
      });
    problems.push(...r.problems);
  }
  // Rules across objects: an object they refuse is not a valid one either.
  const fleet = subnetVpcProblems(clusters);
  const refused = new Set(fleet.map((p) => p.file));
  return { clusters: clusters.filter((c) => !refused.has(c.file)), problems: [...problems, ...fleet] };
}

/** Like loadClusters, but any problem anywhere stops everything: an invalid fleet never half-synthesizes. */
export function loadValidClusters(dir: string, opts: LoadOptions): LoadedCluster[] {
  const { clusters, problems } = loadClusters(dir, opts);
  if (problems.length) throw new ValidationError(problems);
  return clusters;
}
