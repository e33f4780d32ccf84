import { Harness } from '../../fakes/harness';

/** An out-of-band change is repaired every time it happens, not only the first time (issue 25, item 9). */

let h: Harness;
afterEach(() => h.cleanup());

/** The live template with its ConfigChecksum output replaced, as a console edit of the stack would leave it. */
function withChecksum(template: string, checksum: string): string {
  const t = JSON.parse(template);
  t.Outputs.ConfigChecksum.Value = checksum;
  return JSON.stringify(t);
}

test.each([
  ['reports LastUpdatedTime', true],
  ['reports no LastUpdatedTime (moto 5.2.5)', false],
])('the same out-of-band update twice is repaired twice, when CloudFormation %s', async (_, reportsLastUpdated) => {
  // GIVEN a settled cluster
  h = new Harness();
  h.cfn.reportsLastUpdated = reportsLastUpdated;
  expect((await h.reconcile()).result).toBe('applied');
  const applied = h.status().cloudConfigChecksum!;
  const template = h.cfn.requests.at(-1)!.templateBody!;
  const outOfBand = withChecksum(template, 'e'.repeat(64));

  for (const time of ['first', 'second']) {
    // WHEN the same out-of-band update is made, and the reconciler runs until it settles
    h.cfn.advance(60_000);
    h.cfn.changeOutOfBand(h.stackName(), outOfBand);
    const outcome = await h.reconcile();

    // THEN the desired config is live again, read from the stack, each time with one execution
    expect([time, outcome.result]).toEqual([time, 'applied']);
    expect(h.cfn.peek(h.stackName())?.outputs.ConfigChecksum).toBe(applied);
    expect(h.condition('Ready')?.status).toBe('True');
  }
  expect(h.cfn.started.map((o) => o.kind)).toEqual(['create', 'update', 'update']);
});
