import * as http from 'node:http';
import * as net from 'node:net';
import { awsClients } from '../../../lib/platform/aws/clients';
import { processPacing, RequestRateLimiter } from '../../../lib/platform/aws/request-rate';
import { createDeps } from '../../../lib/adapters/cli/wiring';
import { tempDir } from '../../helpers/clusters';
import { SdkCloudFormation } from '../../../lib/platform/aws/sdk-cloudformation';
import { DEFAULT_TEMPLATES_DIR } from '../../../lib/platform/files/template-directory';

/**
 * The SDK's own CloudFormation client, as the daemon makes it, against a server that answers the query protocol:
 * the limiter sees every request on the wire (each page of a listing, each attempt of a retried call), by its API.
 */

const XMLNS = 'http://cloudformation.amazonaws.com/doc/2010-05-15/';
const stack = (name: string) =>
  `<member><StackName>${name}</StackName><StackId>arn:aws:cloudformation:eu-west-1:111111111111:stack/${name}/1</StackId>` +
  `<StackStatus>CREATE_COMPLETE</StackStatus><CreationTime>2030-01-01T00:00:00Z</CreationTime></member>`;
const page = (names: string[], next?: string) =>
  `<DescribeStacksResponse xmlns="${XMLNS}"><DescribeStacksResult><Stacks>${names.map(stack).join('')}</Stacks>` +
  `${next ? `<NextToken>${next}</NextToken>` : ''}</DescribeStacksResult>` +
  `<ResponseMetadata><RequestId>r</RequestId></ResponseMetadata></DescribeStacksResponse>`;
const THROTTLED =
  `<ErrorResponse xmlns="${XMLNS}"><Error><Type>Sender</Type><Code>Throttling</Code><Message>Rate exceeded</Message>` +
  `</Error><RequestId>r</RequestId></ErrorResponse>`;

let server: http.Server;
let endpoint: string;
/** What the server was asked, in order: the Action and the NextToken of each request. */
let seen: string[] = [];
/** Answers still to give as throttled, before the next real answer. */
let throttleNext = 0;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const form = new URLSearchParams(body);
      seen.push(`${form.get('Action')}${form.get('NextToken') ? ` ${form.get('NextToken')}` : ''}`);
      res.setHeader('content-type', 'text/xml');
      if (throttleNext > 0) {
        throttleNext--;
        res.statusCode = 400;
        res.end(THROTTLED);
        return;
      }
      const token = form.get('NextToken');
      res.end(token === null ? page(['a', 'b'], 'p2') : token === 'p2' ? page(['c'], 'p3') : page(['d']));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

beforeEach(() => {
  seen = [];
  throttleNext = 0;
});

function paced() {
  let now = 0;
  const slept: number[] = [];
  const limiter = new RequestRateLimiter({
    rates: { read: { ratePerSecond: 1, burst: 1 }, write: { ratePerSecond: 1, burst: 1 } },
    now: () => now,
    sleep: (ms) => {
      slept.push(ms);
      now += ms;
      return Promise.resolve();
    },
  });
  const { cloudFormation } = awsClients({
    region: 'eu-west-1',
    endpoint,
    maxAttempts: 3,
    credentials: async () => ({ accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' }),
    cloudFormationRate: limiter,
  });
  return { cloudFormation, limiter, slept };
}

test('a listing of three pages takes three DescribeStacks tokens: the pages past the burst wait', async () => {
  // GIVEN the daemon's client, paced at 1 read a second with a burst of 1, on a clock that only the test moves
  const { cloudFormation, limiter, slept } = paced();
  try {
    // WHEN the port lists every stack (DescribeStacks, three pages)
    const stacks = await new SdkCloudFormation({ client: cloudFormation }).listStacks();

    // THEN the server saw three pages, and the limiter made the second and third each wait a second
    expect([...stacks.keys()]).toEqual(['a', 'b', 'c', 'd']);
    expect(seen).toEqual(['DescribeStacks', 'DescribeStacks p2', 'DescribeStacks p3']);
    expect(slept).toEqual([1000, 1000]);
    expect(limiter.waited.get('DescribeStacks')).toEqual({ requests: 2, ms: 2000 });
  } finally {
    cloudFormation.destroy();
  }
});

test('each attempt of a throttled call is paced, and the call then answers', async () => {
  // GIVEN the daemon's client, and a server whose first answer is Throttling
  const { cloudFormation, limiter, slept } = paced();
  throttleNext = 1;
  try {
    // WHEN a stack is described (the SDK retries the throttled attempt)
    const s = await new SdkCloudFormation({ client: cloudFormation }).describeStack('a');

    // THEN two requests went out, the retry after its own token (1 s after the first)
    expect(s?.name).toBe('a');
    expect(seen).toEqual(['DescribeStacks', 'DescribeStacks']);
    expect(slept).toEqual([1000]);
    expect(limiter.waited.get('DescribeStacks')).toEqual({ requests: 1, ms: 1000 });
  } finally {
    cloudFormation.destroy();
  }
});

test("the daemon's wiring paces each region's CloudFormation client with its own limiter, counted for /metrics", async () => {
  // GIVEN the reconciler's wiring (single credentials) at 4 reads a second with a burst of 1 (a token every 250 ms: far longer than a page's round trip on loopback), the SDK pointed at the server
  const env = { ...process.env };
  Object.assign(process.env, {
    AWS_ENDPOINT_URL: endpoint,
    AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
    AWS_SECRET_ACCESS_KEY: 'secret',
  });
  try {
    const { deps, closeStore } = createDeps({
      clustersDir: tempDir('pacing-wiring'),
      templatesDir: DEFAULT_TEMPLATES_DIR,
      assumeRole: false,
      logDestination: { write: () => true } as never,
      cloudFormationRates: { read: { ratePerSecond: 4, burst: 1 }, write: { ratePerSecond: 1, burst: 1 } },
    });
    const before = processPacing.waited.get('DescribeStacks') ?? { requests: 0, ms: 0 };

    // WHEN one region is listed twice (six pages) and another once (three)
    await deps.aws('eu-west-1').cfn.listStacks();
    await deps.aws('eu-west-1').cfn.listStacks();
    await deps.aws('us-east-1').cfn.listStacks();
    closeStore();

    // THEN every page but the first of each region waited for its token (5 + 2), 250 ms at most each
    const after = processPacing.waited.get('DescribeStacks')!;
    expect(seen).toHaveLength(9);
    expect(after.requests - before.requests).toBe(7);
    expect(after.ms - before.ms).toBeGreaterThan(0);
    expect(after.ms - before.ms).toBeLessThanOrEqual(7 * 250);
  } finally {
    process.env = env;
  }
});
