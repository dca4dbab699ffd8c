// The read markers port (relay-core/store/read-marks.ts) over the threads of an InMemoryThreads, for the fast tests of
// thread reads, lists and search (test/contracts/read-marks-contract.ts, run against this and against MongoReadMarks).
import { readerKey, seenBy, type ReadMarks } from '../../relay-core/store/read-marks';
import type { InMemoryThreads } from './in-memory-threads';

export class InMemoryReadMarks implements ReadMarks {
  /** How many markers were written. */
  writes = 0;

  constructor(private readonly threads: Pick<InMemoryThreads, 'all' | 'patch'>) {}

  async seen(reader: string, threadIds: readonly string[]): Promise<Map<string, number>> {
    const wanted = new Set(threadIds);
    return new Map(
      this.threads
        .all()
        .filter((doc) => wanted.has(doc._id) && seenBy(doc, reader) > 0)
        .map((doc) => [doc._id, seenBy(doc, reader)]),
    );
  }

  async mark(threadId: string, reader: string, seen: number): Promise<void> {
    const key = readerKey(reader);
    this.threads.patch(threadId, (doc) => ({
      ...doc,
      reads: { ...doc.reads, [key]: Math.max(doc.reads?.[key] ?? 0, seen) },
    }));
    this.writes += 1;
  }
}
