import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse } from 'yaml';
import { Json } from './json';

/** The nodeadm the Go module proxy serves (its only version, 2024-02-29); scripts/kube/build-nodeadm.sh pins the same. */
export const NODEADM_VERSION = 'v0.0.0-20240229193347-cfab22a10647';
const BUILD = 'bash scripts/kube/build-nodeadm.sh (or bash .ci/install-tools, which runs it)';

/** Where the build puts nodeadm, controller-gen and the CRD: `WORKER_STACKS_NODEADM_CACHE` overrides the root. */
function nodeadmDir(): string {
  const root = process.env.WORKER_STACKS_NODEADM_CACHE ?? path.join(os.homedir(), '.cache', 'worker-stacks', 'nodeadm');
  return path.join(root, NODEADM_VERSION);
}

function required(file: string, what: string): string {
  if (!fs.existsSync(file))
    throw new Error(`${what} is not built (${file} is missing); run ${BUILD} — it needs Go and the Go module proxy`);
  return file;
}

/** The Go-built `nodeadm`, or an error naming the build command (never a skip). */
export function requireNodeadm(): string {
  return required(path.join(nodeadmDir(), 'bin', 'nodeadm'), 'nodeadm');
}

/**
 * The NodeConfig CRD controller-gen generated from nodeadm's api/v1alpha1, with one change: controller-gen types a
 * runtime.RawExtension as an object, so its schema would refuse `maxPods: 58` in spec.kubelet.config, which nodeadm's
 * decoder takes (a RawExtension holds any JSON). That map's values keep x-kubernetes-preserve-unknown-fields without a
 * type; the kubelet fields themselves are checked by nodeconfig-rules.ts against KubeletConfiguration.
 */
export function nodeConfigCrd(): Json {
  const crd = parse(
    fs.readFileSync(
      required(path.join(nodeadmDir(), 'crds', 'node.eks.aws_nodeconfigs.yaml'), 'the NodeConfig CRD'),
      'utf8',
    ),
  );
  const config = crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.kubelet.properties.config;
  if (config.additionalProperties?.type !== 'object')
    throw new Error('the generated CRD no longer types spec.kubelet.config values as objects: revisit nodeConfigCrd()');
  config.additionalProperties = { 'x-kubernetes-preserve-unknown-fields': true };
  return crd;
}
