/** What a masked value is shown as. @internal exported for its tests */
export const MASK = '********';

/**
 * Keys whose values are treated as secret, by the key's last word, in any
 * case and with `-`, `_` or `.` between words: token, password, passphrase,
 * secret, credential(s), a private/API/access/signing/... key, `*_private`
 * (cloud-init's `rsa_private`), and file-like names ending in `.key`
 * (`tls.key`, `server.key`). Plain `key` is not one: taints and labels use it.
 */
const SECRET_KEY = new RegExp(
  '(?:tokens?|passw(?:or)?d|passphrase|secrets?|credentials?' +
    '|(?:private|secret|api|access|signing|encryption|ssh|tls|client|session|master|shared)[-_.]?keys?' +
    '|[-_.]private|\\.key)$',
  'i',
);

/** A key and its separator: `key:`, `key =`, `"key":`. */
const KEY = /(["']?)([A-Za-z_][\w.-]*)\1([ \t]*[:=])/g;

/** A secret flag followed by its value after a space: `--token abc`, `-api-key "x"`. */
const FLAG = /(^|[\s"'(])(--?)([A-Za-z][\w.-]*)([ \t]+)("(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^\s"'`;|&)]+)/g;

/** An HTTP Authorization header: its scheme stays readable, its credentials do not. */
const AUTH_HEADER =
  /\b((?:proxy-)?authorization["']?[ \t]*[:=][ \t]*["']?)(?:([A-Za-z][\w-]*)([ \t]+))?([^\s"'{[][^"']*)/gi;

/** The password of a URL's user info: `https://user:password@host`. */
const URL_PASSWORD = /(\b[a-z][a-z0-9+.-]*:\/\/[^\s:@/"']+:)([^\s@/"']+)(@)/gi;

/** A YAML block scalar indicator (`|`, `>-`, `|2+`): the value is on the following, deeper-indented lines. */
const BLOCK_SCALAR = /^[|>][-+0-9]*$/;

const PEM_BEGIN = /-----BEGIN ([A-Z0-9 ]*PRIVATE KEY)-----/;
const PEM_END = /-----END [A-Z0-9 ]*PRIVATE KEY-----/;
/** A whole PEM private key on one line (JSON strings escape its newlines). */
const PEM_INLINE = /(-----BEGIN ([A-Z0-9 ]*PRIVATE KEY)-----)(.+?)(-----END \2-----)/g;

/** Whether a key names a secret. */
export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key);
}

/**
 * Masks secret values in a config file's text, line by line, before anything
 * is shown: values of secret-named keys (also YAML block values on the lines
 * below) and flags, Authorization headers, URL passwords, and the body of PEM
 * private keys. When unsure where a value ends, the rest of the line is
 * masked: showing too little is a nuisance, showing a secret is a leak. A
 * value that only refers to something else (`$token`, `${TOKEN}`,
 * `$(fetch-it)`) is not a secret and stays.
 */
export function maskSecrets(text: string): string {
  let pem = false;
  let blockIndent = -1;
  return text
    .split('\n')
    .map((line) => {
      const indent = line.slice(0, line.length - line.trimStart().length);
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
      line = line.replace(
        PEM_INLINE,
        (_all, begin: string, _type: string, _body: string, end: string) => `${begin}${MASK}${end}`,
      );
      if (PEM_BEGIN.test(line) && !PEM_END.test(line)) {
        pem = true;
        return line;
      }
      const kv = maskKeyValues(line);
      if (kv.block) blockIndent = indent.length;
      return maskUrlPasswords(maskAuthorization(maskFlags(kv.line)));
    })
    .join('\n');
}

/** Values of secret-named keys; the values of other keys are searched too (`Environment=TOKEN=x`, `?token=x`). */
function maskKeyValues(line: string): { line: string; block: boolean } {
  let out = '';
  let done = 0;
  let block = false;
  const re = new RegExp(KEY.source, 'g');
  for (let m = re.exec(line); m; m = re.exec(line)) {
    const [all, quote, key, sep] = m;
    let start = m.index + all.length;
    // `a:b` is no YAML mapping (URLs, ARNs, times); `"a":b` (JSON) and `a=b` are key and value.
    if (sep.endsWith(':') && !quote && start < line.length && !/\s/.test(line[start])) continue;
    while (line[start] === ' ' || line[start] === '\t') start++;
    re.lastIndex = start;
    if (!isSecretKey(key)) continue;
    const end = valueEnd(line, m.index, quote, start, sep.trim());
    const value = line.slice(start, end);
    if (!value) continue;
    if (BLOCK_SCALAR.test(value)) {
      block = true;
      continue;
    }
    re.lastIndex = end;
    if (isReference(value)) continue;
    const q = /^["']/.test(value) ? value[0] : '';
    out += line.slice(done, start) + q + MASK + (q && value.length > 1 && value.endsWith(q) ? q : '');
    done = end;
  }
  return { line: out + line.slice(done), block };
}

/** Where an unquoted value ends depends on what surrounds its key; by default, at the end of the line. */
function valueEnd(line: string, keyStart: number, keyQuote: string, start: number, sep: string): number {
  const first = line[start];
  if (first === '"' || first === "'") {
    const close = first === '"' ? /"(?:[^"\\]|\\.)*"/y : /'(?:[^']|'')*'/y;
    close.lastIndex = start;
    return close.test(line) ? close.lastIndex : line.length;
  }
  const before = line[keyStart - 1];
  const upTo = (chars: RegExp) => {
    const i = line.slice(start).search(chars);
    return i < 0 ? line.length : start + i;
  };
  const trimmed = (end: number) => start + line.slice(start, end).trimEnd().length;
  // Inside a quoted string (`Environment="TOKEN=x"`): up to its closing quote.
  if (!keyQuote && (before === '"' || before === "'")) return upTo(new RegExp(before));
  // A URL query parameter.
  if (before === '?' || before === '&') return upTo(/[&#\s"']/);
  // A flag (`--token=x`): up to the next argument.
  if (before === '-') return upTo(/\s/);
  // A flow mapping or sequence (`{ password: x, user: y }`): up to the next entry.
  if (depth(line.slice(0, keyStart)) > 0) return trimmed(upTo(/[,}\]]/));
  // A YAML plain value ends where a comment starts: the comment is no part of it.
  if (sep === ':') return trimmed(upTo(/[ \t]#/));
  // `Environment=TOKEN=x LEVEL=2`, `export TOKEN=x OTHER=y`, `TOKEN=x --flag`: the next assignment or flag is another item.
  const next = /[ \t]+(?=[A-Za-z_][\w.-]*=|--?[A-Za-z])/.exec(line.slice(start));
  return trimmed(next ? start + next.index : line.length);
}

/** How many `{`/`[` are open at the end of a piece of a line (quotes ignored: only a guess). */
function depth(prefix: string): number {
  let d = 0;
  for (const c of prefix) d += c === '{' || c === '[' ? 1 : c === '}' || c === ']' ? -1 : 0;
  return d;
}

function maskFlags(line: string): string {
  return line.replace(FLAG, (all, pre: string, dashes: string, name: string, space: string, value: string) => {
    if (!isSecretKey(name) || value.startsWith('-') || isReference(value)) return all;
    const q = /^["']/.test(value) ? value[0] : '';
    return `${pre}${dashes}${name}${space}${q}${MASK}${q}`;
  });
}

function maskAuthorization(line: string): string {
  return line.replace(
    AUTH_HEADER,
    (all, head: string, scheme: string | undefined, space: string | undefined, credentials: string) => {
      if (isReference(credentials.trimEnd())) return all;
      const rest = credentials.slice(credentials.trimEnd().length);
      return `${head}${scheme ? `${scheme}${space}` : ''}${MASK}${rest}`;
    },
  );
}

function maskUrlPasswords(line: string): string {
  return line.replace(URL_PASSWORD, (all, head: string, password: string, at: string) =>
    isReference(password) ? all : `${head}${MASK}${at}`,
  );
}

function isReference(value: string): boolean {
  const v = value.replace(/^["']|["']$/g, '').replace(/[\s,;]+$/, '');
  return v === '' || v.startsWith('$') || v === 'null' || v === '~' || v === MASK;
}
