import { parse as parseYaml } from 'yaml';
import { SignalTarget } from './format';
import { renderFormatScript } from './templates';
import { TemplateSource } from './template-source';

/**
 * The eks-al2023 node's CloudFormation signal: a shell part of its user data (cloudconfig/_shared/eks-signal-ready.sh.hbs)
 * that waits for the kubelet and for its Node to be Ready, reading it with a token from `aws eks get-token`, and signals
 * SUCCESS or FAILURE as the shared signal script does (the same partials). Its mechanism and assumptions:
 * docs/node-configs.md.
 */

/** The script's file in cloudconfig/_shared/. */
export const EKS_SIGNAL_SCRIPT = 'eks-signal-ready.sh.hbs';

/**
 * The NodeConfig's own cluster fields, so the script reads the API server nodeadm joins (its CA the script reads from
 * the verified NodeConfig on the node: not a second copy in the 16 KB). Each lands in single quotes in bash: one that
 * could leave them is refused (the schema's rules already keep them out).
 */
function clusterFields(nodeConfig: string): { clusterName: string; apiEndpoint: string } {
  const cluster = (parseYaml(nodeConfig) as { spec?: { cluster?: Record<string, unknown> } } | null)?.spec?.cluster;
  const field = (name: string, re: RegExp): string => {
    const v = cluster?.[name];
    if (typeof v !== 'string' || !re.test(v))
      throw new Error(`the NodeConfig's spec.cluster.${name} cannot go into the signal script: ${JSON.stringify(v)}`);
    return v;
  };
  return {
    clusterName: field('name', /^[0-9A-Za-z][A-Za-z0-9_-]{0,99}$/),
    apiEndpoint: field('apiServerEndpoint', /^https:\/\/[A-Za-z0-9.:[\]-]+$/),
  };
}

/** The signal part's script for the pool whose NodeConfig is `nodeConfig`, kept on the node at `nodeConfigPath`. */
export function eksSignalScript(
  nodeConfig: string,
  signal: SignalTarget,
  nodeConfigPath: string,
  /** The repository's templates (a TemplateSource's formatScripts), where the script and its partials are. */
  scripts: TemplateSource,
): string {
  const safe = /^[A-Za-z0-9._-]+$/;
  for (const [k, v] of Object.entries(signal))
    if (!safe.test(String(v)))
      throw new Error(`the signal target's ${k} cannot go into the signal script: ${JSON.stringify(v)}`);
  return renderFormatScript(EKS_SIGNAL_SCRIPT, { ...clusterFields(nodeConfig), ...signal, nodeConfigPath }, scripts);
}
