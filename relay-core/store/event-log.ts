// Per-teammate event logs: every outbox event of a thread, recorded once into each participant's log in order. Entry
// n of `alice@acme`'s log is `_id` `alice@acme:<n>`; a read after a cursor is one query on the `by_position` index.
import { LRUCache } from 'lru-cache';
import { MongoBulkWriteError, type Collection, type Db } from 'mongodb';
import type { OutboxEvent } from '../domain/documents';
import { InsertBatcher } from './insert-batcher';
import { isDuplicateKey } from './thread-writes';

/** Entry `seq` of a teammate's log: `_id` `${handle}:${seq}`. */
export interface EventEntryDoc {
  _id: string;
  handle: string;
  seq: number;
  thread_id: string;
  /** The event's id: unique per log (the `by_event` index). */
  event_id: string;
  event: OutboxEvent;
  recorded_at: Date;
}

/** An event waiting for its position in a log. */
interface Placement {
  threadId: string;
  event: OutboxEvent;
  resolve: (seq: number) => void;
  reject: (error: unknown) => void;
}

/** An entry as a reader gets it. */
export interface LoggedEvent {
  seq: number;
  thread_id: string;
  event: OutboxEvent;
}

/** The logs whose last position this process remembers (the least recently used is read from the store again). */
const REMEMBERED_LOGS = 10_000;
/** At most this many of a log's waiting events are placed by one insert. */
const PLACE_BATCH = 64;

export function eventEntryId(handle: string, seq: number): string {
  return `${handle}:${seq}`;
}

/**
 * Positions are dense from 1 and unique (`_id`): this process has one insert into a log on its way at a time, takes
 * the positions after the last one it knows for the events waiting (those that arrived while the previous insert was
 * out, in order), and inserts them in one ordered insert, which stops at the first that fails. A position is only
 * taken by a writer that saw the one before it, so a reader never passes an entry still on its way.
 *
 * Each event is in a log once (the unique `by_event` index): an insert that fails as a duplicate met a position
 * another process took, or an event already recorded (a re-run job, the sweep's re-enqueue, two recorders at once).
 * The recorder then reads the head and which of its events are in already, answers those with their positions and
 * places the rest after the head.
 */
export class EventLog {
  readonly entries: Collection<EventEntryDoc>;
  private readonly known = new LRUCache<string, number>({ max: REMEMBERED_LOGS });
  /** Per log, the events waiting for a position; a log is here while its placer runs (placeWaiting). */
  private readonly waiting = new Map<string, Placement[]>();
  /** Both participants' entries of an event (and events recorded at once) go in one command. */
  private readonly inserts: InsertBatcher<EventEntryDoc>;

  constructor(db: Db, inFlight = 1) {
    this.entries = db.collection<EventEntryDoc>('event_log');
    this.inserts = new InsertBatcher(this.entries, inFlight);
  }

