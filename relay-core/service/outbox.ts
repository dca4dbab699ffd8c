// The outbox: every event a thread write records is in the outbox collection before the write and goes to its
// queues right after it; its entry stays until the workers finished its jobs, and a sweep enqueues whatever missed
// its queue or lost its job there (Redis was down or came back empty, a process died).
import type { Logger } from 'pino';
import type { Clock } from '../domain/clock';
import type { OutboxEvent } from '../domain/documents';
import type { MongoStore } from '../store/mongo-store';
import type { EventJobState, EventPublisher, EventThread } from './event-publisher';

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
    const entry = this.deps.store.outbox.pending(threadId, event, this.deps.events.queues);
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
    } catch (error) {
      this.deps.log.warn({ thread_id: thread._id, err: (error as Error).message }, 'events not enqueued yet; the outbox sweep will retry');
    }
  }

  /**
   * Looks at the outbox entries older than `settleMs`: one whose jobs all finished goes (its last worker's mark was
   * lost); one whose job is missing from its queue (never added, or Redis lost it) is enqueued again, and the
   * processors, each safe to re-run, deliver nothing twice; one whose jobs are still queued is left to its workers.
   * It reads only the outbox, which holds the events in flight: with nothing waiting it costs one empty read. An
   * entry whose write never happened (its thread does not record the event) goes once that write's time is up.
   */
  async sweep(settleMs: number, limit = 500): Promise<number> {
    const { store, events } = this.deps;
    await store.outbox.flush();
    const now = this.deps.clock.now().getTime();
    let enqueued = 0;
    for (const entry of await store.outbox.waiting(limit)) {
      const age = now - entry.at.getTime();
      if (age < settleMs) continue;
      // An entry of an earlier layout names no queues: it waits for all of them. With Redis down, the publish below
      // fails too, and records the event in its participants' event logs meanwhile (in order, before later events).
      const states = await events.jobStates(entry._id, entry.jobs ?? events.queues).catch((): EventJobState[] => ['missing']);
      if (states.every((state) => state === 'finished')) {
        await store.outbox.remove([entry._id]);
        continue;
      }
      if (!states.includes('missing')) continue;
      const thread = await store.readThread(entry.thread_id);
      // A thread drops none of its events whose entries wait (store/outbox-cap.ts): absent means never written.
      if (thread?.outbox.some((e) => e.id === entry._id)) {
        await events.publish(thread, [entry.event]);
        enqueued += 1;
      } else if (age > settleMs + UNWRITTEN_EVENT_MS) {
        await store.outbox.remove([entry._id]);
      }
    }
    return enqueued;
  }
}
