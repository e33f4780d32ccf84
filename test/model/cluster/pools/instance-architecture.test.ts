import { spawnSync } from 'node:child_process';
import { architectureOf } from '../../../../lib/model/cluster/pools/instance-architecture';
import { PINS, requireTool } from '../../../helpers/tools';

/**
 * architectureOf reads the architecture from the instance type's name (the CRD's CEL rule reads it the same way).
 * Its source of truth is EC2's DescribeInstanceTypes: the pinned moto ships that answer for every instance type
 * (moto/ec2/resources/instance_types.json.gz, ProcessorInfo.SupportedArchitectures), and the playground's "EC2"
 * answers from it. Every type EC2 lists must get an architecture it supports.
 */
interface Listed {
  readonly version: string;
  readonly types: Record<string, readonly string[]>;
}

const listed = ((): Listed => {
  const python = requireTool('python3');
  const r = spawnSync(
    python,
    [
      '-c',
      [
        'import gzip, json, os, moto',
        "path = os.path.join(os.path.dirname(moto.__file__), 'ec2', 'resources', 'instance_types.json.gz')",
        'data = json.load(gzip.open(path))',
        "print(json.dumps({'version': moto.__version__, 'types': {k: v['ProcessorInfo']['SupportedArchitectures'] for k, v in data.items()}}))",
      ].join('\n'),
    ],
    { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  if (r.status !== 0)
    throw new Error(`could not read moto's instance types (bash .ci/install-tools installs moto): ${r.stderr}`);
  return JSON.parse(r.stdout) as Listed;
})();

test('the instance types come from the pinned moto, and there are many', () => {
  expect(listed.version).toBe(PINS.moto);
  expect(Object.keys(listed.types).length).toBeGreaterThan(1000);
});

test('every instance type EC2 lists gets an architecture it supports, macOS hosts none', () => {
  // GIVEN every instance type of DescribeInstanceTypes
  const wrong: string[] = [];
  for (const [type, archs] of Object.entries(listed.types)) {
    // WHEN its architecture is read from its name
    const mine = architectureOf(type);
    // THEN it is one EC2 gives for it (macOS hosts: none, they have their own AMIs and are out of scope)
    const mac = archs.every((a) => a.endsWith('_mac'));
    if (mac ? mine !== undefined : mine === undefined || !archs.includes(mine))
      wrong.push(`${type}: ${String(mine)} (EC2: ${archs.join(', ')})`);
  }
  expect(wrong).toEqual([]);
});

test.each([
  ['m7g.large', 'arm64'],
  ['u7i-12tb.224xlarge', 'x86_64'],
  ['p6-b200.48xlarge', 'x86_64'],
])('%s is one of the listed types, read as %s', (type, arch) => {
  expect(listed.types[type]).toContain(arch);
  expect(architectureOf(type)).toBe(arch);
});
