// Per-mailbox logs of threads, for servers that cannot serve a filtered, sorted query without reading every
// thread: entry n of box `to:alice@acme` is `_id` `to:alice@acme#<n>`, so a page is a handful of `_id` lookups.
import type { Collection } from 'mongodb';
import type { MailboxEntryDoc, MailboxHeadDoc } from '../domain/documents';
import type { InsertBatcher } from './insert-batcher';
import { isDuplicateKey, putById } from './thread-writes';

export type Party = 'to' | 'from';

/** The head document is rewritten every HEAD_EVERY appends; a reader probes the few entries above it. */
const HEAD_EVERY = 8;
/** Entries per bulk insert: FerretDB's default insert batch (its `--test-batch-size`, 100). */
const CHUNK = 100;
/** Tries of one chunk against writers that keep taking the positions above the head. */
const CHUNK_ATTEMPTS = 10;
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
   * Bulk append for the migration: entries after the box's head, returned in order, CHUNK at a time. The head this
   * process last saw is trusted; when another writer took a position meanwhile, the head is read again and the chunk
   * goes above it. A chunk is at most one FerretDB insert batch: FerretDB 1.24 goes on with an ordered insert's later
   * batches after a duplicate, which would leave a run of empty positions that the head's probes stop at. Within a
   * chunk, what landed before the duplicate is contiguous; it stays unreferenced, and lists skip it.
   */
  async appendMany(box: string, items: ReadonlyArray<{ thread_id: string; created_at: Date }>): Promise<number[]> {
    const positions: number[] = [];
    for (let start = 0; start < items.length; start += CHUNK) {
      const chunk = items.slice(start, start + CHUNK);
      for (let attempt = 0; ; attempt += 1) {
        const first = (attempt === 0 && this.known.has(box) ? this.known.get(box)! : await this.head(box)) + 1;
        try {
          await this.entries.insertMany(
            chunk.map((item, i) => ({ _id: entryId(box, first + i), ...item })),
            { ordered: true },
          );
        } catch (error) {
          if (attempt < CHUNK_ATTEMPTS && isDuplicateKey(error)) continue;
          throw error;
        }
        this.remember(box, first + chunk.length - 1);
        positions.push(...chunk.map((_, i) => first + i));
        break;
      }
    }
    if (positions.length > 0) await putById(this.heads, box, { n: positions[positions.length - 1]! });
    return positions;
  }

  /** The caller created `box` just now and nothing can be in it yet: its first append reads no head (a collision still would). */
  startsEmpty(box: string): void {
    if (this.known.has(box)) return;
    if (this.known.size >= REMEMBERED_BOXES) this.known.delete(this.known.keys().next().value!);
    this.known.set(box, 0);
  }

  private remember(box: string, position: number): void {
    if ((this.known.get(box) ?? 0) >= position) return;
    if (this.known.size >= REMEMBERED_BOXES && !this.known.has(box)) this.known.delete(this.known.keys().next().value!);
    this.known.set(box, position);
  }
}
