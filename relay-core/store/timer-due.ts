// Which handoff timers have come due: one query on the threads' `due` index of `next_due_at`, on every engine.
import type { Collection, Filter } from 'mongodb';
import type { ThreadDoc, TimerDoc } from '../domain/documents';
import { armedTimer } from '../domain/timer-schedule';
import type { MongoStore } from './mongo-store';

export const MINUTE_MS = 60_000;
/** At most this many due timers are handed out by one sweep (the rest come at the next one). */
const TAKE_AT_MOST = 10_000;
/** What a sweep reads of a thread: its armed step. */
const STEP_ONLY = { projection: { _id: 1, next_timer: 1, next_due_at: 1 } } as const;

/** Port used by service/handoff-timers.ts. */
export interface TimerDue {
  /** The armed steps due at `now`. */
  due(now: Date): Promise<TimerDoc[]>;
  /** The armed steps due in the minutes from `from` up to (not including) `until`, both minute starts in ms. */
  ahead(from: number, until: number): Promise<TimerDoc[]>;
  /** Every armed step (after Redis lost its jobs). */
  all(): AsyncIterable<TimerDoc>;
}

/** The `due` index on `threads.next_due_at` serves the due steps; nothing else is kept. */
export class IndexedTimerDue implements TimerDue {
  constructor(private readonly threads: Collection<ThreadDoc>) {}

  due(now: Date): Promise<TimerDoc[]> {
    return this.steps({ next_due_at: { $lte: now } }, TAKE_AT_MOST);
  }

  ahead(from: number, until: number): Promise<TimerDoc[]> {
    return this.steps({ next_due_at: { $gte: new Date(from), $lt: new Date(until) } });
  }

  async *all(): AsyncIterable<TimerDoc> {
    // A range (not `$exists`) keeps the query on the index.
    for await (const thread of this.threads.find({ next_due_at: { $gte: new Date(0) } }, STEP_ONLY)) {
      const timer = armedTimer(thread as ThreadDoc);
      if (timer) yield timer;
    }
  }

  private async steps(filter: Filter<ThreadDoc>, limit = 0): Promise<TimerDoc[]> {
    const threads = await this.threads.find(filter, STEP_ONLY).limit(limit).toArray();
    return threads.flatMap((thread) => armedTimer(thread as ThreadDoc) ?? []);
  }
}

/** The start of the minute `at` falls in (ms): the look-ahead's steps are whole minutes. */
export function minuteOf(at: Date | number): number {
  return Math.floor(new Date(at).getTime() / MINUTE_MS) * MINUTE_MS;
}

/** The due steps of the store's threads. */
export function timerDueFor(store: MongoStore): TimerDue {
  return new IndexedTimerDue(store.threads);
}
