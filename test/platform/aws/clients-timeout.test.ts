import * as net from 'node:net';
import { ListStacksCommand } from '@aws-sdk/client-cloudformation';
import { HeadBucketCommand } from '@aws-sdk/client-s3';
import { GetCallerIdentityCommand } from '@aws-sdk/client-sts';
import {
  awsClients,
  awsTimeouts,
  DEFAULT_AWS_TIMEOUTS,
  requestHandlerOptions,
} from '../../../lib/platform/aws/clients';
import { UsageError } from '../../../lib/core/errors';
import { classifyError } from '../../../lib/engines/reconciler/workflow/classify';

/**
 * A half-open connection: the server accepts it and never answers (nor resets it), as after a network outage.
 * Every SDK client worker-stacks makes gives up on such a request with a TimeoutError, which the reconciler
 * classifies as transient (requeued with backoff, not counted as a failure), instead of waiting forever.
 */

let server: net.Server;
const sockets = new Set<net.Socket>();
let endpoint: string;

beforeAll(async () => {
  // GIVEN a server on loopback that accepts connections and never writes a byte
  server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
});

afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const clients = () =>
  awsClients({
    region: 'eu-west-1',
    endpoint,
    s3ForcePathStyle: true,
    maxAttempts: 1,
    timeouts: { connectionTimeoutMs: 1_000, requestTimeoutMs: 300 },
    credentials: async () => ({ accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' }),
  });

test.each([
  {
    client: 'CloudFormation',
    call: (c: ReturnType<typeof clients>) => c.cloudFormation.send(new ListStacksCommand({})),
  },
  {
    client: 'S3',
    call: (c: ReturnType<typeof clients>) =>
      c.s3.send(new HeadBucketCommand({ Bucket: 'worker-stacks-config-111111111111-eu-west-1' })),
  },
  { client: 'STS', call: (c: ReturnType<typeof clients>) => c.sts.send(new GetCallerIdentityCommand({})) },
])(
  '$client: a request that is never answered fails with a TimeoutError, classified transient',
  async ({ call }) => {
    // GIVEN the clients the reconciler makes, with a short request timeout
    const c = clients();
    try {
      // WHEN a request goes to the server that never answers
      const error = await call(c).then(
        () => undefined,
        (e: unknown) => e as Error & { code?: string },
      );

      // THEN it fails (instead of hanging) with the SDK's TimeoutError, and the reconciler requeues it as transient
      expect(error).toBeDefined();
      expect(error).toMatchObject({ name: 'TimeoutError' });
      expect(error!.message).toMatch(/requestTimeout/);
      expect(classifyError(error)).toEqual({ kind: 'transient', reason: 'AwsUnavailable' });
    } finally {
      c.cloudFormation.destroy();
      c.s3.destroy();
      c.sts.destroy();
    }
  },
  30_000,
);

test('every client gets a connection and a request timeout, and a timeout throws rather than only warning', () => {
  // GIVEN no setting / WHEN the handler options are made / THEN both timeouts are on, with the defaults
  expect(requestHandlerOptions(awsTimeouts({}))).toMatchObject({
    connectionTimeout: 10_000,
    requestTimeout: 30_000,
    throwOnRequestTimeout: true,
  });
  expect(awsTimeouts({})).toEqual(DEFAULT_AWS_TIMEOUTS);
});

test("the HTTP handler's warnings are process warnings (JSON lines in the daemon), never console output", () => {
  // GIVEN the handler's logger, with process warnings and the console watched
  const emitted = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
  const consoleWarn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
  try {
    // WHEN the handler warns, as it does when its sockets are at capacity
    requestHandlerOptions().logger.warn(
      '@smithy/node-http-handler:WARN - socket usage at capacity=50 and 7 additional requests are enqueued.\nSee https://example',
    );

    // THEN it is one process warning, on one line, and nothing went to the console
    expect(emitted.mock.calls).toEqual([
      [
        '@smithy/node-http-handler:WARN - socket usage at capacity=50 and 7 additional requests are enqueued. See https://example',
        'AwsSdkWarning',
      ],
    ]);
    expect(consoleWarn).not.toHaveBeenCalled();
  } finally {
    emitted.mockRestore();
    consoleWarn.mockRestore();
  }
});

test.each([
  {
    env: { WORKER_STACKS_AWS_REQUEST_TIMEOUT_SECONDS: '90', WORKER_STACKS_AWS_CONNECT_TIMEOUT_SECONDS: '2.5' },
    expected: { connectionTimeoutMs: 2_500, requestTimeoutMs: 90_000 },
  },
  { env: { WORKER_STACKS_AWS_REQUEST_TIMEOUT_SECONDS: '' }, expected: DEFAULT_AWS_TIMEOUTS },
])('the environment sets the timeouts: $env', ({ env, expected }) => {
  expect(awsTimeouts(env)).toEqual(expected);
});

test.each(['0', '-1', 'soon', '30s'])('a timeout of %j is refused, naming the variable and the fix', (v) => {
  const read = () => awsTimeouts({ WORKER_STACKS_AWS_REQUEST_TIMEOUT_SECONDS: v });
  expect(read).toThrow(UsageError);
  expect(read).toThrow(
    /WORKER_STACKS_AWS_REQUEST_TIMEOUT_SECONDS=.* is not a number of seconds[\s\S]*fix: set WORKER_STACKS_AWS_REQUEST_TIMEOUT_SECONDS/,
  );
});
