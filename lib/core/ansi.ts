/**
 * A terminal colour (SGR: `ESC [ digits ; m`), the one escape sequence the project's text may carry: the diff engine
 * and the CLI's review colour with them. Written once; every place that keeps or removes colours reads it here.
 */
export const SGR_SOURCE = '\\x1b\\[[0-9;]*m';

/** The text without its colours (what chalk or the diff engine added on a colour terminal). */
export function stripColours(text: string): string {
  return text.replace(new RegExp(SGR_SOURCE, 'g'), '');
}
