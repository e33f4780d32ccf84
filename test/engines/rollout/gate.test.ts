import { decide, placeAll } from '../../../lib/engines/rollout/gate';
import { WaveCensuses } from '../../../lib/engines/rollout/wave-census';
import { fleet, member, NEW, OLD, policy, rollingNow, settledOnNew, T0 } from './fixtures';

const now = new Date(T0);

describe('placeAll', () => {
  test('each cluster goes to the first wave that selects it; the others to the remainder', () => {
    // GIVEN
    const f = fleet([member('c1', 'canary'), member('e1', 'early'), member('r1', undefined), member('r2', 'late')]);
    // WHEN
    const { placements } = placeAll(f);
    // THEN
    expect(Object.fromEntries([...placements].map(([n, p]) => [n, `${p.wave.name}/${p.index}/${p.size}`]))).toEqual({
      c1: 'canary/0/1',
      e1: 'early/1/1',
      r1: 'remainder/2/2',
      r2: 'remainder/2/2',
    });
  });

  test('a cluster two policies select is a conflict, and no policy places it', () => {
    // GIVEN
    const a = policy({ clusterSelector: { matchLabels: { ring: 'canary' } } }, 'a');
    const b = policy({}, 'b');
    // WHEN
    const { placements, conflicts } = placeAll(fleet([member('c1', 'canary'), member('r1', undefined)], [a, b]));
    // THEN
    expect(conflicts.get('c1')).toEqual(['a', 'b']);
    expect(placements.has('c1')).toBe(false);
    expect(placements.get('r1')?.policy.policy.metadata.name).toBe('b');
  });
});

describe('decide: waves', () => {
  // A fleet of 1 canary, 2 early and 4 in the remainder, all with the same pending change unless a row says otherwise.
  const base = () => [
    member('c1', 'canary'),
    member('e1', 'early'),
    member('e2', 'early'),
    member('r1', undefined),
    member('r2', undefined),
    member('r3', undefined),
    member('r4', undefined),
  ];
  const withOver = (over: Record<string, Partial<ReturnType<typeof member>>>) =>
    base().map((m) => ({ ...m, ...(over[m.name] ?? {}) }));

  test.each([
    // [case, who asks, the others' state, go?, reason, message part]
    ['the canary itself', 'c1', {}, true, undefined, undefined],
    ['early, canary not rolled', 'e1', {}, false, 'WaitingForWave', 'waits for wave canary: c1 has not settled'],
    [
      'remainder, nothing rolled',
      'r1',
      {},
      false,
      'WaitingForWave',
      'waits for wave canary: c1, e1, e2 have not settled',
    ],
    ['early, canary rolling', 'e1', { c1: rollingNow }, false, 'WaitingForWave', 'c1 has not settled'],
    [
      'early, canary soaking (10 of 60 min)',
      'e1',
      { c1: { ...settledOnNew(10 * 60_000) } },
      false,
      'WaitingForWave',
      'waits for wave canary to soak 1h',
    ],
    ['early, canary soaked', 'e1', { c1: { ...settledOnNew(61 * 60_000) } }, true, undefined, undefined],
    // Settled on the stack but not yet recorded Ready on it: not evidence of a soak.
    [
      'early, canary live but not recorded Ready',
      'e1',
      { c1: { live: NEW, recordedLive: OLD } },
      false,
      'WaitingForWave',
      'c1 has not settled',
    ],
    [
      'remainder, early-1 soaking',
      'r1',
      { c1: settledOnNew(3 * 3600_000), e1: settledOnNew(20 * 60_000), e2: settledOnNew(3600_000) },
      false,
      'WaitingForWave',
      'waits for wave early to soak 30m: e1',
    ],
    [
      'remainder, early soaked',
      'r1',
      { c1: settledOnNew(3 * 3600_000), e1: settledOnNew(31 * 60_000), e2: settledOnNew(3600_000) },
      true,
      undefined,
      undefined,
    ],
    // A canary on another template has another change: it does not hold this one.
    ['early, canary on another template', 'e1', { c1: { template: 'amazon-linux' } }, true, undefined, undefined],
    // A canary with nothing pending (its config did not change) holds nobody.
    ['early, canary with nothing pending', 'e1', { c1: { desired: OLD } }, true, undefined, undefined],
    // A new AMI on the canary (same config checksum): a roll like any other; once applied and soaked, it holds nobody.
    [
      'early, canary with a new AMI pending',
      'e1',
      { c1: { desired: OLD, rollPending: true } },
      false,
      'WaitingForWave',
      'c1 has not settled',
    ],
    // An image channel's release reaches clusters of other templates too: the same change, whatever the template.
    [
      'early on another template, the canary of the same image channel with its new release pending',
      'e1',
      {
        c1: { desired: OLD, rollPending: true, template: 'flatcar', channels: ['al2023-1-33'] },
        e1: { template: 'eks-al2023', channels: ['al2023-1-33'] },
      },
      false,
      'WaitingForWave',
      'c1 has not settled',
    ],
    [
      'early on another template and another channel, the canary with its new release pending',
      'e1',
      {
        c1: { desired: OLD, rollPending: true, template: 'flatcar', channels: ['al2023-1-33'] },
        e1: { template: 'eks-al2023', channels: ['bottlerocket-1-33'] },
      },
      true,
      undefined,
      undefined,
    ],
    [
      'early, the canary on its new AMI, soaked',
      'e1',
      { c1: { desired: OLD, rollPending: false } },
      true,
      undefined,
      undefined,
    ],
  ] as const)('%s (%s asks)', (_case, who, over, go, reason, text) => {
    // GIVEN
    const f = fleet(withOver(over));
    // WHEN
    const d = decide(who, f, now);
    // THEN
    expect(d.go).toBe(go);
    if (!d.go) {
      expect(d.reason).toBe(reason);
      expect(d.message).toContain(text);
    }
  });

  test('the soak requeue is the time left, the pending requeue a short recheck', () => {
    // GIVEN
    const soaking = fleet(withOver({ c1: settledOnNew(45 * 60_000) }));
    const pending = fleet(base());
    // WHEN
    const a = decide('e1', soaking, now);
    const b = decide('e1', pending, now);
    // THEN
    expect(!a.go && a.requeueAfterMs).toBe(15 * 60_000);
    expect(!b.go && b.requeueAfterMs).toBe(120_000);
  });
});

