import { Problem, UsageError } from '../../core/errors';
import { configBucketName, configKeyPrefix } from '../../core/naming';
import { WorkerCluster } from '../cluster/schema';
import { FORMATS } from './formats';
import { RenderedConfig } from './render';
import { renderUserData } from './user-data';

/**
 * What `validate` says of rendered configs, before anything touches AWS: each format's own checks of the stored bytes
 * (nodeadm: nodeconfig-rules.ts), and that the user data fits its budget (rule user-data-fits), with the object's
 * field that made the offending part, so the operator knows what to change.
 */

/** NodeConfig field → the eks-al2023 value it is rendered from (cloudconfig/eks-al2023/nodeconfig.yaml.hbs). */
const NODECONFIG_SOURCES: ReadonlyArray<[RegExp, (m: RegExpExecArray) => string]> = [
  [/^spec\.cluster\.name$/, () => 'eksClusterName'],
  [/^spec\.cluster\.apiServerEndpoint$/, () => 'apiEndpoint'],
  [/^spec\.cluster\.certificateAuthority$/, () => 'clusterCA'],
  [/^spec\.cluster\.cidr$/, () => 'serviceCidr'],
  [/^spec\.kubelet\.config\.clusterDNS(\[\d+\])?$/, () => 'clusterDNS'],
  [/^spec\.kubelet\.config\.maxPods$/, () => 'maxPods'],
  [/^spec\.kubelet\.config\.([A-Za-z0-9]+)$/, (m) => `kubeletConfig.${m[1]}`],
  [/^spec\.kubelet\.flags/, () => 'kubeletFlags'],
  [/^spec\.containerd\.config$/, () => 'containerdConfig'],
  [/^spec\.instance\.localStorage\.strategy$/, () => 'localStorageStrategy'],
];

/** The object's field a finding at `nodeConfigPath` comes from; the template as a whole when no value maps to it. */
function objectPath(nodeConfigPath: string): string {
  for (const [re, to] of NODECONFIG_SOURCES) {
    const m = re.exec(nodeConfigPath);
    if (m) return `spec.cloudConfig.values.${to(m)}`;
  }
  return 'spec.cloudConfig.template';
}

export function configProblems(
  cluster: WorkerCluster,
  configs: ReadonlyMap<string, RenderedConfig>,
  file: string,
): Problem[] {
  const many = configs.size > 1;
  return [...configs].flatMap(([pool, config]) => {
    const format = FORMATS[config.format];
    const text = config.bytes.toString('utf8');
    const where = many ? ` (pool ${pool})` : '';
    const found: Problem[] = (format.check?.(text) ?? []).map((f) => ({
      file,
      path: objectPath(f.path),
      message: `rendered ${config.format} config${where}: ${f.path ? `${f.path} ` : ''}${f.message} (rule ${f.rule})`,
    }));
    try {
      const source = `s3://${configBucketName(cluster.spec.account, cluster.spec.region)}/${configKeyPrefix(cluster.metadata.name)}${config.checksum}.${config.extension}`;
      renderUserData({ format: config.format, checksum: config.checksum, source, config: text });
    } catch (e) {
      if (!(e instanceof UsageError)) throw e;
      found.push({
        file,
        path: 'spec.cloudConfig.values',
        message: `the ${config.format} user data${where} does not fit: ${e.message} (rule user-data-fits; EC2 takes at most 16384 bytes before base64)`,
      });
    }
    return found;
  });
}
