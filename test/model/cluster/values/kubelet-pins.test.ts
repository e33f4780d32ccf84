import { validateCluster } from '../../../../lib/model/cluster/validate';
import { TEMPLATES } from '../../../helpers/clusters';
import { Json } from '../../../helpers/json';
import { rawPoolsExample } from '../../../helpers/named-pools';

/**
 * Issue 32 item 5: every architecture a pool can run has its kubelet pin (kubeletSha256.<amd64|arm64> of the node
 * config the pool gets: its own, else the cluster's). Before, any one pin passed, and the pool's nodes refused to install
 * the kubelet at boot. The named-pools prod-eu1 has x86_64 pools (system, spot) and an arm64 one (arm).
 */

const HASH = 'b'.repeat(64);
const problems = (mutate: (o: Json) => void) => {
  const raw = rawPoolsExample();
  mutate(raw);
  return validateCluster(raw, { file: 'clusters/prod-eu1.yaml', templates: TEMPLATES }).problems.map(
    (p) => `${p.path}: ${p.message.replace(/: its nodes would.*/, '')}`,
  );
};

test.each([
  {
    what: "the cluster's pins without arm64, an arm64 pool inheriting them",
    mutate: (o: Json) => delete o.spec.cloudConfig.values.kubeletSha256.arm64,
    expected: [
      'spec.cloudConfig.values.kubeletSha256: has no pin for arm64, which pool arm runs (spec.pools[2].architecture)',
    ],
  },
  {
    what: "an arm64 pool's own pins with amd64 only",
    mutate: (o: Json) => (o.spec.pools[2].cloudConfig.values.kubeletSha256 = { amd64: HASH }),
    expected: [
      'spec.pools[2].cloudConfig.values.kubeletSha256: has no pin for arm64, which pool arm runs (spec.pools[2].architecture)',
    ],
  },
  {
    what: 'an arm64 pool known by its instance types only',
    mutate: (o: Json) => {
      delete o.spec.pools[2].architecture;
      o.spec.pools[2].cloudConfig.values.kubeletSha256 = { amd64: HASH };
    },
    expected: [
      'spec.pools[2].cloudConfig.values.kubeletSha256: has no pin for arm64, which pool arm runs (spec.pools[2].instanceTypes)',
    ],
  },
  {
    what: 'x86_64 pools with arm64 pins only',
    mutate: (o: Json) => delete o.spec.cloudConfig.values.kubeletSha256.amd64,
    expected: [
      'spec.cloudConfig.values.kubeletSha256: has no pin for amd64, which pool spot runs (spec.pools[1].instanceTypes)',
      'spec.cloudConfig.values.kubeletSha256: has no pin for amd64, which pool system runs (spec.pools[0].instanceTypes)',
    ],
  },
  {
    what: 'an arm64 pool with its own arm64 pin, the cluster with amd64 only',
    mutate: (o: Json) => {
      delete o.spec.cloudConfig.values.kubeletSha256.arm64;
      o.spec.pools[2].cloudConfig.values.kubeletSha256 = { arm64: HASH };
    },
    expected: [],
  },
])('$what', ({ mutate, expected }) => {
  // GIVEN the named pools changed so; WHEN validated; THEN exactly these problems
  expect(problems(mutate).sort()).toEqual([...expected].sort());
});