describe('decide: halt on failure', () => {
  test.each([
    // [failed cluster, asking cluster, haltOnFailure, go?]
    ['c1', 'e1', true, false],
    ['c1', 'r1', true, false],
    ['e2', 'e1', true, false],
    ['e1', 'c1', true, true], // a later wave never halts an earlier one
    ['c1', 'e1', false, true], // without haltOnFailure a failed canary holds nobody
  ] as const)('%s failed, %s asks, haltOnFailure %s: go=%s', (failed, asks, halt, go) => {
    // GIVEN
    const members = [member('c1', 'canary'), member('e1', 'early'), member('e2', 'early'), member('r1', undefined)].map(
      (m) =>
        m.name === failed
          ? {
              ...m,
              failedRoll: 'Stalled UpdateFailed: stack UPDATE_ROLLBACK_COMPLETE',
              stack: { status: 'UPDATE_ROLLBACK_COMPLETE' },
            }
          : m,
    );
    // WHEN
    const d = decide(asks, fleet(members, [policy({ haltOnFailure: halt })]), now);
    // THEN
    expect(d.go).toBe(go);
    if (!d.go && halt) {
      expect(d.reason).toBe('RolloutHalted');
      expect(d.message).toContain(`${failed}: Stalled UpdateFailed`);
    }
  });
});

