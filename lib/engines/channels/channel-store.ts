import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseClusterYaml } from '../../model/cluster/load';
import { clusterFiles, readClusterFile } from '../../platform/files/cluster-files';
import { issueToProblems } from '../../model/cluster/validate';
import { Problem } from '../../core/errors';
import { CHANNEL_KIND, ChannelSpec, WorkerImageChannelSchema } from '../../model/channel/channel-schema';
import { asChannelStatus, ChannelStatus, EMPTY_CHANNEL_STATUS } from '../../model/channel/channel-status';
import { KnownChannel } from '../../model/channel/image-pins';

/** The directory of channel files beside the cluster objects (a file per channel, as rollout policies are). */
const CHANNEL_DIR = 'image-channels';

interface LoadedChannels {
  /** Every channel object, its spec undefined when it does not validate. */
  readonly channels: readonly (KnownChannel & { readonly source: string })[];
  /** Every problem of every channel object at once (file: field path: rule). */
  readonly problems: readonly Problem[];
}

/**
 * Where WorkerImageChannel objects and their statuses live. The file store's: `<clusters>/image-channels/<name>.yaml`,
 * statuses in `<clusters>/image-channels/.status/<name>.json`, written by the daemon and `channels refresh` only.
 */
export interface ChannelStore {
  load(): Promise<LoadedChannels>;
  writeStatus(name: string, status: ChannelStatus): Promise<void>;
  /** Lets go of connections (a Kubernetes client). @default nothing to close */
  close?(): void;
}

/**
 * Validates one channel object (a file's, or a custom resource's as `WorkerImageChannel/<name>`): every problem at
 * once, with the field path; the spec when there is none.
 */
export function validateChannelObject(raw: unknown, source: string): { problems: Problem[]; spec?: ChannelSpec } {
  const parsed = WorkerImageChannelSchema.safeParse(raw, { reportInput: true });
  return parsed.success
    ? { problems: [], spec: parsed.data.spec }
    : { problems: parsed.error.issues.flatMap((i) => issueToProblems(source, i)) };
}

/** Validates one parsed channel file: its object, and its name against the file's. */
function validateChannel(raw: unknown, file: string): Problem[] {
  const problems = validateChannelObject(raw, file).problems;
  const name = (raw as { metadata?: { name?: unknown } } | undefined)?.metadata?.name;
  const expected = path.basename(file).replace(/\.ya?ml$/, '');
  if (typeof name === 'string' && name !== expected)
    problems.push({
      file,
      path: 'metadata.name',
      message: `${JSON.stringify(name)} must match the file name (${expected})`,
    });
  return problems.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

export class FileChannelStore implements ChannelStore {
  public readonly dir: string;
  private readonly relativeTo: string;

  constructor(props: { readonly clustersDir: string; readonly relativeTo?: string }) {
    this.dir = path.resolve(props.clustersDir, CHANNEL_DIR);
    this.relativeTo = props.relativeTo ?? process.cwd();
  }

  public load(): Promise<LoadedChannels> {
    return new Promise((resolve) => resolve(this.loadSync()));
  }

  /** The same, synchronously (`worker-stacks validate`, `cdk synth`). No directory: no channel. */
  public loadSync(): LoadedChannels {
    if (!fs.existsSync(this.dir)) return { channels: [], problems: [] };
    const channels: (KnownChannel & { source: string })[] = [];
    const problems: Problem[] = [];
    for (const file of clusterFiles(this.dir)) {
      const shown = path.relative(this.relativeTo, file) || file;
      const name = path.basename(file).replace(/\.ya?ml$/, '');
      const { status, problem } = this.readStatus(name);
      if (problem)
        problems.push({ file: path.relative(this.relativeTo, this.statusPath(name)), path: '', message: problem });
      const read = readClusterFile(file, { shown });
      const parsed = read.problem ? { problems: [read.problem] } : parseClusterYaml(read.text, shown);
      const own = parsed.problems.length
        ? parsed.problems.map((p) => ({ ...p, message: p.message.replace('WorkerCluster', CHANNEL_KIND) }))
        : validateChannel(parsed.raw, shown);
      problems.push(...own);
      const spec = own.length === 0 ? WorkerImageChannelSchema.parse(parsed.raw).spec : undefined;
      channels.push({ name, source: shown, status, ...(spec ? { spec } : {}) });
    }
    return { channels, problems };
  }

  public writeStatus(name: string, status: ChannelStatus): Promise<void> {
    return new Promise((resolve) => {
      const file = this.statusPath(name);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      // Atomic: a reader sees the old status or the new one, never half of it.
      const tmp = `${file}.${process.pid}.tmp`;
      fs.writeFileSync(tmp, `${JSON.stringify(status, null, 2)}\n`);
      fs.renameSync(tmp, file);
      resolve();
    });
  }

  private statusPath(name: string): string {
    return path.join(this.dir, '.status', `${name}.json`);
  }

  /** The recorded status; one that cannot be read is a problem (the pools on the channel are refused until fixed). */
  private readStatus(name: string): { status: ChannelStatus; problem?: string } {
    let text: string;
    try {
      text = fs.readFileSync(this.statusPath(name), 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { status: EMPTY_CHANNEL_STATUS };
      return { status: EMPTY_CHANNEL_STATUS, problem: `cannot be read: ${(e as Error).message}` };
    }
    try {
      const status = asChannelStatus(JSON.parse(text));
      if (!status) throw new Error('no releases');
      return { status };
    } catch {
      return {
        status: EMPTY_CHANNEL_STATUS,
        problem:
          'is not a channel status the daemon wrote; remove it and run worker-stacks channels refresh (the releases are read again, a halt is lost)',
      };
    }
  }
}
