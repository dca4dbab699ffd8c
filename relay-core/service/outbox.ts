// The outbox: the write that records an event on its thread also marks the event's jobs pending there
// (store/outbox-ledger.ts); the event goes to its queues right after the write, each job is taken out of the thread
// once it finished, and a sweep enqueues whatever missed its queue or lost its job there (Redis was down or came
// back empty, a process died).
import type { Logger } from 'pino';
import type { Clock } from '../domain/clock';
import { inParallel } from '../ops/in-parallel';
import type { OutboxEvent, ThreadDoc } from '../domain/documents';
import { jobKey, parseJobKey, type OutboxLedger } from '../store/outbox-ledger';
import type { EventJobState, EventPublisher, EventThread } from './event-publisher';

// Only the outbox ledger of the store (store/outbox-ledger.ts), so the fast tier sweeps an in-memory one that passes
// the same contract suite (test/contracts/outbox-ledger-contract.ts).
export interface OutboxDeps {
  store: { outbox: Pick<OutboxLedger, 'flush' | 'waiting' | 'remove'> };
  events: Pick<EventPublisher, 'publish' | 'jobStates'>;
  clock: Clock;
  log: Logger;
}

/** Threads one sweep works on at once. */
const SWEEP_CONCURRENCY = 8;

export class Outbox {
  constructor(private readonly deps: OutboxDeps) {}

  /**
   * Runs `write`, which records `event` on its thread (and so marks its jobs pending there), and puts the event on
   * its queues right after: if this process dies in between, or Redis refuses the add, the sweep enqueues it.
   */
  async recording<T extends EventThread>(event: OutboxEvent, write: () => Promise<T | null>): Promise<T | null> {
    const written = await write();
    if (written !== null) await this.publish(written, [event]);
    return written;
  }

  /**
   * Puts events on their queues right after the write that recorded them. A failure is not the caller's:
   * their jobs stay pending on the thread and the sweep enqueues them (job ids are event ids, so twice is once).
   */
  private async publish(thread: EventThread, events: readonly OutboxEvent[]): Promise<void> {
    try {
      await this.deps.events.publish(thread, events);
    } catch (error) {
      this.deps.log.warn(
        { thread_id: thread._id, err: (error as Error).message },
        'events not enqueued yet; the outbox sweep will retry',
      );
    }
  }

  /**
   * Looks at the threads whose jobs have been pending `settleMs` or longer: a job that finished is taken out (its
   * worker's mark was lost); an event with a job missing from its queue (never added, or Redis lost it) is enqueued
   * again, and the processors, each safe to re-run, deliver nothing twice; a job still queued is left to its worker.
   * It reads only the threads with jobs in flight (the `outbox` index): with nothing waiting it costs one empty read.
   */
  async sweep(settleMs: number, limit = 500): Promise<number> {
    const { store } = this.deps;
    await store.outbox.flush();
    const before = new Date(this.deps.clock.now().getTime() - settleMs);
    const waiting = await store.outbox.waiting(before, limit);
    // A few threads at a time (each thread's events in order): after an outage, hundreds wait, and one at a time
    // each would wait for its round trips to Redis and the database before the next began.
    let enqueued = 0;
    await inParallel(waiting, SWEEP_CONCURRENCY, async (thread) => {
      const sent = await this.sweepThread(thread);
      enqueued += sent;
    });
    return enqueued;
  }

  private async sweepThread(thread: ThreadDoc): Promise<number> {
    const { store, events } = this.deps;
    const queuesOf = new Map<string, string[]>();
    for (const key of thread.jobs_pending ?? []) {
      const { queue, eventId } = parseJobKey(key);
      queuesOf.set(eventId, [...(queuesOf.get(eventId) ?? []), queue]);
    }
    let enqueued = 0;
    const done: string[] = [];
    for (const [eventId, queues] of queuesOf) {
      // With Redis down, the publish below fails too, and records the event in its participants' event logs
      // meanwhile (in order, before later events).
      const states = await events.jobStates(eventId, queues).catch((): EventJobState[] => queues.map(() => 'missing'));
      const event = thread.outbox.find((e) => e.id === eventId);
      // A thread keeps every event with a job pending (store/outbox-cap.ts): one it lacks has nothing to deliver.
      done.push(
        ...queues.filter((_queue, i) => !event || states[i] === 'finished').map((queue) => jobKey(queue, eventId)),
      );
      if (event && states.includes('missing')) {
        await events.publish(thread, [event]);
        enqueued += 1;
      }
    }
    await store.outbox.remove(thread._id, done);
    return enqueued;
  }
}
