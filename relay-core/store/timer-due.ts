// Which handoff timers have come due: one query on the `due` index of `timers.due_at`, on every engine.
import type { Collection } from 'mongodb';
import type { TimerDoc } from '../domain/documents';
import type { MongoStore } from './mongo-store';

export const MINUTE_MS = 60_000;
/** At most this many due timers are handed out by one sweep (the rest come at the next one). */
const TAKE_AT_MOST = 10_000;

/** Port used by service/handoff-timers.ts. */
export interface TimerDue {
  /** Thread ids whose timers may be due at `now` (some may have moved on since: the caller re-reads each row). */
  due(now: Date): Promise<string[]>;
  /**
   * Thread ids whose timers are due in the minutes from `from` up to (not including) `until`, both minute starts
   * in ms, changing nothing: the steps coming due soon, whose jobs the sweep adds ahead of time. Some may have moved on
   * since: the caller re-reads each row.
   */
  ahead(from: number, until: number): Promise<string[]>;
}

/** The `due` index on `timers.due_at` serves the due rows; nothing else is kept. */
export class IndexedTimerDue implements TimerDue {
  constructor(private readonly timers: Collection<TimerDoc>) {}

  async due(now: Date): Promise<string[]> {
    const rows = await this.timers.find({ due_at: { $lte: now } }, { projection: { _id: 1 } }).limit(TAKE_AT_MOST).toArray();
    return rows.map((row) => row._id);
  }

  async ahead(from: number, until: number): Promise<string[]> {
    const rows = await this.timers.find({ due_at: { $gte: new Date(from), $lt: new Date(until) } }, { projection: { _id: 1 } }).toArray();
    return rows.map((row) => row._id);
  }
}

/** The start of the minute `at` falls in (ms): the look-ahead's steps are whole minutes. */
export function minuteOf(at: Date | number): number {
  return Math.floor(new Date(at).getTime() / MINUTE_MS) * MINUTE_MS;
}

/** The due rows of the store's timers. */
export function timerDueFor(store: MongoStore): TimerDue {
  return new IndexedTimerDue(store.timers);
}
