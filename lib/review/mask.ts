/** What a masked value is shown as. */
export const MASK = '********';

/**
 * Keys whose values are treated as secret: the key's last word is token,
 * password, passphrase, secret, private key, API key, access key or
 * credential(s), in any case and with `-`, `_` or `.` between words
 * (`token`, `bootstrapToken`, `client_secret`, `AWS_SECRET_ACCESS_KEY`).
 */
const SECRET_KEY = /(token|passw(or)?d|passphrase|secret|secret[-_.]?key|private[-_.]?key|api[-_.]?key|access[-_.]?key|credentials?)$/i;

/** `key: value`, `key=value`, `"key": "value"`, anywhere on a line; an unquoted value ends at `,` `;` `}` `]` or the line's end. */
const KEY_VALUE = /(["']?)([A-Za-z_][\w.-]*)\1(\s*[:=][ \t]*)("(?:[^"\\]|\\.)*"|'[^']*'|[^\s,;}\]](?:[^,;}\]]*[^\s,;}\]])?)/g;

/** A YAML block scalar indicator (`|`, `>-`, `|2+`): the value is on the following, deeper-indented lines. */
const BLOCK_SCALAR = /^[|>][-+0-9]*$/;

const PEM_BEGIN = /-----BEGIN ([A-Z0-9 ]*PRIVATE KEY)-----/;
const PEM_END = /-----END [A-Z0-9 ]*PRIVATE KEY-----/;

/** Whether a key names a secret. */
export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key);
}

/**
 * Masks secret values in a config file's text, line by line, before anything
 * is shown: values of secret-named keys (also YAML block values on the lines
 * below), and the body of PEM private keys. A value that only refers to
 * something else (`$token`, `${TOKEN}`, `$(fetch-it)`) is not a secret and stays.
 */
export function maskSecrets(text: string): string {
  let pem = false;
  let blockIndent = -1;
  return text
    .split('\n')
    .map((line) => {
      const indent = /^\s*/.exec(line)![0];
      if (blockIndent >= 0) {
        if (!line.trim()) return line;
        if (indent.length > blockIndent) return `${indent}${MASK}`;
        blockIndent = -1;
      }
      if (pem) {
        if (PEM_END.test(line)) pem = false;
        else if (line.trim()) return `${indent}${MASK}`;
        return line;
      }
      if (PEM_BEGIN.test(line) && !PEM_END.test(line)) {
        pem = true;
        return line;
      }
      return line.replace(KEY_VALUE, (all, q: string, key: string, sep: string, value: string) => {
        if (!isSecretKey(key) || isReference(value)) return all;
        if (BLOCK_SCALAR.test(value)) {
          blockIndent = indent.length;
          return all;
        }
        const quote = /^["']/.test(value) ? value[0] : '';
        return `${q}${key}${q}${sep}${quote}${MASK}${quote}`;
      });
    })
    .join('\n');
}

function isReference(value: string): boolean {
  const v = value.replace(/^["']|["']$/g, '');
  return v === '' || v.startsWith('$') || v === 'null' || v === '~';
}
