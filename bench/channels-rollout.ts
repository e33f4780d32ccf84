/**
 * Image channels (issue 36, item 7): a new release of the image channel every pool of 1,000 clusters × 4 pools names,
 * through the waves. bench/pools-rollout.ts's simulation (the real Controller, workflow, rollout gate, file store and
 * now the channels engine, on the fake clock), with an SSM source in memory (test/fakes/fake-image-source.ts): the
 * daemon reads it at the start of every pass, records the release, pins it into every pool, and the waves let the
 * image roll through. Counted from when the daemon first recorded the release (its firstSeen): the time before it is
 * the resync interval, not the rollout. What this adds to pools-rollout: the source's reads per pass, which must stay
 * one per channel and region whatever the fleet's size.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ChannelPins, FileChannelStore } from '../lib/engines/channels';
import { ClusterRecord } from '../lib/model/ports/cluster-store';
import { FakeImageSource } from '../test/fakes/fake-image-source';
import { Json } from '../test/helpers/json';
import { REGIONS } from './fleet-rollout';
import { runPoolsChange } from './pools-rollout';
import { BenchOptions, figure, Section } from './report';
import { fmt } from './stats';

const CHANNEL = 'fleet-al2023';
const PARAM = '/org/images/al2023/x86_64/recommended';
const image = (n: number) => `ami-${String(n).padStart(17, '0')}`;

/** The daemon's channels, with each refresh's reads counted (a pass refreshes once). */
class CountedPins extends ChannelPins {
  public static passes = 0;
  public override refresh(records: readonly ClusterRecord[]) {
    CountedPins.passes++;
    return super.refresh(records);
  }
}

/** Publishes release `n` of the channel in every region: the parameter names its image, which EC2 describes. */
function publish(source: FakeImageSource, n: number): void {
  for (const region of REGIONS) {
    source.addImage(region, {
      imageId: image(n),
      name: `al2023-bench-v${n}`,
      architecture: 'x86_64',
      ownerId: '137112412989',
      ownerAlias: 'amazon',
      creationDate: '2026-11-01T00:00:00.000Z',
    });
    source.setParameter(region, PARAM, image(n));
  }
}

export function runChannelsRollout(opts: BenchOptions): Promise<Section> {
  const source = new FakeImageSource();
  publish(source, 1);
  let reads0 = 0;
  let passes0 = 0;
  return runPoolsChange(opts, {
    id: 'channels-rollout',
    what: 'a new release of the image channel every pool names',
    sim: {
      channels: (now, clustersDir) => new CountedPins({ store: new FileChannelStore({ clustersDir }), source, now }),
    },
    prepare: (sim) => {
      fs.mkdirSync(path.join(sim.h.clustersDir, 'image-channels'), { recursive: true });
      fs.writeFileSync(
        path.join(sim.h.clustersDir, 'image-channels', `${CHANNEL}.yaml`),
        `apiVersion: worker-stacks.io/v1alpha1\nkind: WorkerImageChannel\nmetadata: { name: ${CHANNEL} }\nspec:\n  source: { ssmParameter: ${PARAM} }\n  architecture: x86_64\n`,
      );
    },
    pool: (pool: Json) => {
      delete pool.machineImage;
      pool.imageChannel = CHANNEL;
    },
    make: () => {
      reads0 = source.parameterReads;
      passes0 = CountedPins.passes;
      publish(source, 2);
    },
    knownAt: (sim, madeAt) => {
      const status = JSON.parse(
        fs.readFileSync(path.join(sim.h.clustersDir, 'image-channels', '.status', `${CHANNEL}.json`), 'utf8'),
      ) as { releases: { release: string; firstSeen: string }[] };
      const seen = status.releases.find((r) => r.release === 'al2023-bench-v2')?.firstSeen;
      if (!seen) throw new Error('channels-rollout: the daemon never recorded the new release');
      return Math.max(madeAt, Date.parse(seen));
    },
    extra: (_sim, label) => {
      const passes = CountedPins.passes - passes0;
      const perPass = (source.parameterReads - reads0) / Math.max(1, passes);
      return {
        figures: [
          figure(
            'channels-rollout-ssm-reads',
            `channels rollout of ${label}, SSM parameter reads per pass (1 channel × ${REGIONS.length} regions)`,
            perPass,
            '',
            { op: '<=', value: REGIONS.length },
          ),
        ],
        rows: [
          ['passes during the roll / SSM reads in all', `${fmt(passes)} / ${fmt(source.parameterReads - reads0)}`],
        ],
        notes: [
          `One channel (${PARAM}, an SSM source in memory) named by every pool of every cluster; release 2 published at once in the ${REGIONS.length} regions. Time counts from the pass that recorded it (the wait for that pass is the resync interval, not the rollout).`,
        ],
      };
    },
  });
}
