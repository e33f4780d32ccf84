import { OpenedStore, StoreOptions } from '../../../lib/adapters/stores/registry';
import { StoreWorld } from './store-harnesses';

/** What a capability's contract suite gets per test: the world, the store options on it, and the store opened from them. */
export interface CapabilityFixture {
  readonly world: StoreWorld<unknown>;
  readonly choice: StoreOptions;
  readonly opened: OpenedStore;
  /** Closes the store and removes the world. */
  dispose(): Promise<void>;
}

/** A member a suite needs from the store or the harness; absent, the suite fails naming what to complete. */
export function required<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`the contract needs ${what}`);
  return value;
}
