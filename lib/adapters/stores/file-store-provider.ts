import { FilePolicySource } from '../../engines/rollout';
import { FileChannelStore } from '../../engines/channels';
import { FileStore } from './file-store';
import { flagString, StoreProvider } from './store-provider';

/** The file store's options: the clusters directory (`--clusters`) and where status goes (`--state-dir`). */
export interface FileStoreOptions {
  /** Directory of `<name>.yaml` cluster objects. */
  readonly clustersDir: string;
  /** Where the file store keeps status. @default <clustersDir>/.status */
  readonly stateDir?: string;
  /** Directory file names are shown relative to. @default process.cwd() */
  readonly relativeTo?: string;
}

/**
 * `--store file`, the default: cluster objects are `<clusters>/<name>.yaml`, their status `<clusters>/.status/`, rollout
 * policies `<clusters>/rollout-policies/*.yaml`. It keeps the status of a removed object (history); it has no events,
 * no leases (one daemon per directory) and no flags of its own (`--state-dir` is declared by each command that writes).
 */
export const FILE_STORE: StoreProvider<FileStoreOptions, FileStore> = {
  description: 'clusters/ and its .status',
  naming: 'its file name',
  flags: [],
  parseOptions: (values, dirs) => ({ clustersDir: dirs.clustersDir, stateDir: flagString(values, 'stateDir') }),
  createStore: (o) => new FileStore({ clustersDir: o.clustersDir, stateDir: o.stateDir, relativeTo: o.relativeTo }),
  createPolicySource: (o) => new FilePolicySource({ clustersDir: o.clustersDir, relativeTo: o.relativeTo }),
  createChannelStore: (o) => new FileChannelStore({ clustersDir: o.clustersDir, relativeTo: o.relativeTo }),
  history: (store) => store,
};
