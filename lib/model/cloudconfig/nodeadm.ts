import { parse as parseYaml, stringify } from 'yaml';
import { LIMITS } from '../cluster/rules/limits';
import { BootstrapProps, NodeConfigFormat } from './format';
import { NodeConfig } from './node-config';
import { eksSignalScript } from './eks-signal';
import { checkNodeConfig } from './nodeconfig-rules';

/**
 * EKS nodes on the EKS-optimized Amazon Linux 2023 AMI, joined by nodeadm from a NodeConfig (node.eks.aws/v1alpha1).
 * The stored object is the NodeConfig itself; the user data is a MIME multipart document that carries it inline (the
 * only place every nodeadm release reads it from: the 2024-02 one reads IMDS user data or one file, no drop-ins), a
 * shell part that fails closed, and a shell part that signals CloudFormation once the node is Ready (eks-signal.ts). Why, the merge order of the parts and what the AMI must do: docs/node-configs.md.
 */

/** The one file an eks-al2023 template renders: the NodeConfig, and where the verified copy lands on the node. */
export const NODECONFIG_PATH = '/etc/eks/worker-stacks/nodeconfig.yaml';
export const NODECONFIG_API_VERSION = 'node.eks.aws/v1alpha1';
/** nodeadm's MIME media type for a NodeConfig part (its configprovider: "application/" + the API group). */
export const NODECONFIG_MEDIA_TYPE = 'application/node.eks.aws';
/** Fixed, so the same config gives the same user data; no NodeConfig line can start with `--` (YAML would need quotes). */
export const MIME_BOUNDARY = '//worker-stacks//';
/** Where cloud-init keeps the raw user data (AL2023): the shell part compares the inline NodeConfig with the stored one. */
const CLOUD_INIT_USER_DATA = '/var/lib/cloud/instance/user-data.txt';

/**
 * The stored bytes: the rendered NodeConfig read back and written canonically (sorted keys, no comments, block
 * style), so that two templates that mean the same config store the same bytes and checksum.
 */
function toNodeConfig(config: NodeConfig): string {
  const file = config.files.length === 1 && config.units.length === 0 ? config.files[0] : undefined;
  if (file?.path !== NODECONFIG_PATH)
    throw new Error(
      `an eks-al2023 template renders exactly one file, ${NODECONFIG_PATH}, and no units (got ${config.files.map((f) => f.path).join(', ') || 'no file'}${config.units.length ? ` and ${config.units.length} unit(s)` : ''})`,
    );
  const doc = readNodeConfig(file.contents);
  return stringify(doc, { lineWidth: 0, sortMapEntries: true, blockQuote: 'literal' });
}

/** The YAML document as a NodeConfig object, or a thrown error naming what it lacks. */
function readNodeConfig(text: string): Record<string, unknown> {
  const doc = parseYaml(text) as unknown;
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new Error('a NodeConfig is a YAML mapping');
  const d = doc as Record<string, unknown>;
  if (d.apiVersion !== NODECONFIG_API_VERSION || d.kind !== 'NodeConfig')
    throw new Error(
      `not a NodeConfig: apiVersion ${JSON.stringify(d.apiVersion)}, kind ${JSON.stringify(d.kind)} (want ${NODECONFIG_API_VERSION}, NodeConfig)`,
    );
  return d;
}

function fromNodeConfig(text: string): Omit<NodeConfig, 'format'> {
  readNodeConfig(text);
  return { files: [{ path: NODECONFIG_PATH, mode: 0o600, contents: text }], units: [] };
}

/**
 * The shell part, run by cloud-init's scripts-user (cloud-final): fetch the content-addressed object, check its
 * SHA-256, check that the NodeConfig part of this user data is exactly those bytes, and only then keep a copy. On any
 * mismatch it masks kubelet.service for this boot, so nodeadm-run (ordered after cloud-final on the AL2023 EKS AMIs)
 * cannot start it: the node never joins, never signals, and a rolling update that waits on signals rolls back.
 * @internal exported for the user-data tests, which run it with bash against a local source
 */
