// What each participant has read of a thread: one `_id`-addressed marker per thread and reader (`thread_reads`), the
// unread counts of their lists and the web inbox.
import type { Collection } from 'mongodb';
import type { ThreadReadDoc } from '../domain/documents';
import { putById } from './thread-writes';

/**
 * Port used by service/thread-reads.ts and thread-list.ts (adapter: MongoReadMarks; in memory:
 * test/fakes/in-memory-read-marks.ts; both pass test/contracts/read-marks-contract.ts).
 */
export interface ReadMarks {
  /** How many of the other side's messages `reader` has seen, by thread, for those of `threadIds` they read. */
  seen(reader: string, threadIds: readonly string[]): Promise<Map<string, number>>;
  /** Records that `reader` has seen `seen` of the other side's messages of the thread. */
  mark(threadId: string, reader: string, seen: number, at: Date): Promise<void>;
}

const markId = (threadId: string, reader: string) => `${threadId}:${reader}`;

export class MongoReadMarks implements ReadMarks {
  constructor(private readonly docs: Collection<ThreadReadDoc>) {}

  async seen(reader: string, threadIds: readonly string[]): Promise<Map<string, number>> {
    if (threadIds.length === 0) return new Map();
    const threadOf = new Map(threadIds.map((id) => [markId(id, reader), id]));
    const marks = await this.docs.find({ _id: { $in: [...threadOf.keys()] } }).toArray();
    return new Map(marks.map((mark) => [threadOf.get(mark._id)!, mark.seen]));
  }

  async mark(threadId: string, reader: string, seen: number, at: Date): Promise<void> {
    await putById(this.docs, markId(threadId, reader), { seen, at });
  }
}
