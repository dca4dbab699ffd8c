// Per-teammate event logs: every outbox event of a thread, recorded once into each participant's log in order. Entry
// n of `alice@acme`'s log is `_id` `alice@acme:<n>`, so reading after a cursor is `_id` lookups on every server.
import { MongoBulkWriteError, type Collection, type Db } from 'mongodb';
import type { OutboxEvent } from '../domain/documents';
import { InsertBatcher } from './insert-batcher';
import { isDuplicateKey, putById } from './thread-writes';
import { setBounded } from '../ops/bounded-map';

/** Entry `seq` of a teammate's log: `_id` `${handle}:${seq}`. */
export interface EventEntryDoc {
  _id: string;
  handle: string;
  seq: number;
  thread_id: string;
  event: OutboxEvent;
  recorded_at: Date;
  /** Another entry holds this event (two recorders raced): readers skip it. */
  dud?: boolean;
}

/** Which entry of `handle`'s log holds event `event_id`: `_id` `${handle}|${event_id}`. The first insert wins. */
export interface EventMarkDoc {
  _id: string;
  seq: number;
}

/** A hint of a log's last position (`_id` is the handle); the true head may be a few entries above it. */
export interface EventHeadDoc {
  _id: string;
  n: number;
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

const HEAD_EVERY = 8;
const REMEMBERED_LOGS = 10_000;
/** At most this many of a log's waiting events are placed by one insert. */
const PLACE_BATCH = 64;
/** Positions a read looks at in one round of lookups. */
const READ_BATCH = 16;

export function eventEntryId(handle: string, seq: number): string {
  return `${handle}:${seq}`;
}

function markId(handle: string, eventId: string): string {
  return `${handle}|${eventId}`;
}

/**
 * Positions are dense from 1: this process has one insert into a log on its way at a time, takes the positions after
 * the last one it knows for the events waiting (those that arrived while the previous insert was out, in order), and
 * inserts them under their unique `_id`s in one ordered insert, which stops at the first that fails; a duplicate
 * means another process took that position, so it re-reads the head and places the rest after it. Any other failure
 * forgets the position, so no hole is left behind (an ordered insert lands no entry after one that failed).
 *
 * Each event is in a log once: after its entry, the recorder inserts the event's mark (`handle|event_id` → seq);
 * the first mark wins. A recorder that loses (the same event recorded twice at once) flags its own entry a dud.
 * An entry is delivered once its mark points at it (a reader looks the mark up); an entry without a mark
 * yet holds the reader back (its writer is between the two inserts, or died there, and the outbox sweep records
 * the event again: the new entry gets the mark and this one is skipped).
 */
export class EventLog {
  readonly entries: Collection<EventEntryDoc>;
  readonly marks: Collection<EventMarkDoc>;
  readonly heads: Collection<EventHeadDoc>;
  private readonly known = new Map<string, number>();
  /** Per log, the events waiting for a position; a log is here while its placer runs (placeWaiting). */
  private readonly waiting = new Map<string, Placement[]>();
  /** Both participants' entries of an event (and events recorded at once) go in one command, their marks in another. */
  private readonly entryInserts: InsertBatcher<EventEntryDoc>;
  private readonly markInserts: InsertBatcher<EventMarkDoc>;

  constructor(db: Db, inFlight = 1) {
    this.entries = db.collection<EventEntryDoc>('event_log');
    this.marks = db.collection<EventMarkDoc>('event_marks');
    this.heads = db.collection<EventHeadDoc>('event_heads');
    this.entryInserts = new InsertBatcher(this.entries, inFlight);
    this.markInserts = new InsertBatcher(this.marks, inFlight);
  }

