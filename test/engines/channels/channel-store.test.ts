import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FileChannelStore } from '../../../lib/engines/channels';

/** A channel file with the given spec fields besides a valid source and architecture. */
function channelDir(extra: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'channel-store-'));
  fs.mkdirSync(path.join(dir, 'image-channels'));
  fs.writeFileSync(
    path.join(dir, 'image-channels', 'al2023.yaml'),
    [
      'apiVersion: worker-stacks.io/v1alpha1',
      'kind: WorkerImageChannel',
      'metadata: { name: al2023 }',
      'spec:',
      '  source: { ssmParameter: /org/images/al2023 }',
      '  architecture: x86_64',
      extra,
    ].join('\n'),
  );
  return dir;
}

describe('FileChannelStore: holds and promotion in the channel file', () => {
  test('a channel with a promotion and holds by name and by selector loads', () => {
    // GIVEN a channel promoted by hand with a wave and a cluster held
    const dir = channelDir(
      [
        '  promotedRelease: v2',
        '  holds:',
        '    - { release: v1, selector: { matchLabels: { wave: late } } }',
        '    - { release: v1, clusters: [prod-eu1] }',
      ].join('\n'),
    );
    // WHEN it is loaded
    const loaded = new FileChannelStore({ clustersDir: dir, relativeTo: dir }).loadSync();
    // THEN it validates with both
    expect(loaded.problems).toEqual([]);
    expect(loaded.channels[0].spec).toMatchObject({
      promotedRelease: 'v2',
      holds: [{ release: 'v1' }, { clusters: ['prod-eu1'] }],
    });
  });

  test.each([
    [
      'names clusters and a selector',
      '    - { release: v1, clusters: [a], selector: {} }',
      'spec.holds[0]',
      /exactly one of clusters and selector \(rule channel-holds\)/,
    ],
    ['names neither', '    - { release: v1 }', 'spec.holds[0]', /exactly one of clusters and selector/],
    [
      'has a bad label key',
      '    - { release: v1, selector: { matchLabels: { "-x": y } } }',
      'spec.holds[0].selector.matchLabels["-x"]',
      /is not a label key/,
    ],
    ['has no release', '    - { clusters: [a] }', 'spec.holds[0].release', /./],
  ])('a hold that %s is a problem with its field path', (_what, hold, at, message) => {
    // GIVEN a channel whose hold is wrong
    const dir = channelDir(`  holds:\n${hold}`);
    // WHEN it is loaded
    const loaded = new FileChannelStore({ clustersDir: dir, relativeTo: dir }).loadSync();
    // THEN the problem names the file, the field and the rule; the channel pins nothing
    expect(loaded.problems).toEqual([
      expect.objectContaining({
        file: 'image-channels/al2023.yaml',
        path: at,
        message: expect.stringMatching(message),
      }),
    ]);
    expect(loaded.channels[0].spec).toBeUndefined();
  });
});
