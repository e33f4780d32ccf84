import { ClusterStore } from './cluster-store';
import { FileStore } from './file-store';

/** Which store holds the cluster objects. A new store is one file plus one entry here. */
export interface StoreOptions {
  /** @default file */
  readonly kind?: 'file';
  /** Directory of `<name>.yaml` cluster objects (the file store). */
  readonly clustersDir: string;
  /** Where the file store keeps status. @default <clustersDir>/.status */
  readonly stateDir?: string;
  /** Directory file names are shown relative to. @default process.cwd() */
  readonly relativeTo?: string;
}

/** The file store's extras: the names of clusters whose object is gone but whose status stays. */
export interface StoreWithHistory extends ClusterStore {
  statusNames(): string[];
}

/** The one place a store is constructed. */
export function createStore(opts: StoreOptions): StoreWithHistory {
  switch (opts.kind ?? 'file') {
    case 'file':
      return new FileStore({ clustersDir: opts.clustersDir, stateDir: opts.stateDir, relativeTo: opts.relativeTo });
  }
}
