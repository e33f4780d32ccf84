import { architectureOf } from '../pools/instance-architecture';
import { Found, Loose, obj, str } from '../rules/loose';
import { found } from '../rules/rule-registry';
import { rawPools } from '../pools/raw-pools';

/**
 * Every architecture a pool can run has its kubelet pin. The node installs the kubelet only when its SHA-256 equals
 * kubeletSha256.<arch> of its own node config (cloudconfig/_shared/install-kubelet.sh.hbs); a node whose architecture
 * has no pin refuses to install one and never joins, which a rolling update finds out only after it has replaced
 * the first batch. So the pool's architecture (its `architecture`, else its instance types') is held against the
 * pins its node config gets: the pool's own kubeletSha256, else the cluster's.
 */

/** The value holding the pins, by the templates' convention (a map of amd64 | arm64 to a hash). */
export const PIN_VALUE = 'kubeletSha256';
/** EC2's architecture name → the kubelet release's (dl.k8s.io/release/<v>/bin/linux/<arch>/kubelet). */
const RELEASE_ARCH = { x86_64: 'amd64', arm64: 'arm64' } as const;

/** The architectures a raw pool can run: its `architecture` when given, else those of its known instance types. */
function poolArchitectures(pool: Loose): ('x86_64' | 'arm64')[] {
  const arch = str(pool.architecture);
  if (arch === 'x86_64' || arch === 'arm64') return [arch];
  const types = Array.isArray(pool.instanceTypes) ? pool.instanceTypes : [];
  const found = types.map((t) => (typeof t === 'string' ? architectureOf(t) : undefined));
  return [...new Set(found.filter((a) => a !== undefined))].sort();
}

/**
 * `usesPins(template)`: whether the pool's template takes PIN_VALUE (its values.yaml declares it); a template that
 * installs its kubelet otherwise is not held to it. A pin map that is missing or malformed is the template
 * declaration's to report (template-values.ts), not repeated here.
 */
export function kubeletPinProblems(spec: Loose, usesPins: (template: string) => boolean): Found[] {
  const cluster = obj(spec.cloudConfig);
  const clusterPins = obj(cluster.values)[PIN_VALUE];
  const out: Found[] = [];
  for (const { pool, at, name } of rawPools(spec)) {
    const own = obj(pool.cloudConfig);
    const template = str(own.template) ?? str(cluster.template);
    if (template === undefined || !usesPins(template)) continue;
    const ownPins = obj(own.values)[PIN_VALUE];
    const pins = ownPins ?? clusterPins;
    if (!pins || typeof pins !== 'object' || Array.isArray(pins)) continue;
    // A key that is no release architecture (x86_64 for amd64) is the declaration's keyPattern to report.
    if (Object.keys(pins).some((k) => !(Object.values(RELEASE_ARCH) as string[]).includes(k))) continue;
    const where =
      ownPins === undefined ? `spec.cloudConfig.values.${PIN_VALUE}` : `${at}.cloudConfig.values.${PIN_VALUE}`;
    for (const arch of poolArchitectures(pool)) {
      const key = RELEASE_ARCH[arch];
      if ((pins as Loose)[key] !== undefined) continue;
      out.push(
        found(
          'kubelet-pins',
          where,
          `has no pin for ${key}, which pool ${name ?? at} runs (${at}.${str(pool.architecture) ? 'architecture' : 'instanceTypes'}): its nodes would refuse to install the kubelet and never join; add ${PIN_VALUE}.${key}, the SHA-256 of the kubelet of kubernetesVersion for ${key} (https://dl.k8s.io/release/VERSION/bin/linux/${key}/kubelet.sha256)`,
        ),
      );
    }
  }
  return out;
}
