import { stringify as stringifyToml } from 'smol-toml';
import { TemplateError } from '../../core/errors';
import { LIMITS } from '../cluster/rules/limits';
import { checkBottlerocket, parseBottlerocketToml } from './bottlerocket-rules';
import { BootstrapProps, NodeConfigFormat } from './format';
import { NodeConfig } from './node-config';

/**
 * EKS nodes on Bottlerocket (the aws-k8s-* variants), configured by TOML settings in the user data. Bottlerocket takes
 * TOML only: no MIME, no shell, nothing that could fetch a config and check its hash. So the user data IS the config:
 * a first comment line that carries the checksum and names the stored object, then exactly the stored bytes. Any
 * settings change changes the user data and rolls the pool; the object in S3 (the same bytes, under their SHA-256) is
 * there for review, audit and `render`, as for every format. Why, and what a node does not check: docs/node-configs.md.
 */

/** The one file an eks-bottlerocket template renders. Nominal: Bottlerocket reads its settings from the user data. */
export const BOTTLEROCKET_SETTINGS_PATH = '/etc/worker-stacks/bottlerocket-settings.toml';

type Table = Record<string, unknown>;

/** The same table with its keys sorted at every depth, so that the TOML writer's output depends on the content alone. */
function sorted(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sorted);
  if (v && typeof v === 'object' && !(v instanceof Date))
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, sorted((v as Table)[k])]),
    );
  return v;
}

/** The rendered TOML read back, or a TemplateError naming the template's mistake (not the object's). */
function readSettings(text: string): Table {
  let doc: Table;
  try {
    doc = parseBottlerocketToml(text);
  } catch (e) {
    throw new TemplateError(`the rendered Bottlerocket settings are not TOML: ${(e as Error).message.split('\n')[0]}`, {
      cause: e,
      hint: 'a key given twice (a kubernetesSettings key the template writes itself, such as max-pods) or a template that writes TOML by hand; set that setting through its own value',
    });
  }
  if (!doc.settings || typeof doc.settings !== 'object' || Array.isArray(doc.settings))
    throw new TemplateError('Bottlerocket user data is a TOML document with a [settings] table');
  return doc;
}

/** The stored bytes: the rendered TOML read back and written canonically (sorted keys, no comments). */
function toSettings(config: NodeConfig): string {
  const file = config.files.length === 1 && config.units.length === 0 ? config.files[0] : undefined;
  if (file?.path !== BOTTLEROCKET_SETTINGS_PATH)
    throw new Error(
      `an eks-bottlerocket template renders exactly one file, ${BOTTLEROCKET_SETTINGS_PATH}, and no units (got ${config.files.map((f) => f.path).join(', ') || 'no file'}${config.units.length ? ` and ${config.units.length} unit(s)` : ''})`,
    );
  const text = stringifyToml(sorted(readSettings(file.contents)));
  return text.endsWith('\n') ? text : `${text}\n`;
}

function fromSettings(text: string): Omit<NodeConfig, 'format'> {
  try {
    readSettings(text);
  } catch (e) {
    throw new Error(`not Bottlerocket settings: ${(e as Error).message}`, { cause: e });
  }
  return { files: [{ path: BOTTLEROCKET_SETTINGS_PATH, mode: 0o600, contents: text }], units: [] };
}

/** The first line of the user data: a TOML comment, so Bottlerocket reads past it. */
export const CHECKSUM_COMMENT = '# worker-stacks node config sha256';

/**
 * The user data: the checksum comment (with the object it names), then exactly the stored bytes, so that
 * `tail -n +2 | sha256sum` of the user data is the checksum.
 */
export function bottlerocketUserData({ checksum, source, config }: BootstrapProps): string {
  if (config === undefined) throw new Error('the eks-bottlerocket user data is the settings: pass their bytes');
  return `${CHECKSUM_COMMENT} ${checksum} ${source}\n${config.endsWith('\n') ? config : `${config}\n`}`;
}

export const BOTTLEROCKET: NodeConfigFormat = {
  extension: 'toml',
  contentType: 'application/toml',
  serialize: toSettings,
  parse: fromSettings,
  userData: bottlerocketUserData,
  userDataBudget: LIMITS.userDataBytes,
  check: checkBottlerocket,
  imageFamilies: ['bottlerocket'],
  joinsEks: true,
};
