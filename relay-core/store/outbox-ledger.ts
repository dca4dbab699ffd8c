// The outbox of events still to enqueue: one small `_id`-addressed entry per event, written before the thread
// write that records the event and removed once the event is on its queues. The sweep reads only this collection.
import type { Collection } from 'mongodb';
import type { OutboxEntryDoc, OutboxEvent } from '../domain/documents';
import type { InsertBatcher } from './insert-batcher';
import { isDuplicateKey } from './thread-writes';

/** Removals of enqueued entries are batched: one delete per this interval instead of one per event. */
const FLUSH_MS = 200;
/** How many removed entries this process remembers, so trimming a thread's events it removed needs no read. */
const REMEMBERED_REMOVALS = 4_096;

export class OutboxLedger {
  private done: string[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  /** Event ids whose entries this process deleted, oldest first (a Set keeps insertion order). */
  private readonly removed = new Set<string>();

  constructor(
    private readonly entries: Collection<OutboxEntryDoc>,
    private readonly inserts: InsertBatcher<OutboxEntryDoc>,
  ) {}

  /**
   * Records that `event` of `threadId` is about to be written; the sweep enqueues it if nobody else does. False
   * when the entry is someone else's already (a writer finishing another's message records the same event).
   */
  async pending(threadId: string, event: OutboxEvent): Promise<boolean> {
    try {
      await this.inserts.insert({ _id: event.id, thread_id: threadId, event, at: new Date() });
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

  /** The events are on their queues; their entries go in the next batched delete. */
  enqueued(eventIds: readonly string[]): void {
    this.done.push(...eventIds);
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
   * Those of `eventIds` that have no entry: their events are on their queues (or their writes never happened), so
   * nothing needs them in their thread any more. Entries this process removed are known; a few others are read by
   * `_id` (served without a collection scan on every server); more than `byIdReads` (a thread stored before its
   * events were bounded) in one `$in` read, which FerretDB serves by reading the outbox: only events in flight.
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

  /** Deletes the batched entries now (on shutdown, or when a test wants the outbox settled). */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const ids = this.done;
    this.done = [];
    this.flushing = this.flushing.then(() => this.remove(ids)).catch(() => {
      // Left in the outbox: the sweep adds them again (a job id is its event id, so that is a no-op) and removes them.
    });
    return this.flushing;
  }
}
