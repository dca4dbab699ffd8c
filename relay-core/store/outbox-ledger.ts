// The outbox is on the threads: the write that records an event on its thread also names, in the same document, the
// jobs it is about to get (`jobs_pending`: `<queue>:<event id>`, with `pending_since` on the threads' `outbox`
// index). A worker takes its job out once it finished; until then the sweep can put the event on its queues again,
// so a process that died after the write, or a Redis that lost its jobs (restarted empty), loses no delivery.
import type { AnyBulkWriteOperation, Collection } from 'mongodb';
import type { OutboxEvent, ThreadDoc } from '../domain/documents';

/** Finished jobs are marked in batches: one update command per this interval instead of one per job. */
const FLUSH_MS = 200;
/** Threads per update command (three statements each): the embedded FerretDB stalls on commands of 100 statements. */
const THREADS_PER_COMMAND = 25;

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
    const keys = this.finishedJobs.get(threadId);
    if (keys) keys.push(jobKey(queue, eventId));
    else this.finishedJobs.set(threadId, [jobKey(queue, eventId)]);
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
    if (keys.length > 0) await this.threads.bulkWrite(removals(new Map([[threadId, [...keys]]])), { ordered: true });
  }

  /** Marks the batched finished jobs now (on shutdown, or when a test wants the outbox settled). */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.finishedJobs;
    this.finishedJobs = new Map();
    if (batch.size === 0) return this.flushing;
    const threads = [...batch];
    this.flushing = this.flushing
      .then(async () => {
        for (let i = 0; i < threads.length; i += THREADS_PER_COMMAND) {
          await this.threads.bulkWrite(removals(new Map(threads.slice(i, i + THREADS_PER_COMMAND))), { ordered: true });
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

/**
 * The finished jobs out of their threads, each thread rewritten once: a thread whose pending jobs are exactly those
 * finished loses `jobs_pending` and `pending_since` (the sweep's `outbox` index lets go of it); one with jobs still
 * in flight loses those finished; one that holds none of them is not written (the three statements read it; only one
 * writes). Taking the jobs out and then the fields off an emptied thread, as two writes, cost every thread two. The version stays: a thread's
 * versioned writes only ever add to its pending jobs (thread-writes.ts AppendedList), so one that read the thread
 * before puts none back.
 */
function removals(finished: ReadonlyMap<string, string[]>): AnyBulkWriteOperation<ThreadDoc>[] {
  return [...finished].flatMap(([_id, keys]): AnyBulkWriteOperation<ThreadDoc>[] => {
    const unique = [...new Set(keys)];
    return [
      {
        updateOne: {
          filter: { _id, jobs_pending: { $all: unique, $size: unique.length } },
          update: { $unset: { jobs_pending: '', pending_since: '' } },
        },
      },
      { updateOne: { filter: { _id, jobs_pending: { $in: unique } }, update: { $pullAll: { jobs_pending: unique } } } },
      // Left with none (some of its jobs were taken out before, by the sweep or an earlier batch).
      {
        updateOne: {
          filter: { _id, jobs_pending: { $size: 0 } },
          update: { $unset: { jobs_pending: '', pending_since: '' } },
        },
      },
    ];
  });
}
