/**
 * A name worker-stacks did not choose (a file name above all), as a message shows it: every C0 and C1 control
 * character and DEL as an escape (`\n`, `\x1b`, `\u009b`). The terminal filter of the CLI (adapters/cli/terminal-text.ts)
 * keeps newline and tab for its own layout, so a newline in a file name would start a line of its own, one that can
 * pass for another file's verdict; and a message is also read where no such filter runs (the CDK CLI prints the app's
 * errors, a log or a CI annotation quotes them). So a name is escaped where the message is made.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is what this pattern is for
const CONTROL = /[\x00-\x1f\x7f-\x9f]/g;

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '\x1b': '\\x1b', '\0': '\\0' };

export function shownName(name: string): string {
  return name.replace(CONTROL, (c) => {
    const code = c.charCodeAt(0);
    return (
      NAMED[c] ??
      (code < 0x80 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`)
    );
  });
}

/** Whether a name holds a control character (shownName would change it). */
export function hasControlCharacter(name: string): boolean {
  return new RegExp(CONTROL.source).test(name);
}
