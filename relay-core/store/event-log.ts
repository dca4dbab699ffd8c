// Per-teammate event logs: every outbox event of a thread, recorded once into each participant's log in order. Entry
// n of `alice@acme`'s log is `_id` `alice@acme:<n>`, so reading after a cursor is `_id` lookups on every server.
import type { Collection, Db } from 'mongodb';
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

/** An entry as a reader gets it. */
export interface LoggedEvent {
  seq: number;
  thread_id: string;
  event: OutboxEvent;
}

const HEAD_EVERY = 8;
const REMEMBERED_LOGS = 10_000;
/** Positions a read looks at in one round of lookups. */
const READ_BATCH = 16;

export function eventEntryId(handle: string, seq: number): string {
  return `${handle}:${seq}`;
}

function markId(handle: string, eventId: string): string {
  return `${handle}|${eventId}`;
}

/**
 * Positions are dense from 1: this process places one entry in a log at a time (a chain per handle), takes the position
 * after the last one it knows, and inserts it under its unique `_id`; a duplicate means another process took it,
 * so it re-reads the head and takes the next. A failed insert forgets the position, so no hole is left behind.
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
  private readonly chains = new Map<string, Promise<unknown>>();
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
   * the entry's insert waits for the handle's previous one (positions go in order); its mark goes while the next
   * event's entry does, so a busy teammate's log takes one round trip an event instead of two.
   */
  async record(handle: string, threadId: string, event: OutboxEvent): Promise<number> {
    const previous = this.chains.get(handle) ?? Promise.resolve();
    const placed = previous.catch(() => {}).then(() => this.place(handle, threadId, event));
    this.chains.set(handle, placed);
    void placed.finally(() => {
      if (this.chains.get(handle) === placed) this.chains.delete(handle);
    }).catch(() => {});
    return this.mark(handle, event, await placed);
  }

  /** Inserts the event's entry at the next position of the log, and answers that position. */
  private async place(handle: string, threadId: string, event: OutboxEvent): Promise<number> {
    if (!this.known.has(handle)) await this.head(handle);
    let seq: number;
    for (;;) {
      seq = (this.known.get(handle) ?? 0) + 1;
      try {
        await this.entryInserts.insert({ _id: eventEntryId(handle, seq), handle, seq, thread_id: threadId, event, recorded_at: new Date() });
      } catch (error) {
        if (isDuplicateKey(error)) {
          await this.head(handle);
          continue;
        }
        // The insert may or may not have landed: the next append finds out from the log itself.
        this.known.delete(handle);
        throw error;
      }
      this.remember(handle, seq);
      return seq;
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
