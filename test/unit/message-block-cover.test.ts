// Which message blocks a read of a thread's messages takes (store/message-blocks.ts coverOf): every wanted number
// in exactly one block, never more than twice what is wanted, and at most 9 blocks for the relay's 500 newest.
import { BLOCK_SIZE, coverOf } from '../../relay-core/store/message-blocks';

const spanOf = (level: number) => BLOCK_SIZE * 4 ** level;

test('the blocks of a read are contiguous, hold lo..hi, read at most twice that, and are at most 9 for any 500 messages', () => {
  let most = 0;
  for (let hi = 1; hi <= 2_000; hi += 1) {
    for (const wanted of [1, 20, 100, 256, 499, 500]) {
      const lo = Math.max(1, hi - wanted + 1);
      const cover = coverOf(lo, hi);
      const ranges = cover.map(({ level, index }) => ({ first: index * spanOf(level) + 1, last: (index + 1) * spanOf(level) }));
      expect(ranges[0]!.last).toBe(Math.ceil(hi / BLOCK_SIZE) * BLOCK_SIZE);
      for (let i = 1; i < ranges.length; i += 1) expect(ranges[i]!.last).toBe(ranges[i - 1]!.first - 1);
      const first = ranges[ranges.length - 1]!.first;
      expect(first).toBeLessThanOrEqual(lo);
      expect(ranges[0]!.last - first + 1).toBeLessThanOrEqual(2 * (ranges[0]!.last - lo + 1) + BLOCK_SIZE);
      most = Math.max(most, cover.length);
    }
  }
  expect(most).toBe(9);
});

test('a thread of 40 messages is read from 2 blocks of 16, one of 200 from 3 of 64, one of 500 from 7', () => {
  expect(coverOf(1, 32)).toEqual([{ level: 0, index: 1 }, { level: 0, index: 0 }]);
  expect(coverOf(1, 192)).toEqual([{ level: 1, index: 2 }, { level: 1, index: 1 }, { level: 1, index: 0 }]);
  expect(coverOf(1, 496)).toHaveLength(7);
});
