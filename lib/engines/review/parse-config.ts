import { FORMATS } from '../../model/cloudconfig/formats';
import { ConfigFormat, NodeConfig, normalizeNodeConfig } from '../../model/cloudconfig/node-config';

/**
 * Reads a stored big config back into files and units, the form reviews
 * diff: the inverse of the format's serializer (lib/model/cloudconfig/formats.ts).
 * Throws on bytes that are not of that format.
 */
export function parseNodeConfig(bytes: Buffer, format: ConfigFormat): NodeConfig {
  return normalizeNodeConfig({ format, ...FORMATS[format].parse(bytes.toString('utf8')) });
}
