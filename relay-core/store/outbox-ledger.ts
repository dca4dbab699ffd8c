// The outbox of events whose deliveries have not finished: one small `_id`-addressed entry per event, written before
// the thread write that records the event, naming the queues its jobs go to. A worker takes its queue out of the
// entry once its job finished, and the entry goes with the last one; until then the sweep can put the event on its
// queues again, so a Redis that lost its jobs (restarted empty) loses no delivery. The sweep reads only this collection.
import type { Collection } from 'mongodb';
import type { OutboxEntryDoc, OutboxEvent } from '../domain/documents';
import type { InsertBatcher } from './insert-batcher';
import { isDuplicateKey } from './thread-writes';

/** Finished jobs are marked in batches: a few updates per this interval instead of one per job. */
const FLUSH_MS = 200;
/** How many removed entries this process remembers, so trimming a thread's events it removed needs no read. */
const REMEMBERED_REMOVALS = 4_096;

export class OutboxLedger {
  /** Per queue, the events whose job on it finished since the last flush. */
  private finishedJobs = new Map<string, string[]>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  /** Event ids whose entries this process deleted, oldest first (a Set keeps insertion order). */
  private readonly removed = new Set<string>();

  constructor(
    private readonly entries: Collection<OutboxEntryDoc>,
    private readonly inserts: InsertBatcher<OutboxEntryDoc>,
  ) {}

  /**
   * Records that `event` of `threadId` is about to be written, its jobs going to `jobs` (absent: the sweep asks the
   * publisher's queues); the sweep enqueues it if nobody else does. False when the entry is someone else's already
   * (a writer finishing another's message records the same event).
   */
  async pending(threadId: string, event: OutboxEvent, jobs?: readonly string[]): Promise<boolean> {
    try {
      await this.inserts.insert({ _id: event.id, thread_id: threadId, event, at: new Date(), ...(jobs ? { jobs: [...jobs] } : {}) });
      return true;
    } catch (error) {
      if (isDuplicateKey(error)) return false;
      throw error;
    }
  }

  /** The write did not happen (precondition, conflict, error): nothing to enqueue. */
  async abandoned(eventId: string): Promise<void> {
    await this.entries.deleteOne({ _id: eventId });
    this.remember([eventId]);
  }

  /** The job of `eventId` on `queue` finished (done, or failed for good); marked in the next batch. */
  finished(queue: string, eventId: string): void {
    const ids = this.finishedJobs.get(queue);
    if (ids) ids.push(eventId);
    else this.finishedJobs.set(queue, [eventId]);
    this.timer ??= setTimeout(() => void this.flush(), FLUSH_MS);
    this.timer.unref();
  }

  /**
   * Entries still waiting, oldest first (no more than `limit`). The collection holds only events in flight, so
   * the unfiltered, unsorted read is served without an index on every server and costs nothing when it is empty.
   */
  async waiting(limit: number): Promise<OutboxEntryDoc[]> {
    const docs = await this.entries.find({}).limit(limit).toArray();
    return docs.sort((a, b) => a.at.getTime() - b.at.getTime());
  }

  async count(): Promise<number> {
    return this.entries.countDocuments({});
  }

  async remove(eventIds: readonly string[]): Promise<void> {
    if (eventIds.length === 1) await this.entries.deleteOne({ _id: eventIds[0]! });
    else if (eventIds.length > 1) await this.entries.deleteMany({ _id: { $in: [...eventIds] } });
    this.remember(eventIds);
  }

  /**
   * Those of `eventIds` that have no entry: their deliveries are done (or their writes never happened), so nothing
   * needs them in their thread any more. Entries this process removed are known; a few others are read by `_id`
   * (served without a collection scan on every server); more than `byIdReads` (a thread stored before its events
   * were bounded) in one `$in` read, which FerretDB serves by reading the outbox: only events in flight.
   */
  async settled(eventIds: readonly string[], byIdReads: number): Promise<string[]> {
    const unknown = eventIds.filter((id) => !this.removed.has(id));
    const waiting = new Set<string>();
    if (unknown.length > byIdReads) {
      for (const doc of await this.entries.find({ _id: { $in: unknown } }, { projection: { _id: 1 } }).toArray()) waiting.add(doc._id);
    } else {
      const found = await Promise.all(unknown.map((id) => this.entries.findOne({ _id: id }, { projection: { _id: 1 } })));
      for (const doc of found) if (doc) waiting.add(doc._id);
    }
    return eventIds.filter((id) => !waiting.has(id));
  }

  private remember(eventIds: readonly string[]): void {
    for (const id of eventIds) this.removed.add(id);
    for (const id of this.removed) {
      if (this.removed.size <= REMEMBERED_REMOVALS) break;
      this.removed.delete(id);
    }
  }

  /**
   * Marks the batched finished jobs now (on shutdown, or when a test wants the outbox settled): each queue out of its
   * entries, one update per queue, then the entries with no job left go in one delete.
   */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.finishedJobs;
    this.finishedJobs = new Map();
    if (batch.size === 0) return this.flushing;
    this.flushing = this.flushing
      .then(async () => {
        for (const [queue, ids] of batch) await this.entries.updateMany({ _id: { $in: ids } }, { $pull: { jobs: queue } });
        await this.entries.deleteMany({ _id: { $in: [...new Set([...batch.values()].flat())] }, jobs: { $size: 0 } });
      })
      .catch(() => {
        // Left in the outbox: the sweep finds their jobs finished on their queues and removes them.
      });
    return this.flushing;
  }
}