  /**
   * Records `event` of `threadId` in `handle`'s log (once however often it is called) and returns its position. Only
   * the entry's insert waits for the log's previous one (positions go in order), and the events that came meanwhile
   * go in the next insert together; its mark goes while the next entries do, so a busy teammate's log keeps up with
   * any rate of events at one round trip per insert.
   */
  async record(handle: string, threadId: string, event: OutboxEvent): Promise<number> {
    const seq = await new Promise<number>((resolve, reject) => {
      const placement = { threadId, event, resolve, reject };
      const queue = this.waiting.get(handle);
      if (queue) {
        queue.push(placement);
        return;
      }
      this.waiting.set(handle, [placement]);
      void this.placeWaiting(handle);
    });
    return this.mark(handle, event, seq);
  }

  /** Places `handle`'s waiting events, one insert at a time, until none are left. */
  private async placeWaiting(handle: string): Promise<void> {
    const queue = this.waiting.get(handle)!;
    while (queue.length > 0) await this.place(handle, queue.splice(0, PLACE_BATCH));
    this.waiting.delete(handle);
  }

  /** Inserts the entries of `batch` at the next positions of the log, in order, and settles each with its position. */
  private async place(handle: string, batch: Placement[]): Promise<void> {
    let rest = batch;
    try {
      if (!this.known.has(handle)) await this.head(handle);
      while (rest.length > 0) {
        const first = (this.known.get(handle) ?? 0) + 1;
        const { landed, failure } = await this.insertInOrder(
          rest.map((p, i) => ({ _id: eventEntryId(handle, first + i), handle, seq: first + i, thread_id: p.threadId, event: p.event, recorded_at: new Date() })),
        );
        rest.slice(0, landed).forEach((p, i) => p.resolve(first + i));
        if (landed > 0) this.remember(handle, first + landed - 1);
        rest = rest.slice(landed);
        if (failure === undefined) return;
        if (!failure.taken) throw failure.error;
        await this.head(handle);
      }
    } catch (error) {
      // The insert may or may not have landed: the next append finds out from the log itself.
      this.known.delete(handle);
      for (const p of rest) p.reject(error);
    }
  }

  /**
   * Inserts `docs` in order, stopping at the first that fails: how many landed and, if one failed, whether its
   * position was taken (a duplicate `_id`). A lone entry shares a command with other logs' entries (InsertBatcher).
   * Throws when the outcome is unknown.
   */
  private async insertInOrder(docs: EventEntryDoc[]): Promise<{ landed: number; failure?: { taken: boolean; error: unknown } }> {
    try {
      if (docs.length === 1) await this.entryInserts.insert(docs[0]!);
      else await this.entries.insertMany(docs, { ordered: true });
      return { landed: docs.length };
    } catch (error) {
      if (docs.length === 1) return { landed: 0, failure: { taken: isDuplicateKey(error), error } };
      const failed = error instanceof MongoBulkWriteError ? [error.writeErrors].flat()[0] : undefined;
      if (!failed) throw error;
      return { landed: failed.index, failure: { taken: failed.code === 11000, error } };
    }
  }

  /**
   * Inserts the mark of the entry at `seq`, no read: an event recorded a second time (a re-run job, the sweep after an
   * outage) finds its mark taken, flags the new entry a dud and answers the first position.
   */
  private async mark(handle: string, event: OutboxEvent, seq: number): Promise<number> {
    const id = markId(handle, event.id);
    try {
      await this.markInserts.insert({ _id: id, seq });
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
      const winner = await this.marks.findOne({ _id: id });
      await this.entries.updateOne({ _id: eventEntryId(handle, seq) }, { $set: { dud: true } });
      if (winner) return winner.seq;
      throw error;
    }
    if (seq % HEAD_EVERY === 0) await putById(this.heads, handle, { n: seq });
    return seq;
  }

