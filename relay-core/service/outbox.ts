// The outbox: events a thread write recorded go to their queues, and a sweep enqueues whatever missed them.
import type { Logger } from 'pino';
import type { Clock } from '../domain/clock';
import type { OutboxEvent } from '../domain/documents';
import type { MongoStore } from '../store/mongo-store';
import type { EventPublisher } from './event-publisher';

// Events are published right after the write; the sweep covers Redis being down or a process dying in between.

export interface OutboxDeps {
  store: MongoStore;
  events: EventPublisher;
  clock: Clock;
  log: Logger;
}

export class Outbox {
  constructor(private readonly deps: OutboxDeps) {}

  /**
   * Puts events on their queues right after the write that recorded them. A failure is not the caller's:
   * the thread stays outbox_dirty and the sweep enqueues it (job ids are event ids, so twice is once).
   */
  async publish(threadId: string, events: readonly OutboxEvent[]): Promise<void> {
    try {
      await this.deps.events.publish(threadId, events);
    } catch (error) {
      this.deps.log.warn({ thread_id: threadId, err: (error as Error).message }, 'events not enqueued yet; the outbox sweep will retry');
    }
  }

  /**
   * Enqueues every event of threads written more than `settleMs` ago that may have missed their queue
   * (Redis was down, a process died), then clears their dirty flag. Also finishes interrupted writes.
   */
  async sweep(settleMs: number, limit = 500): Promise<number> {
    await this.deps.store.repairThreadWrites();
    const cutoff = new Date(this.deps.clock.now().getTime() - settleMs);
    const dirty = await this.deps.store.threads
      .find({ outbox_dirty: true, updated_at: { $lte: cutoff } }, { projection: { _id: 1, outbox: 1, outbox_enqueued: 1 } })
      .limit(limit)
      .toArray();
    for (const doc of dirty) {
      // Only the events since the last sweep: an older event's job may have completed and been removed from
      // Redis long ago, and adding it again would run it again.
      await this.deps.events.publish(doc._id, doc.outbox.slice(doc.outbox_enqueued ?? 0));
      const seen = doc.outbox.length;
      await this.deps.store.writeThread(doc._id, (current) =>
        current.outbox_dirty && current.outbox.length === seen ? { ...current, outbox_dirty: false, outbox_enqueued: seen } : undefined,
      );
    }
    return dirty.length;
  }
}
