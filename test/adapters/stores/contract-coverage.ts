import { StoreCapability, STORE_CAPABILITIES } from '../../../lib/adapters/stores/store-provider';

/** A contract suite: the base store contract, or the suite of one capability. */
export type ContractSuite = 'base' | StoreCapability;

const registered = new Map<string, Set<ContractSuite>>();

/** Called by each suite as it registers its tests for a store kind. */
export function recordSuite(kind: string, suite: ContractSuite): void {
  registered.set(kind, (registered.get(kind) ?? new Set<ContractSuite>()).add(suite));
}

/** The suites registered so far, by kind. */
export function registeredSuites(): ReadonlyMap<string, ReadonlySet<ContractSuite>> {
  return registered;
}

/** A registry as the check sees it: per kind, which capabilities are declared (present and not undefined). */
export type CapabilityDeclarations = Readonly<Record<string, Partial<Record<StoreCapability, unknown>>>>;

/** `kind: suite` for every suite a registry's entries need (base, and one per declared capability) that was not registered. */
export function missingSuites(
  registry: CapabilityDeclarations,
  suites: ReadonlyMap<string, ReadonlySet<ContractSuite>>,
): string[] {
  return Object.entries(registry).flatMap(([kind, provider]) => {
    const needed: ContractSuite[] = ['base', ...STORE_CAPABILITIES.filter((c) => provider[c] !== undefined)];
    return needed.filter((s) => !suites.get(kind)?.has(s)).map((s) => `${kind}: ${s}`);
  });
}
