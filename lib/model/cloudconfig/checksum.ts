import { createHash } from 'node:crypto';

/** SHA-256 of exactly these bytes, lower-case hex: the config's identity everywhere. */
export function sha256Hex(bytes: Buffer | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}
