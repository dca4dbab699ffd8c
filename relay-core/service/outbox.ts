// The outbox: every event a thread write records is in the outbox collection before the write and goes to its
// queues right after it; a sweep enqueues whatever missed its queue (Redis was down, a process died).
import type { Logger } from 'pino';
import type { Clock } from '../domain/clock';
import type { OutboxEvent } from '../domain/documents';
import type { MongoStore } from '../store/mongo-store';
import type { EventPublisher, EventThread } from './event-publisher';

export interface OutboxDeps {
  store: MongoStore;
  events: EventPublisher;
  clock: Clock;
  log: Logger;
}

/** An outbox entry whose thread does not record its event this long after it settled belongs to a write that never happened. */
const UNWRITTEN_EVENT_MS = 30_000;

export class Outbox {
  constructor(private readonly deps: OutboxDeps) {}

  /**
   * Runs `write`, which records `event` on the thread, with the event in the outbox first: if this process dies
   * right after the write, or Redis refuses the add, the sweep still enqueues it. `write` gets the entry's insert
   * and awaits it before it writes the thread (so work that comes first overlaps it). A write that did not happen (null) takes its entry back. The event goes on its queues right after.
   *
   * `finishing`: work that `write` started and that goes on while the event is put on its queues (a create's timer
   * row); it resolves to the thread as the event should have gone out with, and when that is not the thread `write`
   * returned, the event goes again as it (job ids are event ids, so the jobs already added are not added twice).
   * The entry stays until both are done, so a process that dies meanwhile leaves the event to the sweep.
   */
  async recording<T extends EventThread>(
    threadId: string,
    event: OutboxEvent,
    write: (inOutbox: Promise<unknown>) => Promise<T | null>,
    finishing?: (written: T) => Promise<EventThread>,
  ): Promise<T | null> {
    const entry = this.deps.store.outbox.pending(threadId, event);
    let written: T | null = null;
    try {
      written = await write(entry);
    } finally {
      // `entry` may have failed (then the write did not wait for it and failed too): nothing to take back then.
      const mine = await entry.catch(() => false);
      if (written === null && mine) await this.deps.store.outbox.abandoned(event.id).catch(() => {});
    }
    if (written !== null) await this.publish(written, [event], finishing?.(written));
    return written;
  }

  /**
   * Puts events on their queues right after the write that recorded them. A failure is not the caller's:
   * the events stay in the outbox and the sweep enqueues them (job ids are event ids, so twice is once).
   */
  private async publish(thread: EventThread, events: readonly OutboxEvent[], finished?: Promise<EventThread>): Promise<void> {
    try {
      const [, final] = await Promise.all([this.deps.events.publish(thread, events), finished]);
      if (final && final !== thread) await this.deps.events.publish(final, events);
      this.deps.store.outbox.enqueued(events.map((e) => e.id));
    } catch (error) {
      this.deps.log.warn({ thread_id: thread._id, err: (error as Error).message }, 'events not enqueued yet; the outbox sweep will retry');
    }
  }

  /**
   * Enqueues the outbox events older than `settleMs` and removes them. It reads only the outbox, which holds the
   * events in flight: with nothing waiting it costs one empty read. An entry whose write never happened (its
   * thread does not record the event) is dropped once that write's time is up. Reading each thread through the
   * store also finishes a write whose writer died before applying it.
   */
  async sweep(settleMs: number, limit = 500): Promise<number> {
    const { store } = this.deps;
    await store.outbox.flush();
    const now = this.deps.clock.now().getTime();
    let enqueued = 0;
    for (const entry of await store.outbox.waiting(limit)) {
      const age = now - entry.at.getTime();
      if (age < settleMs) continue;
      const thread = await store.readThread(entry.thread_id);
      // A thread drops none of its events whose entries wait (store/outbox-cap.ts): absent means never written.
      if (thread?.outbox.some((e) => e.id === entry._id)) {
        await this.deps.events.publish(thread, [entry.event]);
        await store.outbox.remove([entry._id]);
        enqueued += 1;
      } else if (age > settleMs + UNWRITTEN_EVENT_MS) {
        await store.outbox.remove([entry._id]);
      }
    }
    return enqueued;
  }
}
