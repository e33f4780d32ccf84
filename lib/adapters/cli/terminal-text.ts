import { SGR_SOURCE } from '../../core/ansi';
/**
 * Text for a terminal, from strings worker-stacks does not control: file names, CloudFormation events and status
 * reasons, messages of an API server. A control character in them (an escape sequence that moves the cursor,
 * rewrites the window title, writes the clipboard through OSC 52, or a carriage return that overwrites a line)
 * would act on the reader's terminal instead of being read. Every C0 and C1 control character and DEL is shown
 * as an escape (`\x1b`, `\r`, `\u009b`) instead, except newline and tab, which the output's own layout uses.
 *
 * The one sequence kept is a colour (SGR, `ESC [ digits ; m`) that is complete and carries nothing else: review
 * colours its own diff with them on a colour terminal. A colour is all such a sequence can do; any other
 * sequence, and a bare ESC, is escaped.
 */
const CONTROL = new RegExp(`${SGR_SOURCE}|[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f]`, 'g');

export function terminalText(text: string): string {
  return text.replace(CONTROL, (c) => (c.length > 1 ? c : escapeChar(c)));
}

function escapeChar(c: string): string {
  const named: Record<string, string> = {
    '\r': '\\r',
    '\x1b': '\\x1b',
    '\b': '\\b',
    '\f': '\\f',
    '\v': '\\v',
    '\0': '\\0',
  };
  const code = c.charCodeAt(0);
  return (
    named[c] ?? (code < 0x80 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`)
  );
}
