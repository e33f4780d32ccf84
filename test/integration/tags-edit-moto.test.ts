import { DescribeStacksCommand, paginateDescribeStacks, Stack } from '@aws-sdk/client-cloudformation';
import { BOOTSTRAP_STACK_NAME, workerStackName } from '../../lib/core/naming';
import { AWS_FLAGS, cli, motoCluster, startWorld, stopWorld, World, writeCluster } from './harness';

// Issue 32 item 18: a tags-only edit of a cluster with a load balancer broke the playground's region. moto fails the
// Auto Scaling group's update and its rollback leaves the load balancer out of the stack's resource map; moto
// evaluates outputs on every DescribeStacks, so every DescribeStacks of the region (the one listing the daemon and the
// playground make) answered HTTP 500 until the wrapper was restarted. The wrapper's patch 7 (tools/moto/server.py)
// keeps the outputs a stack last reported; this test fails without it (the DescribeStacks below answers 500).

jest.setTimeout(300_000);

const NAME = 'moto-tags';
const STACK = workerStackName(NAME);
const SETTLED = /^(CREATE_COMPLETE|UPDATE_COMPLETE|UPDATE_ROLLBACK_COMPLETE)$/;
let world: World;

beforeAll(async () => {
  world = await startWorld({ inProgressSeconds: 1 });
}, 120_000);
afterAll(() => stopWorld(world));

/** Every stack of the region, by the paged listing the reconciler makes (DescribeStacks without a name). */
async function regionStacks(): Promise<Stack[]> {
  const all: Stack[] = [];
  for await (const page of paginateDescribeStacks({ client: world.cfn }, {})) all.push(...(page.Stacks ?? []));
  return all;
}

/** What DescribeStacks of the region answers now: nothing when it answers, else the error and its HTTP status. */
async function describeStacksError(): Promise<string | undefined> {
  try {
    await regionStacks();
    return undefined;
  } catch (e) {
    const err = e as Error & { $metadata?: { httpStatusCode?: number } };
    return `DescribeStacks answered HTTP ${err.$metadata?.httpStatusCode ?? '?'} ${err.name}: ${err.message}`;
  }
}

/** `worker-stacks reconcile --once`, or, when it has not finished in 90 s, a failure that says what the region answers. */
async function reconcileOnce(): Promise<Awaited<ReturnType<typeof cli>>> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      void describeStacksError().then((err) =>
        reject(new Error(`reconcile --once did not finish in 90 s; ${err ?? 'DescribeStacks answers'}`)),
      );
    }, 90_000);
  });
  try {
    return await Promise.race([cli(['reconcile', '--once', '--clusters', world.dir, ...AWS_FLAGS]), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** DescribeStacks of the stack, polled until it is no longer in progress (the wrapper keeps it in progress for a second). */
async function settled(stackName: string): Promise<Stack> {
  for (let i = 0; i < 60; i++) {
    const stack = (await world.cfn.send(new DescribeStacksCommand({ StackName: stackName }))).Stacks?.[0];
    if (stack && !stack.StackStatus?.endsWith('_IN_PROGRESS')) return stack;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`${stackName} still in progress after 30 s`);
}

test('a tags-only edit of a cluster with a load balancer: DescribeStacks of the region still answers, the stack settles', async () => {
  // GIVEN a cluster with an internal load balancer and two listeners, Ready on the wrapper
  const raw = motoCluster(world, NAME, (r) => {
    r.spec.loadBalancer = { scheme: 'internal', allowedCidrs: ['10.0.0.0/8'] };
    r.spec.listeners = [
      {
        name: 'ingress-https',
        port: 443,
        nodePort: 30443,
        healthCheck: { protocol: 'HTTP', port: 30254, path: '/healthz' },
      },
      {
        name: 'ingress-http',
        port: 80,
        nodePort: 30080,
        healthCheck: { protocol: 'HTTP', port: 30254, path: '/healthz' },
      },
    ];
  });
  writeCluster(world, raw);
  const first = await reconcileOnce();
  expect({ code: first.code, out: first.out }).toEqual({ code: 0, out: `${NAME}\tapplied\n` });
  const before = await settled(STACK);
  expect(before.StackStatus).toBe('CREATE_COMPLETE');
  const outputsBefore = (before.Outputs ?? []).map((o) => o.OutputKey).sort();
  expect(outputsBefore.length).toBeGreaterThan(0);

  // WHEN only its tags change (what the playground's edit-tags step does) and the stack is updated
  raw.spec.tags = { ...raw.spec.tags, 'playground-edit': 'tags-only' };
  writeCluster(world, raw);
  const edit = await reconcileOnce();
  expect(edit.out).toMatch(new RegExp(`^${NAME}\\t`));

  // THEN the stack settles (moto may roll the update back: what matters is that it ends, and says so)
  const after = await settled(STACK);
  expect(after.StackStatus).toMatch(SETTLED);
  // AND DescribeStacks of the whole region answers, with every stack in it settled (no HTTP 500)
  expect(await describeStacksError()).toBeUndefined();
  const stacks = await regionStacks();
  expect(stacks.map((s) => s.StackName).sort()).toEqual([BOOTSTRAP_STACK_NAME, STACK].sort());
  for (const s of stacks) expect(s.StackStatus).toMatch(SETTLED);
  // AND the stack still reports its outputs
  expect((after.Outputs ?? []).map((o) => o.OutputKey).sort()).toEqual(outputsBefore);

  // AND the region stays usable: the next pass reads it and answers, and DescribeStacks still answers after it
  const next = await reconcileOnce();
  expect(next.out).toMatch(new RegExp(`^${NAME}\\t`));
  expect((await regionStacks()).length).toBe(2);
  expect((await settled(STACK)).StackStatus).toMatch(SETTLED);
});
