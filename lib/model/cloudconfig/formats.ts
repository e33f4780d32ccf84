import { BOTTLEROCKET } from './bottlerocket';
import { CLOUD_INIT } from './cloud-init';
import { NodeConfigFormat } from './format';
import { IGNITION } from './ignition';
import { NODEADM } from './nodeadm';
import { CONFIG_FORMATS, ConfigFormat } from './node-config';

/**
 * The node-config formats, by name. Typed as a record over every name in CONFIG_FORMATS: a name without its module,
 * or a module without its name, does not compile.
 */
export const FORMATS: Readonly<Record<ConfigFormat, NodeConfigFormat>> = {
  ignition: IGNITION,
  'cloud-init': CLOUD_INIT,
  nodeadm: NODEADM,
  bottlerocket: BOTTLEROCKET,
};

/** The format whose objects carry `extension` (`ign` → ignition), or undefined. */
export function formatByExtension(extension: string): ConfigFormat | undefined {
  return CONFIG_FORMATS.find((f) => FORMATS[f].extension === extension);
}

/** `ign|yaml`: the extensions of every format, for patterns that recognise config objects. */
export function extensionPattern(): string {
  return CONFIG_FORMATS.map((f) => FORMATS[f].extension).join('|');
}
