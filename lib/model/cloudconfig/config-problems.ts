import { Problem, UsageError } from '../../core/errors';
import { configBucketName, configKeyPrefix } from '../../core/naming';
import { formatPath } from '../cluster/rules/format-path';
import { poolsOf } from '../cluster/pools/pools';
import { found as named } from '../cluster/rules/rule-registry';
import { WorkerCluster } from '../cluster/schema/schema';
import { FORMATS } from './formats';
import { ConfigFormat } from './node-config';
import { RenderedConfig } from './render';
import { configUserData } from './user-data';
import { TemplateSource } from './template-source';

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
  // A nested field's path goes along: kubeletConfig.evictionHard["memory.availabel"].
  [/^spec\.kubelet\.config\.([A-Za-z0-9]+)(.*)$/, (m) => `kubeletConfig.${m[1]}${m[2]}`],
  [/^spec\.kubelet\.flags/, () => 'kubeletFlags'],
  [/^spec\.containerd\.config$/, () => 'containerdConfig'],
  [/^spec\.instance\.localStorage\.strategy$/, () => 'localStorageStrategy'],
];

/** A TOML key as the Bottlerocket rules name it (quoted when it is not bare) → the object's map key path. */
const mapKey = (name: string, key: string) =>
  formatPath([name, key.startsWith('"') ? (JSON.parse(key) as string) : key]);

/** Bottlerocket setting → the eks-bottlerocket value it is rendered from (cloudconfig/eks-bottlerocket/settings.toml.hbs). */
const BOTTLEROCKET_SOURCES: ReadonlyArray<[RegExp, (m: RegExpExecArray) => string]> = [
  [/^settings\.kubernetes\.api-server$/, () => 'apiEndpoint'],
  [/^settings\.kubernetes\.cluster-certificate$/, () => 'clusterCA'],
  [/^settings\.kubernetes\.cluster-name$/, () => 'eksClusterName'],
  [/^settings\.kubernetes\.cluster-dns-ip/, () => 'clusterDNS'],
  [/^settings\.kubernetes\.max-pods$/, () => 'maxPods'],
  [/^settings\.kubernetes\.node-labels/, () => 'nodeLabels'],
  [/^settings\.kubernetes\.node-taints/, () => 'nodeTaints'],
  ...(
    [
      ['kube-reserved', 'kubeReserved'],
      ['system-reserved', 'systemReserved'],
      ['eviction-hard', 'evictionHard'],
      ['eviction-soft', 'evictionSoft'],
      ['eviction-soft-grace-period', 'evictionSoftGracePeriod'],
    ] as const
  ).flatMap(([setting, value]): Array<[RegExp, (m: RegExpExecArray) => string]> => [
    [new RegExp(`^settings\\.kubernetes\\.${setting}\\.(.+)$`), (m) => mapKey(value, m[1])],
    [new RegExp(`^settings\\.kubernetes\\.${setting}$`), () => value],
  ]),
  [/^settings\.kubernetes\.([a-z0-9-]+)$/, (m) => mapKey('kubernetesSettings', m[1])],
];

const SOURCES: Partial<Record<ConfigFormat, ReadonlyArray<[RegExp, (m: RegExpExecArray) => string]>>> = {
  nodeadm: NODECONFIG_SOURCES,
  bottlerocket: BOTTLEROCKET_SOURCES,
};

/** The object's field a finding at `configPath` comes from; the template as a whole when no value maps to it. */
function objectPath(format: ConfigFormat, configPath: string, values: string): string {
  for (const [re, to] of SOURCES[format] ?? []) {
    const m = re.exec(configPath);
    if (m) return `${values}.${to(m)}`;
  }
  return 'spec.cloudConfig.template';
}

/** Where a pool's own fields are: spec.pool for a single-pool object, else spec.pools[i]. */
function poolPath(cluster: WorkerCluster, pool: string): string {
  const i = cluster.spec.pools?.findIndex((p) => p.name === pool) ?? -1;
  return i < 0 ? 'spec.pool' : `spec.pools[${i}]`;
}