export function verifyScript({ checksum, source }: BootstrapProps): string {
  const fetch = source.startsWith('s3://')
    ? `aws s3 cp --only-show-errors '${source}' "$tmp"`
    : `curl -fsS -o "$tmp" '${source}'`;
  return [
    '#!/bin/bash',
    `# worker-stacks: node config sha256 ${checksum}`,
    'set -u',
    `want=${checksum}`,
    `dst=${NODECONFIG_PATH}`,
    `userdata=\${WORKER_STACKS_USER_DATA:-${CLOUD_INIT_USER_DATA}}`,
    'refuse() { echo "worker-stacks: $1; kubelet masked" >&2; systemctl mask --runtime kubelet.service; exit 1; }',
    'tmp=$(mktemp)',
    'trap \'rm -f "$tmp"\' EXIT',
    `${fetch} || refuse "cannot fetch the node config"`,
    'echo "$want  $tmp" | sha256sum -c --status - || refuse "the stored node config does not hash to $want"',
    // Python's email package reads the part as Go's mime/multipart (nodeadm) does: the newline before a delimiter belongs to it.
    `python3 -c 'import email,sys; m=email.message_from_binary_file(open(sys.argv[1],"rb")); p=[x.get_payload(decode=True) for x in m.walk() if x.get_content_type()=="${NODECONFIG_MEDIA_TYPE}"]; sys.exit(p!=[open(sys.argv[2],"rb").read()])' "$userdata" "$tmp" || refuse "the NodeConfig in the user data is not the stored one"`,
    'install -D -m 0600 "$tmp" "$dst"',
    '',
  ].join('\n');
}

/**
 * The user data: MIME multipart/mixed with the NodeConfig part first (exactly the stored bytes, so a change of any
 * field changes the user data and rolls the pool), then the shell part that checks it against the checksum, then the
 * shell part that signals CloudFormation (cloud-init runs shell parts in order, so the check comes first).
 */
export function nodeadmUserData(props: BootstrapProps): string {
  if (props.config === undefined) throw new Error('the eks-al2023 user data carries the NodeConfig: pass its bytes');
  if (props.signal === undefined)
    throw new Error("the eks-al2023 user data signals CloudFormation: pass the pool's signal target");
  if (props.formatScripts === undefined)
    throw new Error('the eks-al2023 user data renders its signal script: pass the source of the format scripts');
  const config = props.config.endsWith('\n') ? props.config : `${props.config}\n`;
  return [
    'MIME-Version: 1.0',
    `Content-Type: multipart/mixed; boundary="${MIME_BOUNDARY}"`,
    '',
    `--${MIME_BOUNDARY}`,
    `Content-Type: ${NODECONFIG_MEDIA_TYPE}`,
    '',
    // The newline before the next delimiter belongs to the delimiter (RFC 2046): the part is exactly `config`.
    config,
    `--${MIME_BOUNDARY}`,
    'Content-Type: text/x-shellscript; charset="us-ascii"',
    '',
    verifyScript(props),
    `--${MIME_BOUNDARY}`,
    'Content-Type: text/x-shellscript; charset="us-ascii"',
    '',
    eksSignalScript(config, props.signal, NODECONFIG_PATH, props.formatScripts),
    `--${MIME_BOUNDARY}--`,
    '',
  ].join('\n');
}

export const NODEADM: NodeConfigFormat = {
  extension: 'nodeconfig',
  contentType: 'application/yaml',
  serialize: toNodeConfig,
  parse: fromNodeConfig,
  userData: nodeadmUserData,
  userDataBudget: LIMITS.userDataBytes,
  check: checkNodeConfig,
  imageFamilies: ['eks-al2023'],
  joinsEks: true,
};
