// The outbox is on the threads: the write that records an event on its thread also names, in the same document, the
// jobs it is about to get (`jobs_pending`: `<queue>:<event id>`, with `pending_since` on the threads' `outbox`
// index). A worker takes its job out once it finished; until then the sweep can put the event on its queues again,
// so a process that died after the write, or a Redis that lost its jobs (restarted empty), loses no delivery.
import { LRUCache } from 'lru-cache';
import type { AnyBulkWriteOperation, Collection } from 'mongodb';
import type { OutboxEvent, ThreadDoc } from '../domain/documents';

/** Finished jobs are marked in batches: one update command per this interval instead of one per job. */
const FLUSH_MS = 1_000;
/** Threads per update command (one to three statements each). */
const THREADS_PER_COMMAND = 100;
/** The threads whose jobs this process named pending and has not all seen finish (the least recent are forgotten). */
const REMEMBERED_THREADS = 10_000;

/** A pending job's key on its thread. */
export function jobKey(queue: string, eventId: string): string {
  return `${queue}:${eventId}`;
}

/** The queue and event of a pending job's key. */
export function parseJobKey(key: string): { queue: string; eventId: string } {
  const at = key.indexOf(':');
  return { queue: key.slice(0, at), eventId: key.slice(at + 1) };
}

export class OutboxLedger {
  /** The queues every event gets a job on (EventPublisher.queues); none until the relay says (deliverTo). */
  private queues: readonly string[] = [];
  /** Per thread, the keys of its jobs that finished since the last flush. */
  private finishedJobs = new Map<string, string[]>();
  /**
   * Per thread, the jobs this process named pending on it and has not seen finish: a thread with none left here most
   * likely holds just the jobs that finished, and is written with the one statement that takes them all out (checked:
   * one that did not match gets the general statements after).
   */
  private readonly unfinished = new LRUCache<string, Set<string>>({ max: REMEMBERED_THREADS });
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(private readonly threads: Collection<ThreadDoc>) {}

  /** The queues each new event's jobs go to, from now on. */
  deliverTo(queues: readonly string[]): void {
    this.queues = [...queues];
  }

  /** `next` with the jobs of `events` on `queues` pending, since `now` unless it waits for older ones. */
  withPending(
    next: ThreadDoc,
    events: readonly OutboxEvent[],
    now: Date,
    queues: readonly string[] = this.queues,
  ): ThreadDoc {
    const keys = events.flatMap((event) => queues.map((queue) => jobKey(queue, event.id)));
    if (keys.length === 0) return next;
    const unfinished = this.unfinished.get(next._id);
    if (unfinished) for (const key of keys) unfinished.add(key);
    else this.unfinished.set(next._id, new Set(keys));
    const pending = next.jobs_pending ?? [];
    return {
      ...next,
      jobs_pending: [...pending, ...keys.filter((key) => !pending.includes(key))],
      pending_since: next.pending_since ?? now,
    };
  }

  /** `next` with the jobs of the events it records that `before` did not pending (every thread write: MongoStore). */
  marked(before: ThreadDoc | null, next: ThreadDoc, now: Date): ThreadDoc {
    const known = new Set(before?.outbox.map((event) => event.id));
    const added = next.outbox.filter((event) => !known.has(event.id));
    return added.length === 0 ? next : this.withPending(next, added, now);
  }

  /** The job of `eventId` on `queue`, of thread `threadId`, finished (done, or failed for good); marked in the next batch. */
  finished(threadId: string, queue: string, eventId: string): void {
    const key = jobKey(queue, eventId);
    const keys = this.finishedJobs.get(threadId);
    if (keys) keys.push(key);
    else this.finishedJobs.set(threadId, [key]);
    const unfinished = this.unfinished.get(threadId);
    unfinished?.delete(key);
    if (unfinished?.size === 0) this.unfinished.delete(threadId);
    this.timer ??= setTimeout(() => void this.flush(), FLUSH_MS);
    this.timer.unref();
  }

