import { LIMITS } from '../cluster/limits';
import { UsageError } from '../errors';
import { canonicalJson } from './canonical-json';
import { CLOUD_CONFIG_HEADER } from './cloud-init';
import { IGNITION_VERSION } from './ignition';
import { ConfigFormat } from './node-config';

export interface UserDataProps {
  readonly format: ConfigFormat;
  /** SHA-256 (hex) of the big config's bytes. */
  readonly checksum: string;
  /**
   * Where the node fetches the big config: `s3://bucket/key` in every stack;
   * tests use an `http://127.0.0.1:…` URL to run the real boot tools offline.
   */
  readonly source: string;
}

/** Where the cloud-init bootstrap installs the verified config, so that later cloud-init stages apply it. */
export const CLOUD_INIT_INSTALL_PATH = '/etc/cloud/cloud.cfg.d/99-worker-stacks.cfg';

/**
 * The small user data: names the content-addressed object, embeds its
 * checksum, and makes the node refuse any other bytes. Holds no secret.
 */
export function renderUserData(props: UserDataProps): string {
  if (!/^[0-9a-f]{64}$/.test(props.checksum)) throw new UsageError(`checksum must be 64 hex digits, got ${JSON.stringify(props.checksum)}`);
  if (!/^(s3|https?):\/\/[\x21-\x7e]+$/.test(props.source) || /['"\\$`]/.test(props.source)) {
    throw new UsageError(`config source must be an s3:// or http(s):// URL without quotes, got ${JSON.stringify(props.source)}`);
  }
  const text = props.format === 'ignition' ? ignitionUserData(props) : cloudInitUserData(props);
  if (Buffer.byteLength(text) > LIMITS.smallUserDataBytes) {
    throw new UsageError(`user data is ${Buffer.byteLength(text)} bytes, over the ${LIMITS.smallUserDataBytes}-byte budget`);
  }
  return text;
}

function ignitionUserData({ checksum, source }: UserDataProps): string {
  // Ignition fetches s3:// with the instance role and refuses a hash mismatch before applying anything.
  return canonicalJson({
    ignition: { version: IGNITION_VERSION, config: { replace: { source, verification: { hash: `sha256-${checksum}` } } } },
  });
}

function cloudInitUserData({ checksum, source }: UserDataProps): string {
  const fetch = source.startsWith('s3://') ? `aws s3 cp --only-show-errors '${source}' "$tmp"` : `curl -fsS -o "$tmp" '${source}'`;
  // bootcmd runs in the init stage, every boot: fetch, verify with sha256sum -c, and only then install the
  // document where the config and final stages read it. On a mismatch nothing is installed: the node never
  // joins the cluster, and a rolling update that waits on signals fails and rolls back (fail closed).
  const script = [
    'set -eu',
    `want=${checksum}`,
    `dst=${CLOUD_INIT_INSTALL_PATH}`,
    'if [ -f "$dst" ] && echo "$want  $dst" | sha256sum -c --status -; then exit 0; fi',
    'tmp=$(mktemp)',
    "trap 'rm -f \"$tmp\"' EXIT",
    fetch,
    'if ! echo "$want  $tmp" | sha256sum -c --status -; then echo "worker-stacks: node config checksum mismatch, refusing it" >&2; exit 1; fi',
    'chmod 0600 "$tmp"',
    'mv "$tmp" "$dst"',
  ].join('\n');
  return `${CLOUD_CONFIG_HEADER}# worker-stacks bootstrap; node config sha256 ${checksum}\nbootcmd:\n  - - sh\n    - -c\n    - |\n${indent(script, 6)}\n`;
}

function indent(text: string, n: number): string {
  return text
    .split('\n')
    .map((l) => ' '.repeat(n) + l)
    .join('\n');
}
