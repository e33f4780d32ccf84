import * as path from 'node:path';
import { clusterFiles } from '../../platform/files/cluster-files';
import { loadClusterFile } from '../../platform/files/load-clusters';
import { renderCluster } from '../../model/cluster/derive';
import { poolNamed, poolsOf } from '../../model/cluster/pools/pools';
import { configUserData } from '../../model/cloudconfig/user-data';
import { formatProblem } from '../../core/errors';
import { configBucketName, configKeyPrefix } from '../../core/naming';
import { EXIT, InputDirs, Io, loadOptions } from './context';
import { templateDirectory } from '../../platform/files/template-directory';

export interface RenderOptions {
  /** Print the small user data instead of the big config. @default false */
  readonly userData?: boolean;
  /** The pool whose config (or user data) to print. @default the cluster's first pool */
  readonly pool?: string;
}

/**
 * `worker-stacks render <cluster> [--pool <name>]`: one pool's big config on stdout (exactly the stored bytes, so
 * `| sha256sum` gives the checksum) and the checksum on stderr.
 */
export function renderCommand(dirs: InputDirs, name: string, io: Io, opts: RenderOptions = {}): number {
  const file = clusterFiles(dirs.clustersDir).find((f) => path.basename(f).replace(/\.ya?ml$/, '') === name);
  if (!file) {
    io.err(
      `error: no cluster object ${name} in ${dirs.clustersDir}\n  fix: run \`worker-stacks validate\` to list the clusters\n`,
    );
    return EXIT.usage;
  }
  const { cluster, problems } = loadClusterFile(file, loadOptions(dirs));
  if (!cluster) {
    for (const p of problems) io.err(`${formatProblem(p)}\n`);
    return EXIT.invalid;
  }
  // A pool name the object does not have is a mistake on the command line, not in the object: exit 2, before
  // rendering, so a typo is reported as such even while a template is broken.
  if (opts.pool !== undefined && !poolNamed(cluster.spec, opts.pool)) {
    const names = poolsOf(cluster.spec).map((p) => p.name);
    io.err(
      `error: cluster ${name} has no pool ${JSON.stringify(opts.pool)}; its pools: ${names.join(', ')}\n` +
        `  fix: pass one of them to --pool, or leave --pool out for the first (${names[0]})\n`,
    );
    return EXIT.usage;
  }
  // A template that cannot render is bad input (the object or the template), not a usage error: exit 1, with the
  // file, the field and the template's message, as `validate` reports it.
  const rendered = renderCluster(
    cluster,
    path.relative(process.cwd(), file) || file,
    templateDirectory(dirs.templatesDir),
  );
  if ('problems' in rendered) {
    for (const p of rendered.problems) io.err(`${formatProblem(p)}\n`);
    return EXIT.invalid;
  }
  // The configs by pool that the reconciler publishes from (reconciler/tasks/render.ts), so these are the bytes
  // stored for that pool's stack. Without --pool, the first pool's: what render always printed.
  const config = opts.pool === undefined ? rendered.config : rendered.configs.get(opts.pool);
  if (!config) throw new Error(`${name}: no config rendered for its pool ${opts.pool}`);
  // Every pool's object lives under the cluster's one prefix (worker-stack.ts and pool-stack.ts use the same).
  const key = `${configKeyPrefix(name)}${config.checksum}.${config.extension}`;
  if (opts.userData) {
    io.out(
      configUserData(
        config,
        `s3://${configBucketName(cluster.spec.account, cluster.spec.region)}/${key}`,
        templateDirectory(dirs.templatesDir).formatScripts,
      ),
    );
  } else {
    io.out(config.bytes.toString('utf8'));
  }
  io.err(`sha256 ${config.checksum}  ${config.format}  s3 key ${key}\n`);
  return EXIT.ok;
}
