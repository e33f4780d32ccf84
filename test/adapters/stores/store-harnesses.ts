import * as fs from 'node:fs';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { objectPath } from '../../../lib/platform/kube/resource';
import { ObjectEvent } from '../../../lib/model/ports/event-sink';
import { OptionsOf, StoreKind } from '../../../lib/adapters/stores/registry';
import { LeaderSettings } from '../../../lib/adapters/stores/store-provider';
import { tempDir } from '../../helpers/clusters';
import { kubeForFile } from '../../helpers/kube-crd';
import { applyObject } from '../../helpers/kube-objects';
import { UserObject } from './store-contract';

/**
 * One fresh place for a store's objects, and the user's hands on them: what a contract suite needs beside the store
 * the registry opens from `options`. The members a capability's suite needs are optional here; that suite refuses to
 * run without them (naming the harness to complete).
 */
export interface StoreWorld<O> {
  /** Options that open a store on this world alone. */
  readonly options: O;
  /** Creates or replaces the object as a user would (its status is left alone). */
  put(raw: UserObject): Promise<void>;
  /** Deletes the object as a user would. */
  remove(name: string): Promise<void>;
  /** The events a user sees on the object (`kubectl describe`), in any order. For stores with events. */
  events?(name: string): Promise<ObjectEvent[]>;
  /** Puts the object in another scope (a second namespace) and returns its qualifier. For stores with qualified names. */
  putElsewhere?(raw: UserObject): Promise<string>;
  /** Where the contract's Leases go. For stores with leader election. @default the store's defaults */
  readonly leaderSettings?: Partial<LeaderSettings>;
  /** Removes what the world made. */
  dispose(): Promise<void>;
}

export interface StoreHarness<O> {
  /**
   * Called once inside the kind's describe block: registers the hooks its worlds need (an API server for the file),
   * and returns the factory of one world per test.
   */
  prepare(): () => Promise<StoreWorld<O>>;
}

/** A world per file store test: a temp clusters directory, written as an editor saves (a temp file renamed over). */
const FILE_HARNESS: StoreHarness<OptionsOf<'file'>> = {
  prepare: () => () => {
    const dir = tempDir('file-contract');
    return Promise.resolve({
      options: { clustersDir: dir, relativeTo: dir },
      put(raw: UserObject) {
        const file = path.join(dir, `${String(raw.metadata.name)}.yaml`);
        fs.writeFileSync(`${file}.tmp`, stringify(raw));
        fs.renameSync(`${file}.tmp`, file);
        return Promise.resolve();
      },
      remove(name: string) {
        fs.rmSync(path.join(dir, `${name}.yaml`));
        return Promise.resolve();
      },
      dispose() {
        fs.rmSync(dir, { recursive: true, force: true });
        return Promise.resolve();
      },
    });
  },
};

/**
 * A real kube-apiserver and etcd with the generated CRDs, one per test file; a namespace per test, objects created
 * and replaced as `kubectl apply` does, events read as `kubectl describe` reads them.
 */
const KUBERNETES_HARNESS: StoreHarness<OptionsOf<'kubernetes'>> = {
  prepare() {
    const kube = kubeForFile();
    let n = 0;
    return async () => {
      const namespace = await kube.current.namespace(`contract-${String(++n)}`);
      const admin = kube.current.admin;
      const others: string[] = [];
      return {
        options: { kubeconfig: kube.current.api.kubeconfig, namespace },
        async put(raw: UserObject) {
          await applyObject(admin, namespace, raw);
        },
        async remove(name: string) {
          await admin.request('DELETE', objectPath(namespace, name));
        },
        async events(name: string) {
          const q = new URLSearchParams({ fieldSelector: `involvedObject.name=${name}` });
          const { body } = await admin.request<{ items: (ObjectEvent & { firstTimestamp?: string })[] }>(
            'GET',
            `/api/v1/namespaces/${namespace}/events?${q.toString()}`,
          );
          return body.items.map(({ type, reason, message }) => ({ type, reason, message }));
        },
        async putElsewhere(raw: UserObject) {
          const other = await kube.current.namespace(`${namespace}-other`);
          others.push(other);
          await applyObject(admin, other, raw);
          return other;
        },
        leaderSettings: { leaseNamespace: namespace },
        async dispose() {
          for (const ns of [namespace, ...others]) await admin.request('DELETE', `/api/v1/namespaces/${ns}`);
        },
      };
    };
  },
};

/** A harness per registered store: a kind added to lib/adapters/stores/registry.ts does not compile here until it has one. */
export const STORE_HARNESSES: { readonly [K in StoreKind]: StoreHarness<OptionsOf<K>> } = {
  file: FILE_HARNESS,
  kubernetes: KUBERNETES_HARNESS,
};
