// Which handoff timers have come due, found without reading the `timers` collection: on FerretDB a ledger of
// minute buckets addressed by `_id` (entries as in mailbox-log.ts), on MongoDB one indexed query on `due_at`.
import type { Collection } from 'mongodb';
import type { MailboxEntryDoc, MailboxHeadDoc, MetaDoc, TimerDoc } from '../domain/documents';
import { InsertBatcher } from './insert-batcher';
import { entryId, MailboxLog } from './mailbox-log';
import type { MongoStore } from './mongo-store';
import { isDuplicateKey, putById } from './thread-writes';

export const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
/** At most this many due timers are handed out by one sweep (the rest come at the next one). */
const TAKE_AT_MOST = 10_000;
/** Marks this process remembers having written (a mark is written once; remembering saves the insert). */
const REMEMBERED_MARKS = 10_000;
/** The `meta` document holding the first minute the next sweep reads. */
export const TIMER_DUE_CURSOR = 'timers_due_cursor';

/** Port used by service/handoff-timers.ts. */
export interface TimerDue {
  /** The thread's timer is (re)armed for `dueAt`; `now` is the relay's clock. */
  note(threadId: string, dueAt: Date, now: Date): Promise<void>;
  /** Thread ids whose timers may be due at `now` (some may have moved on since: the caller re-reads each row). */
  due(now: Date): Promise<{ ids: string[]; done: () => Promise<void> }>;
  /**
   * Thread ids whose timers were noted for the minutes from `from` up to (not including) `until`, both minute starts
   * in ms, changing nothing: the steps coming due soon, whose jobs the sweep adds ahead of time. Some may have moved on
   * since: the caller re-reads each row.
   */
  ahead(from: number, until: number): Promise<string[]>;
}

/** MongoDB: the `due` index on `timers.due_at` serves the due rows; nothing else is kept. */
export class IndexedTimerDue implements TimerDue {
  constructor(private readonly timers: Collection<TimerDoc>) {}

  async note(): Promise<void> {}

  async due(now: Date): Promise<{ ids: string[]; done: () => Promise<void> }> {
    const rows = await this.timers.find({ due_at: { $lte: now } }, { projection: { _id: 1 } }).limit(TAKE_AT_MOST).toArray();
    return { ids: rows.map((row) => row._id), done: async () => {} };
  }

  async ahead(from: number, until: number): Promise<string[]> {
    const rows = await this.timers.find({ due_at: { $gte: new Date(from), $lt: new Date(until) } }, { projection: { _id: 1 } }).toArray();
    return rows.map((row) => row._id);
  }
}

interface MarkDoc {
  _id: string;
}

/** The start of the minute `at` falls in (ms): the due ledger's buckets, and the look-ahead's steps, are whole minutes. */
export function minuteOf(at: Date | number): number {
  return Math.floor(new Date(at).getTime() / MINUTE_MS) * MINUTE_MS;
}

function hourOf(minute: number): number {
  return Math.floor(minute / HOUR_MS) * HOUR_MS;
}

const hourMark = (hour: number) => `h:${new Date(hour).toISOString().slice(0, 13)}`;
const minuteMark = (minute: number) => `m:${new Date(minute).toISOString().slice(0, 16)}`;
const bucketBox = (minute: number) => `due:${new Date(minute).toISOString().slice(0, 16)}`;

/**
 * FerretDB: a timer armed for minute M is an entry of the bucket `due:<M>` (`_id` `due:<M>#<n>`, positions dense
 * from 1 as in a mailbox log), and the minute and its hour are marked (`m:<M>`, `h:<hour>`, each written once).
 * A sweep reads the cursor (the first minute not yet cleared), each hour's mark from there to now, the marks of the
 * minutes of a marked hour, and the entries of a marked minute: with nothing due, three or four `_id` reads, however
 * many timers are open. Minutes before the current one are deleted once handed out, and the cursor moves on; an
 * entry is always noted at least one minute ahead of `now`, so a sweep never clears a minute still written to.
 * An entry is only ever appended after its minute's mark is in (and a clear deletes the mark last), so the process
 * whose insert made a minute's mark starts that bucket at position 1 without reading its head; were the bucket not
 * empty after all, the append's duplicate would read the head as any collision does.
 */
export class BucketTimerDue implements TimerDue {
  private readonly log: MailboxLog;
  private readonly marked = new Set<string>();
  private readonly noted = new Set<string>();
  /** Mark inserts in flight, so the notes that wait on one all learn whether it made the mark. */
  private readonly marking = new Map<string, Promise<boolean>>();

  constructor(
    private readonly entries: Collection<MailboxEntryDoc>,
    private readonly heads: Collection<MailboxHeadDoc>,
    private readonly marks: Collection<MarkDoc>,
    private readonly meta: Collection<MetaDoc>,
    /** Read once, when no cursor exists yet (a new store, or one from before this ledger): every open timer. */
    private readonly timers: Collection<TimerDoc>,
  ) {
    this.log = new MailboxLog(entries, heads, new InsertBatcher(entries, 1));
  }