  /** The last position of `handle`'s log (0 when empty). */
  async head(handle: string): Promise<number> {
    let head = (await this.heads.findOne({ _id: handle }))?.n ?? 0;
    for (;;) {
      const probes = Array.from({ length: HEAD_EVERY }, (_, i) => head + 1 + i);
      const present = await Promise.all(probes.map((p) => this.entries.findOne({ _id: eventEntryId(handle, p) }, { projection: { _id: 1 } })));
      const last = present.map((doc, i) => (doc ? probes[i]! : 0)).reduce((a, b) => Math.max(a, b), 0);
      if (last === 0) break;
      head = last;
    }
    this.remember(handle, head);
    return head;
  }

  /**
   * The events after position `after`, oldest first, at most `limit`, and the position to read after next time
   * (past skipped duds). Stops at the first position not written yet, or at an entry whose mark is not in yet.
   */
  async read(handle: string, after: number, limit: number): Promise<{ events: LoggedEvent[]; cursor: number }> {
    const events: LoggedEvent[] = [];
    let cursor = after;
    // The first lookup is a single one: with nothing new (the usual case for a waiting reader) that is all it costs.
    let batch = 1;
    while (events.length < limit) {
      const positions = Array.from({ length: batch }, (_, i) => cursor + 1 + i);
      const docs = await Promise.all(positions.map((p) => this.entries.findOne({ _id: eventEntryId(handle, p) })));
      let stopped = false;
      for (const doc of docs) {
        if (!doc || !(await this.deliverable(handle, doc))) {
          stopped = true;
          break;
        }
        cursor = doc.seq;
        if (!doc.dud) events.push({ seq: doc.seq, thread_id: doc.thread_id, event: doc.event });
        if (events.length >= limit) break;
      }
      if (stopped) break;
      batch = READ_BATCH;
    }
    return { events, cursor };
  }

  /**
   * The events below position `below` (from the head when null), newest first, at most `limit`, and the lowest
   * position looked at (read below it next time; at 1 the log's start was reached). Positions are looked up by
   * `_id` in batches, so a page costs the same however long the log is. Duds are skipped, and so is an entry whose
   * mark is not in yet (its event is delivered again by the outbox sweep, into a new entry above).
   */
  async readBack(handle: string, below: number | null, limit: number): Promise<{ events: Array<LoggedEvent & { recorded_at: Date }>; lowest: number }> {
    const events: Array<LoggedEvent & { recorded_at: Date }> = [];
    let next = below === null ? await this.head(handle) : below - 1;
    let lowest = next + 1;
    while (events.length < limit && next >= 1) {
      const positions = Array.from({ length: Math.min(limit - events.length + 1, next, READ_BATCH * 4) }, (_, i) => next - i);
      const ids = positions.map((p) => eventEntryId(handle, p));
      const docs = new Map((await this.entries.find({ _id: { $in: ids } }).toArray()).map((d) => [d.seq, d]));
      const live = [...docs.values()].filter((d) => !d.dud);
      const marks = new Map((await this.marks.find({ _id: { $in: live.map((d) => markId(handle, d.event.id)) } }).toArray()).map((m) => [m._id, m.seq]));
      for (const p of positions) {
        lowest = p;
        const doc = docs.get(p);
        if (doc && !doc.dud && marks.get(markId(handle, doc.event.id)) === p) {
          events.push({ seq: p, thread_id: doc.thread_id, event: doc.event, recorded_at: doc.recorded_at });
          if (events.length >= limit) break;
        }
      }
      next = lowest - 1;
    }
    return { events, lowest };
  }

  /** Whether a reader may pass `doc` (delivering it unless it is a dud); false holds the reader at it. */
  private async deliverable(handle: string, doc: EventEntryDoc): Promise<boolean> {
    if (doc.dud) return true;
    const mark = await this.marks.findOne({ _id: markId(handle, doc.event.id) });
    if (!mark) return false;
    if (mark.seq !== doc.seq) doc.dud = true;
    return true;
  }

  private remember(handle: string, position: number): void {
    if ((this.known.get(handle) ?? 0) < position) setBounded(this.known, handle, position, REMEMBERED_LOGS);
  }
}