describe('decide: concurrency', () => {
  const tenEarly = () => [
    member('c1', 'canary', settledOnNew(2 * 3600_000)),
    ...Array.from({ length: 10 }, (_, i) => member(`e${i}`, 'early')),
  ];

  test('10% of a 10-cluster wave is one roll at a time: a second waits, and an admitted one counts', () => {
    // GIVEN
    const rollingOne = fleet(tenEarly().map((m) => (m.name === 'e0' ? { ...m, ...rollingNow } : m)));
    const quiet = fleet(tenEarly());
    // WHEN
    const busy = decide('e1', rollingOne, now);
    const admittedElsewhere = decide('e1', quiet, now, new Set(['e5']));
    const free = decide('e1', quiet, now);
    // THEN
    expect(busy).toMatchObject({ go: false, reason: 'WaitingForWave' });
    expect(!busy.go && busy.message).toContain('1 of at most 1 rolls in progress (maxConcurrent 10%): e0');
    expect(admittedElsewhere.go).toBe(false);
    expect(free.go).toBe(true);
  });

  test('an execution recorded in the status counts as rolling before the stack shows it', () => {
    // GIVEN
    const f = fleet(tenEarly().map((m) => (m.name === 'e3' ? { ...m, executing: true } : m)));
    // WHEN
    const d = decide('e1', f, now);
    // THEN
    expect(d.go).toBe(false);
  });

  test('maxConcurrentRolls bounds the policy across waves', () => {
    // GIVEN
    const p = policy({ maxConcurrentRolls: 2, remainder: { maxConcurrent: 10 } });
    const members = [
      member('c1', 'canary', settledOnNew(9e6)),
      member('e1', 'early', settledOnNew(9e6)),
      member('r1', undefined, rollingNow),
      member('r2', undefined, rollingNow),
      member('r3', undefined),
    ];
    // WHEN
    const d = decide('r3', fleet(members, [p]), now);
    // THEN
    expect(d).toMatchObject({ go: false, reason: 'WaitingForWave' });
    expect(!d.go && d.message).toContain('2 of at most 2 rolls in progress (maxConcurrentRolls)');
  });
});

describe('decide: holds, pauses, bad policies', () => {
  test.each([
    ['spec.rollout.hold', [member('c1', 'canary', { hold: true })], [policy()], 'Held', 'spec.rollout.hold'],
    [
      'a paused policy',
      [member('c1', 'canary')],
      [policy({ paused: true })],
      'RolloutPaused',
      'worker-stacks rollout resume fleet',
    ],
    [
      'an invalid policy file',
      [member('c1', 'canary')],
      {
        policies: [],
        problems: [
          {
            file: 'clusters/rollout-policies/x.yaml',
            path: 'spec.waves[0].soak',
            message: '"1 hour" is not a duration',
          },
        ],
      },
      'RolloutPolicyInvalid',
      'clusters/rollout-policies/x.yaml: spec.waves[0].soak',
    ],
    [
      'two policies',
      [member('c1', 'canary')],
      [policy({}, 'a'), policy({}, 'b')],
      'Held',
      'policies a and b both select this cluster',
    ],
  ] as const)('%s holds the roll', (_what, members, policies, reason, text) => {
    // WHEN
    const d = decide('c1', fleet(members, policies as never), now);
    // THEN
    expect(d).toMatchObject({ go: false, reason });
    expect(!d.go && d.message).toContain(text);
  });

  test('a cluster no policy selects is never held by the rollout', () => {
    // GIVEN
    const p = policy({ clusterSelector: { matchLabels: { env: 'prod' } } });
    // WHEN
    const d = decide(
      'r1',
      fleet([member('c1', 'canary', { labels: { ring: 'canary', env: 'prod' } }), member('r1', undefined)], [p]),
      now,
    );
    // THEN
    expect(d).toEqual({ go: true });
  });
});

