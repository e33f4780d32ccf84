import * as path from 'node:path';
import { loadClusterFile, clusterFiles } from '../../model/cluster/load';
import { renderCluster } from '../../model/cluster/derive';
import { renderUserData } from '../../model/cloudconfig/user-data';
import { formatProblem } from '../../core/errors';
import { configBucketName, configKeyPrefix } from '../../core/naming';
import { EXIT, InputDirs, Io, loadOptions } from './context';

export interface RenderOptions {
  /** Print the small user data instead of the big config. @default false */
  readonly userData?: boolean;
}

/**
 * `worker-stacks render <cluster>`: the big config on stdout (exactly the
 * stored bytes, so `| sha256sum` gives the checksum) and the checksum on stderr.
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
  // A template that cannot render is bad input (the object or the template), not a usage error: exit 1, with the
  // file, the field and the template's message, as `validate` reports it.
  const rendered = renderCluster(cluster, path.relative(process.cwd(), file) || file, dirs.templatesDir);
  if ('problems' in rendered) {
    for (const p of rendered.problems) io.err(`${formatProblem(p)}\n`);
    return EXIT.invalid;
  }
  const config = rendered.config;
  const key = `${configKeyPrefix(name)}${config.checksum}.${config.extension}`;
  if (opts.userData) {
    io.out(
      renderUserData({
        format: config.format,
        checksum: config.checksum,
        source: `s3://${configBucketName(cluster.spec.account, cluster.spec.region)}/${key}`,
      }),
    );
  } else {
    io.out(config.bytes.toString('utf8'));
  }
  io.err(`sha256 ${config.checksum}  ${config.format}  s3 key ${key}\n`);
  return EXIT.ok;
}