  async note(threadId: string, dueAt: Date, now: Date): Promise<void> {
    const minute = Math.max(minuteOf(dueAt), minuteOf(now) + MINUTE_MS);
    // The thread is in that minute's bucket already (noted again by a sweep while its job waits): once is enough.
    const key = `${threadId}@${minute}`;
    if (this.noted.has(key)) return;
    const [, created] = await Promise.all([this.mark(hourMark(hourOf(minute))), this.mark(minuteMark(minute))]);
    const box = bucketBox(minute);
    // No entry goes into a bucket before its mark does: the one whose insert made the mark knows the bucket is empty.
    if (created) this.log.startsEmpty(box);
    await this.log.append(box, threadId, dueAt);
    if (this.noted.size >= REMEMBERED_MARKS) this.noted.clear();
    this.noted.add(key);
  }

  async due(now: Date): Promise<{ ids: string[]; done: () => Promise<void> }> {
    const current = minuteOf(now);
    const cursor = await this.meta.findOne({ _id: TIMER_DUE_CURSOR });
    if (!cursor) return this.start(now);
    const from = Math.min(Number(cursor.value), current);
    const cleared: Array<() => Promise<void>> = [];
    const ids = await this.bucketed(from, current + MINUTE_MS, TAKE_AT_MOST, {
      minute: (minute, positions) => {
        if (minute < current) cleared.push(() => this.clear(minute, positions));
      },
      hour: (hour) => {
        if (hour + HOUR_MS <= current) cleared.push(() => this.drop(hourMark(hour)));
      },
    });
    // Up to the current minute (read again next time: it may still get entries due later in it).
    const next = ids.length < TAKE_AT_MOST ? current : from;
    return {
      ids: [...new Set(ids)],
      done: async () => {
        for (const clear of cleared) await clear();
        await putById(this.meta, TIMER_DUE_CURSOR, { value: next, at: now });
      },
    };
  }

  async ahead(from: number, until: number): Promise<string[]> {
    return [...new Set(await this.bucketed(from, until, Number.POSITIVE_INFINITY))];
  }

  /**
   * The thread ids in the buckets of the minutes from `from` up to (not including) `until`, through the marks (an
   * hour without a mark costs one read); `read` hears of each marked minute read (its positions) and each marked hour.
   */
  private async bucketed(
    from: number,
    until: number,
    atMost: number,
    read: { minute?: (minute: number, positions: number[]) => void; hour?: (hour: number) => void } = {},
  ): Promise<string[]> {
    const ids: string[] = [];
    // The hours' marks at once (a look-ahead of two days is 48 of them); only marked hours are walked.
    const hours: number[] = [];
    for (let hour = hourOf(from); hour < until; hour += HOUR_MS) hours.push(hour);
    const marked = await Promise.all(hours.map((hour) => this.marks.findOne({ _id: hourMark(hour) })));
    for (const [h, hour] of hours.entries()) {
      if (ids.length >= atMost) break;
      if (!marked[h]) continue;
      const minutes: number[] = [];
      for (let m = Math.max(hour, from); m < hour + HOUR_MS && m < until; m += MINUTE_MS) minutes.push(m);
      const present = await Promise.all(minutes.map((m) => this.marks.findOne({ _id: minuteMark(m) })));
      for (const [i, minute] of minutes.entries()) {
        if (!present[i]) continue;
        const box = bucketBox(minute);
        const head = await this.log.head(box);
        const positions = Array.from({ length: head }, (_, k) => k + 1);
        for (const entry of await this.log.at(box, positions)) if (entry) ids.push(entry.thread_id);
        read.minute?.(minute, positions);
      }
      read.hour?.(hour);
    }
    return ids;
  }

  /** No cursor yet: every open timer is noted once (their rows are read this one time), then the cursor is set. */
  private async start(now: Date): Promise<{ ids: string[]; done: () => Promise<void> }> {
    const ids: string[] = [];
    for await (const row of this.timers.find({}, { projection: { _id: 1, due_at: 1 } })) {
      await this.note(row._id, row.due_at, now);
      if (row.due_at <= now) ids.push(row._id);
    }
    return { ids, done: () => putById(this.meta, TIMER_DUE_CURSOR, { value: minuteOf(now), at: now }) };
  }

  /** Writes the mark once; true for the calls that waited on the insert that made it (concurrent ones share it). */
  private mark(id: string): Promise<boolean> {
    if (this.marked.has(id)) return Promise.resolve(false);
    let insert = this.marking.get(id);
    if (!insert) {
      insert = this.insertMark(id).finally(() => this.marking.delete(id));
      this.marking.set(id, insert);
    }
    return insert;
  }

  private async insertMark(id: string): Promise<boolean> {
    let created = true;
    try {
      await this.marks.insertOne({ _id: id });
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
      created = false;
    }
    if (this.marked.size >= REMEMBERED_MARKS) this.marked.clear();
    this.marked.add(id);
    return created;
  }

  private async drop(id: string): Promise<void> {
    await this.marks.deleteOne({ _id: id });
    this.marked.delete(id);
  }

  /** A past minute handed out: its entries, its head hint and its mark go. */
  private async clear(minute: number, positions: number[]): Promise<void> {
    const box = bucketBox(minute);
    for (const p of positions) await this.entries.deleteOne({ _id: entryId(box, p) });
    await this.heads.deleteOne({ _id: box });
    await this.drop(minuteMark(minute));
  }
}

/** The due structure the store's server calls for. */
export function timerDueFor(store: MongoStore): TimerDue {
  if (store.capabilities.indexedQueries) return new IndexedTimerDue(store.timers);
  const db = store.db;
  return new BucketTimerDue(db.collection('timer_due'), db.collection('timer_due_heads'), db.collection<MarkDoc>('timer_due_marks'), store.meta, store.timers);
}