  /**
   * Records `event` of `threadId` in `handle`'s log (once however often it is called) and returns its position. Only
   * the entry's insert waits for the log's previous one (positions go in order), and the events that came meanwhile
   * go in the next insert together, so a busy teammate's log keeps up with any rate of events at one round trip per
   * insert.
   */
  record(handle: string, threadId: string, event: OutboxEvent): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      const placement = { threadId, event, resolve, reject };
      const queue = this.waiting.get(handle);
      if (queue) {
        queue.push(placement);
        return;
      }
      this.waiting.set(handle, [placement]);
      void this.placeWaiting(handle);
    });
  }

  /** Places `handle`'s waiting events, one insert at a time, until none are left. */
  private async placeWaiting(handle: string): Promise<void> {
    const queue = this.waiting.get(handle)!;
    while (queue.length > 0) await this.placeBatch(handle, queue.splice(0, PLACE_BATCH));
    this.waiting.delete(handle);
  }

  /** Inserts the entries of `batch` at the next positions of the log, in order, and settles each with its position. */
  private async placeBatch(handle: string, batch: Placement[]): Promise<void> {
    let rest = batch;
    try {
      if (!this.known.has(handle)) await this.head(handle);
      while (rest.length > 0) {
        const first = (this.known.get(handle) ?? 0) + 1;
        const docs = rest.map((p, i) => ({
          _id: eventEntryId(handle, first + i),
          handle,
          seq: first + i,
          thread_id: p.threadId,
          event_id: p.event.id,
          event: p.event,
          recorded_at: new Date(),
        }));
        const { landed, failure } = await this.insertInOrder(docs);
        rest.slice(0, landed).forEach((p, i) => p.resolve(first + i));
        if (landed > 0) this.remember(handle, first + landed - 1);
        rest = rest.slice(landed);
        if (failure === undefined) return;
        if (!failure.duplicate) throw failure.error;
        await this.head(handle);
        rest = await this.answerRecorded(handle, rest);
      }
    } catch (error) {
      // The insert may or may not have landed: the next append finds out from the log itself.
      this.known.delete(handle);
      for (const p of rest) p.reject(error);
    }
  }

  /**
   * Inserts `docs` in order, stopping at the first that fails: how many landed and, if one failed, whether as a
   * duplicate (of a position or of an event). A lone entry shares a command with other logs' entries (InsertBatcher).
   * Throws when the outcome is unknown.
   */
  private async insertInOrder(
    docs: EventEntryDoc[],
  ): Promise<{ landed: number; failure?: { duplicate: boolean; error: unknown } }> {
    try {
      if (docs.length === 1) await this.inserts.insert(docs[0]!);
      else await this.entries.insertMany(docs, { ordered: true });
      return { landed: docs.length };
    } catch (error) {
      if (docs.length === 1) return { landed: 0, failure: { duplicate: isDuplicateKey(error), error } };
      const failed = error instanceof MongoBulkWriteError ? [error.writeErrors].flat()[0] : undefined;
      if (!failed) throw error;
      return { landed: failed.index, failure: { duplicate: failed.code === 11000, error } };
    }
  }

  /** Settles those of `placements` whose events `handle`'s log holds already with their positions; returns the rest. */
  private async answerRecorded(handle: string, placements: Placement[]): Promise<Placement[]> {
    const ids = placements.map((p) => p.event.id);
    const recorded = await this.entries
      .find({ handle, event_id: { $in: ids } }, { projection: { seq: 1, event_id: 1 } })
      .toArray();
    const positions = new Map(recorded.map((doc) => [doc.event_id, doc.seq]));
    return placements.filter((p) => {
      const seq = positions.get(p.event.id);
      if (seq !== undefined) p.resolve(seq);
      return seq === undefined;
    });
  }

  /** The last position of `handle`'s log (0 when empty). */
  async head(handle: string): Promise<number> {
    // The range on `seq` keeps SQLite (the embedded FerretDB) on `by_position`, not on `by_event`'s equal prefix.
    const last = await this.entries
      .find({ handle, seq: { $gt: 0 } }, { projection: { seq: 1 } })
      .sort({ seq: -1 })
      .limit(1)
      .next();
    const head = last?.seq ?? 0;
    this.remember(handle, head);
    return head;
  }

  /** The events after position `after`, oldest first, at most `limit`, and the position to read after next time. */
  async read(handle: string, after: number, limit: number): Promise<{ events: LoggedEvent[]; cursor: number }> {
    const docs = await this.entries
      .find({ handle, seq: { $gt: after } })
      .sort({ seq: 1 })
      .limit(limit)
      .toArray();
    const events = docs.map((doc) => ({ seq: doc.seq, thread_id: doc.thread_id, event: doc.event }));
    return { events, cursor: docs.at(-1)?.seq ?? after };
  }

  /**
   * The events below position `below` (from the head when null), newest first, at most `limit`, and the lowest
   * position to read below next time (1 once the log's start was reached): one query on `by_position`.
   */
  async readBack(
    handle: string,
    below: number | null,
    limit: number,
  ): Promise<{ events: Array<LoggedEvent & { recorded_at: Date }>; lowest: number }> {
    const docs = await this.entries
      .find({ handle, seq: below === null ? { $gt: 0 } : { $gt: 0, $lt: below } })
      .sort({ seq: -1 })
      .limit(limit)
      .toArray();
    const events = docs.map((doc) => ({
      seq: doc.seq,
      thread_id: doc.thread_id,
      event: doc.event,
      recorded_at: doc.recorded_at,
    }));
    return { events, lowest: docs.length < limit ? 1 : docs.at(-1)!.seq };
  }

  private remember(handle: string, position: number): void {
    if ((this.known.get(handle) ?? 0) < position) this.known.set(handle, position);
  }
}
