// Per-mailbox logs of threads, for servers that cannot serve a filtered, sorted query without reading every
// thread: entry n of box `to:alice@acme` is `_id` `to:alice@acme#<n>`, so a page is a handful of `_id` lookups.
import type { Collection } from 'mongodb';
import type { MailboxEntryDoc, MailboxHeadDoc } from '../domain/documents';
import type { InsertBatcher } from './insert-batcher';
import { isDuplicateKey, putById } from './thread-writes';

export type Party = 'to' | 'from';

/** The head document is rewritten every HEAD_EVERY appends; a reader probes the few entries above it. */
const HEAD_EVERY = 8;
/** Boxes whose last position this process remembers, so an append usually needs no read first. */
const REMEMBERED_BOXES = 10_000;

export function boxName(party: Party, handle: string): string {
  return `${party}:${handle}`;
}

export function entryId(box: string, position: number): string {
  return `${box}#${position}`;
}

/**
 * Positions in a box are unique and nearly dense from 1. This process hands out positions of a box one after the
 * other from memory (so its own concurrent appends never collide); an append inserts its position with a unique
 * `_id` (atomic everywhere), and a duplicate means another process took it: re-read the head and take the next.
 * A position can stay empty (an insert that failed, a process that died between taking and inserting it), so the
 * head is the last present entry with no entry in the HEAD_EVERY positions above it. The head document is a hint
 * written every HEAD_EVERY appends; a reader probes upwards from it.
 */
export class MailboxLog {
  /** The last position this process handed out (or saw) per box. */
  private readonly known = new Map<string, number>();

  constructor(
    private readonly entries: Collection<MailboxEntryDoc>,
    private readonly heads: Collection<MailboxHeadDoc>,
    private readonly inserts: InsertBatcher<MailboxEntryDoc>,
  ) {}

  /** Appends `threadId` to `box` and returns its position. */
  async append(box: string, threadId: string, createdAt: Date): Promise<number> {
    if (!this.known.has(box)) await this.head(box);
    for (;;) {
      const position = (this.known.get(box) ?? 0) + 1;
      this.remember(box, position);
      try {
        await this.inserts.insert({ _id: entryId(box, position), thread_id: threadId, created_at: createdAt });
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
        await this.head(box);
        continue;
      }
      if (position % HEAD_EVERY === 0) await putById(this.heads, box, { n: position });
      return position;
    }
  }

  /** The last position of `box` (0 when empty). */
  async head(box: string): Promise<number> {
    let head = (await this.heads.findOne({ _id: box }))?.n ?? 0;
    for (;;) {
      const probes = Array.from({ length: HEAD_EVERY }, (_, i) => head + 1 + i);
      const present = await Promise.all(probes.map((p) => this.entries.findOne({ _id: entryId(box, p) }, { projection: { _id: 1 } })));
      const last = present.map((doc, i) => (doc ? probes[i]! : 0)).reduce((a, b) => Math.max(a, b), 0);
      if (last === 0) break;
      head = last;
    }
    this.remember(box, head);
    return head;
  }

  /** The entries at these positions, in the same order (null where a position holds none). */
  at(box: string, positions: readonly number[]): Promise<Array<MailboxEntryDoc | null>> {
    return Promise.all(positions.map((p) => this.entries.findOne({ _id: entryId(box, p) })));
  }

  /**
   * Bulk append for the migration: entries at consecutive positions after the box's head, returned in order. The
   * head this process last saw is trusted (one insert per box and batch); when another writer took a position
   * meanwhile, the head is read again and the batch goes above it (entries inserted before the collision stay
   * unreferenced, and lists skip them).
   */
  async appendMany(box: string, items: ReadonlyArray<{ thread_id: string; created_at: Date }>): Promise<number[]> {
    for (let attempt = 0; ; attempt += 1) {
      const first = (attempt === 0 && this.known.has(box) ? this.known.get(box)! : await this.head(box)) + 1;
      const docs = items.map((item, i) => ({ _id: entryId(box, first + i), ...item }));
      try {
        await this.entries.insertMany(docs, { ordered: true });
      } catch (error) {
        if (attempt < 3 && isDuplicateKey(error)) continue;
        throw error;
      }
      const last = first + items.length - 1;
      this.remember(box, last);
      await putById(this.heads, box, { n: last });
      return docs.map((_, i) => first + i);
    }
  }

  private remember(box: string, position: number): void {
    if ((this.known.get(box) ?? 0) >= position) return;
    if (this.known.size >= REMEMBERED_BOXES && !this.known.has(box)) this.known.delete(this.known.keys().next().value!);
    this.known.set(box, position);
  }
}
