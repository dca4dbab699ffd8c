// What each participant has read of a thread, kept on the thread itself (`reads`): the unread counts of the lists come
// with the page that lists the threads, and the web inbox's search reads them for its page in one `_id` query.
import type { Collection } from 'mongodb';
import type { ThreadDoc } from '../domain/documents';

/**
 * Port used by service/thread-reads.ts and thread-search.ts (adapter: MongoReadMarks; in memory:
 * test/fakes/in-memory-read-marks.ts; both pass test/contracts/read-marks-contract.ts).
 */
export interface ReadMarks {
  /** How many of the other side's messages `reader` has seen, by thread, for those of `threadIds` they read. */
  seen(reader: string, threadIds: readonly string[]): Promise<Map<string, number>>;
  /** Records that `reader` has seen `seen` of the other side's messages of the thread (a lower count changes nothing). */
  mark(threadId: string, reader: string, seen: number): Promise<void>;
}

/** A reader's key in a thread's `reads`: the handle, its dots written `%2E` (a field name's dot is a path). */
export function readerKey(handle: string): string {
  return handle.replaceAll('.', '%2E');
}

/** How many of the other side's messages `reader` has seen of `doc` (0 when they never read it). */
export function seenBy(doc: Pick<ThreadDoc, 'reads'>, reader: string): number {
  return doc.reads?.[readerKey(reader)] ?? 0;
}

export class MongoReadMarks implements ReadMarks {
  constructor(private readonly threads: Collection<ThreadDoc>) {}

  async seen(reader: string, threadIds: readonly string[]): Promise<Map<string, number>> {
    if (threadIds.length === 0) return new Map();
    const docs = await this.threads.find({ _id: { $in: [...threadIds] } }, { projection: { reads: 1 } }).toArray();
    const seen = new Map<string, number>();
    for (const doc of docs) {
      const count = seenBy(doc, reader);
      if (count > 0) seen.set(doc._id, count);
    }
    return seen;
  }

  async mark(threadId: string, reader: string, seen: number): Promise<void> {
    // Only raised: a process that read an older count writes nothing over a newer one. The version stays (a mark is
    // no change of the thread's state, and the versioned writes never write `reads`).
    await this.threads.updateOne({ _id: threadId }, { $max: { [`reads.${readerKey(reader)}`]: seen } });
  }
}
