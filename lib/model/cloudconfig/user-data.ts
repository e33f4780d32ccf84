import { LIMITS } from '../cluster/rules/limits';
import { UsageError } from '../../core/errors';
import { BootstrapProps } from './format';
import { FORMATS } from './formats';
import { ConfigFormat } from './node-config';
import type { RenderedConfig } from './render';
import type { TemplateSource } from './template-source';

/** @internal Where cloud-init installs the config: the user-data tests check the script against it. */

export interface UserDataProps extends BootstrapProps {
  readonly format: ConfigFormat;
}

/**
 * The small user data: names the content-addressed object, embeds its
 * checksum, and makes the node refuse any other bytes. Holds no secret.
 * The text is the format's (formats.ts); the checks are the same for every format.
 */
export function renderUserData(props: UserDataProps): string {
  if (!/^[0-9a-f]{64}$/.test(props.checksum))
    throw new UsageError(`checksum must be 64 hex digits, got ${JSON.stringify(props.checksum)}`);
  if (!/^(s3|https?):\/\/[\x21-\x7e]+$/.test(props.source) || /['"\\$`]/.test(props.source)) {
    throw new UsageError(
      `config source must be an s3:// or http(s):// URL without quotes, got ${JSON.stringify(props.source)}`,
    );
  }
  const format = FORMATS[props.format];
  const text = format.userData({
    checksum: props.checksum,
    source: props.source,
    config: props.config,
    signal: props.signal,
    formatScripts: props.formatScripts,
  });
  const budget = format.userDataBudget ?? LIMITS.smallUserDataBytes;
  if (Buffer.byteLength(text) > budget) {
    throw new UsageError(`user data is ${Buffer.byteLength(text)} bytes, over the ${budget}-byte budget`);
  }
  return text;
}

/**
 * The user data of a rendered config stored at `source`: the one mapping every caller (the stacks, render, the checks)
 * uses. `formatScripts` is where a format's own scripts are (eks-al2023's signal part): a TemplateSource's formatScripts.
 */
export function configUserData(config: RenderedConfig, source: string, formatScripts: TemplateSource): string {
  return renderUserData({
    format: config.format,
    checksum: config.checksum,
    source,
    config: config.bytes.toString('utf8'),
    signal: config.signal,
    formatScripts,
  });
}
