import { CMD, runSchedule } from './commands';
import { OrderedScheduler } from './ordered-scheduler';
import { SimWorld } from './sim-world';

test('debug', async () => {
  const orig = SimWorld.prototype.settle;
  let world: SimWorld | undefined;
  SimWorld.prototype.settle = async function (this: SimWorld, n?: number) {
    world = this;
    try { await orig.call(this, n); } finally {
      for (const name of this.names) console.log(name, JSON.stringify(this.store.status(name), null, 0).slice(0, 3000));
      console.log('slots', [...this.leader.controller.slots.names()], 'outcomes', JSON.stringify([...this.leader.outcomes]));
      console.log('channel', JSON.stringify(this.channel?.status));
    }
  };
  await runSchedule(new OrderedScheduler(ORDER), OPTS, CMDS);
  void world;
});
const OPTS = {"clusters":2,"concurrency":1,"maxUpdateAttempts":1,"rollout":false,"shards":"one","pools":false,"channel":true} as const;
const ORDER: number[] = [1, 2, 3, 5, 6, 4, 8, 7, 9, 11, 10, 12, 13, 14, 16, 15, 17, 18, 19, 20, 21, 22, 23, 24, 26, 25, 29, 27, 28, 30, 32, 31, 33, 34, 35, 36, 37, 39, 38, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 73, 72, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 91, 90, 92, 93, 94, 95, 96, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 109, 108, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 127, 128, 126, 129, 130, 131, 132, 133, 134, 135, 136, 137, 138, 139, 140, 141, 142, 143, 145, 144, 146, 147, 148, 149, 150, 151, 152, 153, 154, 155, 156, 157, 158, 159, 160, 161, 163, 164, 162, 165, 166, 167, 168, 169, 170, 171, 172, 173, 174, 175, 176, 177, 178, 179, 181, 182, 180, 183, 184, 185, 186, 187, 188, 189, 190, 191, 192, 193, 194, 195, 196, 197, 198, 199, 200, 201, 202, 203, 204, 205, 206, 207, 208, 209, 210, 211, 212, 213, 214, 215, 217, 216, 218, 219, 220, 221, 222, 223, 224, 225, 226, 227, 228, 229, 230, 231, 232, 233, 234, 235, 236, 237, 238, 239, 240];
const CMDS = [CMD.run(1), CMD.addPool(0), CMD.advance(15000), CMD.publish(), CMD.run(8), CMD.rollback(0)];