describe('namespaces (the Kubernetes store): a policy governs the clusters of its own namespace', () => {
  const inNs = (ns: string) => ({ policy: policy(), source: `WorkerRolloutPolicy/${ns}/fleet`, namespace: ns });

  test('a cluster is placed by the policy of its namespace only; one of another namespace is not governed', () => {
    // GIVEN a policy "fleet" in team-a and one in team-b, and canaries in both and in a third namespace
    const members = [
      member('a-c1', 'canary', { namespace: 'team-a' }),
      member('b-c1', 'canary', { namespace: 'team-b' }),
      member('x-c1', 'canary', { namespace: 'team-x' }),
    ];
    // WHEN
    const { placements, conflicts } = placeAll(
      fleet(members, { policies: [inNs('team-a'), inNs('team-b')], problems: [] }),
    );
    // THEN no conflict (each cluster sees one policy), and team-x's cluster is ungoverned
    expect(conflicts.size).toBe(0);
    expect(placements.get('a-c1')?.policy.namespace).toBe('team-a');
    expect(placements.get('b-c1')?.policy.namespace).toBe('team-b');
    expect(placements.has('x-c1')).toBe(false);
  });

  test("an invalid policy holds its namespace's rolls, not another's; a paused one names itself namespace/name", () => {
    // GIVEN team-a's policy is paused, team-b has an invalid policy, team-c has none
    const paused = { ...inNs('team-a'), policy: policy({ paused: true }) };
    const problems = [
      {
        file: 'WorkerRolloutPolicy/team-b/fleet',
        path: 'spec.waves[0].maintenanceWindows[0].timeZone',
        message: '"Berlin" is not an IANA time zone',
        namespace: 'team-b',
      },
    ];
    const f = fleet(
      [
        member('a1', 'canary', { namespace: 'team-a' }),
        member('b1', 'canary', { namespace: 'team-b' }),
        member('c1', 'canary', { namespace: 'team-c' }),
      ],
      { policies: [paused], problems },
    );
    // WHEN
    const [a, b, c] = ['a1', 'b1', 'c1'].map((n) => decide(n, f, now));
    // THEN
    expect(a).toMatchObject({
      go: false,
      reason: 'RolloutPaused',
      message: expect.stringContaining('worker-stacks rollout resume team-a/fleet'),
    });
    expect(b).toMatchObject({
      go: false,
      reason: 'RolloutPolicyInvalid',
      message: expect.stringContaining('WorkerRolloutPolicy/team-b/fleet'),
    });
    expect(c).toEqual({ go: true });
  });
});

describe('decide: a wave census kept across decisions', () => {
  const failedRoll = 'Stalled UpdateFailed: the group did not stabilize';
  test.each([
    // [case, members, policy, admitted]
    [
      'nothing rolled, one cluster of another template',
      [
        member('c1', 'canary'),
        member('e1', 'early'),
        member('r1', undefined),
        member('r4', undefined, { template: 'other' }),
      ],
      {},
      [],
    ],
    [
      'canary settled, remainder one at a time, one rolling',
      [
        member('c1', 'canary', settledOnNew(7_200_000)),
        member('e1', 'early', settledOnNew(7_200_000)),
        member('r1', undefined, rollingNow),
        member('r2', undefined),
        member('r4', undefined, { template: 'other' }),
      ],
      { remainder: { maxConcurrent: 1 } },
      [],
    ],
    [
      'maxConcurrentRolls 1, one rolling',
      [
        member('c1', 'canary', settledOnNew(7_200_000)),
        member('e1', 'early', settledOnNew(7_200_000)),
        member('r1', undefined, rollingNow),
        member('r2', undefined),
      ],
      { maxConcurrentRolls: 1, remainder: { maxConcurrent: 10 } },
      [],
    ],
    [
      'canary settled, remainder one at a time, one rolling and one admitted',
      [
        member('c1', 'canary', settledOnNew(7_200_000)),
        member('e1', 'early', settledOnNew(7_200_000)),
        member('r1', undefined, rollingNow),
        member('r2', undefined),
        member('r3', undefined),
        member('r4', undefined, { template: 'other' }),
      ],
      { remainder: { maxConcurrent: 1 } },
      ['r3'],
    ],
    [
      'a failed canary under haltOnFailure, maxConcurrentRolls across waves',
      [
        member('c1', 'canary', { failedRoll }),
        member('c2', 'canary', rollingNow),
        member('e1', 'early', settledOnNew(7_200_000)),
        member('r1', undefined, rollingNow),
        member('r2', undefined),
      ],
      { haltOnFailure: true, maxConcurrentRolls: 2 },
      ['e1'],
    ],
  ] as const)('%s: every cluster decides as without one', (_case, members, spec, admitted) => {
    // GIVEN one census map shared by every cluster's decision, as the coordinator keeps it while nothing changes
    const f = fleet(members, [policy(spec)]);
    const placed = placeAll(f);
    const shared = new WaveCensuses();
    const names = members.map((m) => m.name);
    // WHEN each cluster decides twice with the shared censuses (the second reuses what the others took)
    const kept = [...names, ...names].map((n) => decide(n, f, now, new Set(admitted), placed, shared));
    // THEN each decision is the one taken without a census kept
    const alone = [...names, ...names].map((n) => decide(n, f, now, new Set(admitted)));
    expect(kept).toEqual(alone);
  });
});

