// The read markers port (relay-core/store/read-marks.ts) in memory, for the fast tests of thread reads and lists
// (test/contracts/read-marks-contract.ts, run against this and against MongoReadMarks).
import type { ReadMarks } from '../../relay-core/store/read-marks';

export class InMemoryReadMarks implements ReadMarks {
  private readonly marks = new Map<string, { seen: number; at: Date }>();
  /** How many markers were written. */
  writes = 0;

  async seen(reader: string, threadIds: readonly string[]): Promise<Map<string, number>> {
    const seen = new Map<string, number>();
    for (const id of threadIds) {
      const mark = this.marks.get(`${id}:${reader}`);
      if (mark) seen.set(id, mark.seen);
    }
    return seen;
  }

  async mark(threadId: string, reader: string, seen: number, at: Date): Promise<void> {
    this.marks.set(`${threadId}:${reader}`, { seen, at });
    this.writes += 1;
  }
}