/** The template a pool's config comes from: its own, else the cluster's. */
const poolTemplate = (cluster: WorkerCluster, pool: string) =>
  poolsOf(cluster.spec).find((p) => p.name === pool)?.cloudConfig?.template ?? cluster.spec.cloudConfig.template;

export function configProblems(
  cluster: WorkerCluster,
  configs: ReadonlyMap<string, RenderedConfig>,
  file: string,
  /** Where the formats' own scripts are, for the user data (a TemplateSource's formatScripts). */
  formatScripts: TemplateSource,
): Problem[] {
  const many = configs.size > 1;
  // The shared stack lets the node role into the EKS cluster (or not) once, by the first pool's format: every pool
  // must be an EKS node or none (the access entry would be missing, or granted to a cluster that is not EKS).
  const first = [...configs.values()].at(0);
  const eks = first ? Boolean(FORMATS[first.format].joinsEks) : false;
  return [...configs].flatMap(([pool, config]) => {
    const format = FORMATS[config.format];
    const text = config.bytes.toString('utf8');
    const where = many ? ` (pool ${pool})` : '';
    // A value the pool sets is reported at the pool's own values; anything else at the cluster's.
    const poolValues = `${poolPath(cluster, pool)}.cloudConfig.values`;
    const ofPool = poolsOf(cluster.spec).find((p) => p.name === pool);
    const own = ofPool?.cloudConfig?.values ?? {};
    const at = (f: { path: string }) => {
      const p = objectPath(config.format, f.path, 'spec.cloudConfig.values');
      const key = p.slice('spec.cloudConfig.values.'.length).split(/[.[]/)[0];
      return p.startsWith('spec.cloudConfig.values.') && Object.hasOwn(own, key)
        ? `${poolValues}${p.slice('spec.cloudConfig.values'.length)}`
        : p;
    };
    const found: Problem[] = (format.check?.(text) ?? []).map((f) => ({
      file,
      path: at(f),
      message: `rendered ${config.format} config${where}: ${f.path ? `${f.path} ` : ''}${f.message} (rule ${f.rule})`,
      // The format's own rule (nodeadm's, Bottlerocket's: docs/node-configs.md lists them), by its id as the others.
      rule: f.rule,
    }));
    try {
      const source = `s3://${configBucketName(cluster.spec.account, cluster.spec.region)}/${configKeyPrefix(cluster.metadata.name)}${config.checksum}.${config.extension}`;
      configUserData(config, source, formatScripts);
    } catch (e) {
      if (!(e instanceof UsageError)) throw e;
      found.push({
        file,
        ...named(
          'user-data-fits',
          'spec.cloudConfig.values',
          `the ${config.format} user data${where} does not fit: ${e.message}; EC2 takes at most 16384 bytes before base64`,
        ),
      });
    }
    const family = ofPool?.imageFamily;
    if (family !== undefined && !format.imageFamilies.includes(family))
      found.push({
        file,
        ...named(
          'image-family',
          `${poolPath(cluster, pool)}.imageFamily`,
          `${family}: the ${config.format} node config${where} (template ${poolTemplate(cluster, pool)}) is read only by ${format.imageFamilies.join(', ')} images; use such an image or another template`,
        ),
      });
    if (Boolean(format.joinsEks) !== eks)
      found.push({
        file,
        ...named(
          'eks-pools-agree',
          `${poolPath(cluster, pool)}.cloudConfig.template`,
          `${poolTemplate(cluster, pool)}: the ${config.format} node config${where} ${eks ? 'does not join' : 'joins'} an EKS cluster and the first pool's ${first?.format} config ${eks ? 'does' : 'does not'}; a cluster's pools are all EKS nodes or none`,
        ),
      });
    if (format.sendsNoSignal && ofPool?.rollingUpdate.waitOnResourceSignals)
      found.push({
        file,
        ...named(
          'signals-sent',
          `${poolPath(cluster, pool)}.rollingUpdate.waitOnResourceSignals`,
          `true, but the ${config.format} node config${where} (template ${poolTemplate(cluster, pool)}) sends no CloudFormation signal: the group's creation and every roll would wait out pauseTime and roll back; set rollingUpdate.waitOnResourceSignals: false`,
        ),
      });
    return found;
  });
}