  /**
   * The threads whose jobs have waited since `before` or earlier, oldest first (no more than `limit`): a range on
   * the `outbox` index, which holds only the threads with jobs in flight.
   */
  waiting(before: Date, limit: number): Promise<ThreadDoc[]> {
    return this.threads
      .find({ pending_since: { $lte: before } })
      .sort({ pending_since: 1 })
      .limit(limit)
      .toArray();
  }

  /** How many threads have jobs in flight. */
  count(): Promise<number> {
    return this.threads.countDocuments({ pending_since: { $gte: new Date(0) } });
  }

  /** Takes the jobs `keys` out of thread `threadId` (the sweep found them finished, or their event gone). */
  async remove(threadId: string, keys: readonly string[]): Promise<void> {
    if (keys.length > 0) await this.threads.bulkWrite(takenOut([threadId, [...new Set(keys)]]), { ordered: true });
  }

  /** Marks the batched finished jobs now (on shutdown, or when a test wants the outbox settled). */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.finishedJobs;
    this.finishedJobs = new Map();
    if (batch.size === 0) return this.flushing;
    const threads = [...batch].map(([id, keys]) => [id, [...new Set(keys)]] as const);
    // A thread with none of this process's jobs left unfinished (the usual case) is written by one statement; the
    // others, and any of those it did not match, by the general ones.
    const whole = threads.filter(([id]) => !this.unfinished.has(id));
    const partial = threads.filter(([id]) => this.unfinished.has(id));
    this.flushing = this.flushing
      .then(async () => {
        for (let i = 0; i < whole.length; i += THREADS_PER_COMMAND) {
          const part = whole.slice(i, i + THREADS_PER_COMMAND);
          const { matchedCount } = await this.threads.bulkWrite(part.map(allTakenOut), { ordered: true });
          if (matchedCount < part.length) partial.push(...part);
        }
        for (let i = 0; i < partial.length; i += THREADS_PER_COMMAND) {
          await this.threads.bulkWrite(partial.slice(i, i + THREADS_PER_COMMAND).flatMap(takenOut), { ordered: true });
        }
      })
      .then(
        () => undefined,
        () => {
          // Left pending: the sweep finds their jobs finished on their queues and takes them out.
        },
      );
    return this.flushing;
  }
}

type Finished = readonly [threadId: string, keys: readonly string[]];

/** The fields off a thread whose pending jobs are exactly `keys` (and nothing else). */
function allTakenOut([_id, keys]: Finished): AnyBulkWriteOperation<ThreadDoc> {
  return {
    updateOne: {
      filter: { _id, jobs_pending: { $all: [...keys], $size: keys.length } },
      update: { $unset: { jobs_pending: '', pending_since: '' } },
    },
  };
}

/**
 * The finished jobs `keys` out of their thread, which is rewritten once: a thread whose pending jobs are exactly
 * those loses `jobs_pending` and `pending_since` (the sweep's `outbox` index lets go of it); one with jobs still in
 * flight loses those finished; one that holds none of them is not written (the three statements read it; only one
 * writes). The version stays: a thread's versioned writes only ever add to its pending jobs (thread-writes.ts
 * AppendedList), so one that read the thread before puts none back.
 */
function takenOut(finished: Finished): AnyBulkWriteOperation<ThreadDoc>[] {
  const [_id, keys] = finished;
  return [
    allTakenOut(finished),
    {
      updateOne: {
        filter: { _id, jobs_pending: { $in: [...keys] } },
        update: { $pullAll: { jobs_pending: [...keys] } },
      },
    },
    // Left with none (some of its jobs were taken out before, by the sweep or an earlier batch).
    {
      updateOne: {
        filter: { _id, jobs_pending: { $size: 0 } },
        update: { $unset: { jobs_pending: '', pending_since: '' } },
      },
    },
  ];
}