describe('decide: a wave census told of each change', () => {
  test.each([
    // [case, the change: a member's new state, or a cluster let through]
    ['a remainder cluster starts rolling', { r2: rollingNow }, []],
    ['the early cluster rolls again', { e1: rollingNow }, []],
    ['the canary fails', { c1: { failedRoll: 'Stalled UpdateFailed: x' } }, []],
    ['a remainder cluster is let through', {}, ['r3']],
  ] as const)('%s: every cluster decides as with a census taken now', (_case, change, letThrough) => {
    // GIVEN censuses taken on a fleet whose canary and early waves settled, and decisions made with them
    const before = [
      member('c1', 'canary', settledOnNew(7_200_000)),
      member('e1', 'early', settledOnNew(7_200_000)),
      member('r1', undefined, rollingNow),
      member('r2', undefined),
      member('r3', undefined),
    ];
    const spec = { haltOnFailure: true, remainder: { maxConcurrent: 2 } };
    const f0 = fleet(before, [policy(spec)]);
    const placed = placeAll(f0);
    const admitted = new Set<string>();
    const censuses = new WaveCensuses();
    for (const m of before) decide(m.name, f0, now, admitted, placed, censuses);
    // WHEN one thing changes and the censuses are told of it, as the coordinator does
    const after = before.map((m) =>
      member(m.name, m.labels.ring, { ...m, ...(change as Record<string, object>)[m.name] }),
    );
    const f1 = fleet(after, [policy(spec)]);
    for (const m of after)
      if (m !== before.find((b) => b.name === m.name))
        censuses.update(m.name, m, placed.placements.get(m.name), admitted);
    for (const n of letThrough) {
      admitted.add(n);
      censuses.update(n, f1.members.get(n), placed.placements.get(n), admitted);
    }
    // THEN every decision is the one a census taken now gives
    const kept = after.map((m) => decide(m.name, f1, now, admitted, placed, censuses));
    const fresh = after.map((m) => decide(m.name, f1, now, admitted, placeAll(f1)));
    expect(kept).toEqual(fresh);
  });
});

describe('decide: its own roll does not count against the limits', () => {
  const settled = [member('c1', 'canary', settledOnNew(7_200_000)), member('e1', 'early', settledOnNew(7_200_000))];
  test.each([
    // [limit, spec]: r1 has a roll in progress (a pool of it rolls) and asks for another; r2 waits for it
    ['maxConcurrent 1', { remainder: { maxConcurrent: 1 } }],
    ['maxConcurrentRolls 1', { maxConcurrentRolls: 1, remainder: { maxConcurrent: 10 } }],
  ] as const)('%s: the rolling cluster may go on, another waits', (_limit, spec) => {
    // GIVEN
    const f = fleet([...settled, member('r1', undefined, rollingNow), member('r2', undefined)], [policy(spec)]);
    const censuses = new WaveCensuses();
    // WHEN
    const own = decide('r1', f, now, new Set(), placeAll(f), censuses);
    const other = decide('r2', f, now, new Set(), placeAll(f), censuses);
    // THEN
    expect(own).toMatchObject({ go: true });
    expect(other).toMatchObject({ go: false, reason: 'WaitingForWave' });
  });
});
