// Per-mailbox logs of threads, for servers that cannot serve a filtered, sorted query without reading every
// thread: entry n of box `to:alice@acme` is `_id` `to:alice@acme#<n>`, so a page is a handful of `_id` lookups.
import type { Collection } from 'mongodb';
import type { MailboxBlockDoc, MailboxEntryDoc, MailboxHeadDoc } from '../domain/documents';
import { TERMINAL_STATUSES, type ThreadStatus } from '../domain/schemas';
import { setBounded } from '../ops/bounded-map';
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
/** Positions per block document (a multiple of HEAD_EVERY: the append that fills a block also writes the head). */
export const BLOCK = 16;
/** Boxes whose current block's entries this process remembers, so the append that fills a block rarely reads. */
const REMEMBERED_BLOCKS = 2_000;
/** Entries whose thread this process learned something final about (for those no block holds yet). */
const REMEMBERED_FINALS = 50_000;

type Entry = Pick<MailboxEntryDoc, 'thread_id' | 'created_at'>;
/** What is known for good about an entry's thread (MailboxBlockDoc.final). */
export type Final = MailboxBlockDoc['final'][number];

export function boxName(party: Party, handle: string): string {
  return `${party}:${handle}`;
}

export function entryId(box: string, position: number): string {
  return `${box}#${position}`;
}

/** Block k of a box holds positions k·BLOCK+1 … (k+1)·BLOCK. */
export function blockId(box: string, k: number): string {
  return `${box}@${k}`;
}

const blockOf = (position: number) => Math.floor((position - 1) / BLOCK);
const firstOf = (k: number) => k * BLOCK + 1;

/**
 * Positions in a box are unique and nearly dense from 1. This process hands out positions of a box one after the
 * other from memory (so its own concurrent appends never collide); an append inserts its position with a unique
 * `_id` (atomic everywhere), and a duplicate means another process took it: re-read the head and take the next.
 * A position can stay empty (an insert that failed, a process that died between taking and inserting it), so the
 * head is the last present entry with no entry in the HEAD_EVERY positions above it. The head document is a hint
 * written every HEAD_EVERY appends; a reader probes upwards from it.
 *
 * Blocks (when the log has a blocks collection): the entries of positions k·BLOCK+1 … (k+1)·BLOCK in one document,
 * so a reader far below the head reads one document per BLOCK positions. A block is written only once every one of
 * its positions holds an entry, and entries never change once inserted, so a block is exactly what reading its
 * positions one by one would give, at any time after. A position that stays empty (see above), or that a process
 * with a stale memory of the box fills late, only means its block is not written (or is written later): readers
 * read the positions of a missing block one by one. Who writes one: the append that fills its last position (from
 * what this process remembers of the block, else reading the rest once), the bulk append for the blocks it fills
 * whole, and a reader that had to read a whole block position by position. Writing one twice is harmless (the
 * second insert is a duplicate). A block also carries what readers learned for good about its threads (`final`).
 */
export class MailboxLog {
  /** The last position this process handed out (or saw) per box. */
  private readonly known = new Map<string, number>();
  /** Per box, the entries of its newest block that this process inserted (block number, position → entry). */
  private readonly current = new Map<string, { k: number; entries: Map<number, Entry> }>();
  /** What readers in this process learned for good about entries' threads, by entry id (true in every process). */
  private readonly finals = new Map<string, Final>();

  constructor(
    private readonly entries: Collection<MailboxEntryDoc>,
    private readonly heads: Collection<MailboxHeadDoc>,
    private readonly inserts: InsertBatcher<MailboxEntryDoc>,
    /** The block documents; null: this log keeps none (every read is by position). */
    private readonly blocks: Collection<MailboxBlockDoc> | null = null,
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
      this.noteCurrent(box, position, { thread_id: threadId, created_at: createdAt });
      await Promise.all([
        position % HEAD_EVERY === 0 ? putById(this.heads, box, { n: position }) : undefined,
        position % BLOCK === 0 ? this.sealFilled(box, blockOf(position)) : undefined,
      ]);
      return position;
    }
  }

  /** The last position of `box` (0 when empty). */
  async head(box: string): Promise<number> {
    return (await this.probeHead(box)).head;
  }

  /** The head, and the entries the probes found on the way (a reader starting there need not read them again). */
  private async probeHead(box: string): Promise<{ head: number; found: Map<number, Entry> }> {
    let head = (await this.heads.findOne({ _id: box }))?.n ?? 0;
    const found = new Map<number, Entry>();
    for (;;) {
      const probes = Array.from({ length: HEAD_EVERY }, (_, i) => head + 1 + i);
      const present = await Promise.all(probes.map((p) => this.entries.findOne({ _id: entryId(box, p) })));
      present.forEach((doc, i) => doc && found.set(probes[i]!, doc));
      const last = present.map((doc, i) => (doc ? probes[i]! : 0)).reduce((a, b) => Math.max(a, b), 0);
      if (last === 0) break;
      head = last;
    }
    this.remember(box, head);
    return { head, found };
  }

  /** A reader of `box` from its head down (the head is found first). */
  async fromHead(box: string): Promise<BoxReader> {
    const { head, found } = await this.probeHead(box);
    return new BoxReader(this, box, head, false, found);
  }

  /** A reader of `box` from `top` down, `top` being below the head (a cursor's position). */
  fromPosition(box: string, top: number): BoxReader {
    return new BoxReader(this, box, top, true, new Map());
  }

  /** Block k of `box` (null when not written, or when this log keeps no blocks). */
  async block(box: string, k: number): Promise<MailboxBlockDoc | null> {
    return this.blocks ? this.blocks.findOne({ _id: blockId(box, k) }) : null;
  }

  /** What this process learned for good about the thread of the entry at `position` (null: nothing). */
  finalAt(box: string, position: number): Final {
    return this.finals.get(entryId(box, position)) ?? null;
  }

  noteFinal(box: string, position: number, final: Final): void {
    if (final !== null) setBounded(this.finals, entryId(box, position), final, REMEMBERED_FINALS);
  }

  /** Whether this log keeps blocks. */
  get keepsBlocks(): boolean {
    return this.blocks !== null;
  }

  /**
   * Writes block k of `box` from its entries (every position present, in order). A failure is not the caller's:
   * the block is a shortcut, and readers read its positions when it is missing.
   */
  async writeBlock(box: string, k: number, entries: Entry[], final: Final[]): Promise<void> {
    if (!this.blocks || entries.length !== BLOCK) return;
    await this.blocks
      .insertOne({ _id: blockId(box, k), entries: entries.map(({ thread_id, created_at }) => ({ thread_id, created_at })), final })
      .catch(() => undefined);
  }

  /** Block k again with more of `final` known: its entries are unchanged, and every `final` written holds for good. */
  async rewriteBlock(doc: MailboxBlockDoc): Promise<void> {
    await this.blocks?.replaceOne({ _id: doc._id }, { entries: doc.entries, final: doc.final }).catch(() => undefined);
  }

  /** The entries at these positions, in the same order (null where a position holds none). */
  at(box: string, positions: readonly number[]): Promise<Array<MailboxEntryDoc | null>> {
    return Promise.all(positions.map((p) => this.entries.findOne({ _id: entryId(box, p) })));
  }

  /** The append that filled block k's last position writes the block: from memory, reading what this process did not insert. */
  private async sealFilled(box: string, k: number): Promise<void> {
    if (!this.blocks) return;
    const remembered = this.current.get(box);
    const mine = remembered?.k === k ? remembered.entries : new Map<number, Entry>();
    const positions = Array.from({ length: BLOCK }, (_, i) => firstOf(k) + i);
    const read = await Promise.all(positions.map((p) => mine.get(p) ?? this.entries.findOne({ _id: entryId(box, p) }).catch(() => null)));
    // A position still empty (a writer that died, or one slower than this append): no block, readers go by position.
    if (read.some((entry) => !entry)) return;
    await this.writeBlock(box, k, read as Entry[], read.map(() => null));
  }

  private noteCurrent(box: string, position: number, entry: Entry): void {
    if (!this.blocks) return;
    const k = blockOf(position);
    const remembered = this.current.get(box);
    if (remembered && remembered.k > k) return;
    if (remembered && remembered.k === k) {
      remembered.entries.set(position, entry);
      return;
    }
    this.current.delete(box);
    setBounded(this.current, box, { k, entries: new Map([[position, entry]]) }, REMEMBERED_BLOCKS);
  }

  /**
   * Bulk append for the migration: entries after the box's head, returned in order, CHUNK at a time. The head this
   * process last saw is trusted; when another writer took a position meanwhile, the head is read again and the chunk
   * goes above it. A chunk is at most one FerretDB insert batch: FerretDB 1.24 goes on with an ordered insert's later
   * batches after a duplicate, which would leave a run of empty positions that the head's probes stop at. Within a
   * chunk, what landed before the duplicate is contiguous; it stays unreferenced, and lists skip it.
   *
   * The blocks whose every position this call inserted are written as well; an item's `status`, when terminal, is
   * recorded in its block (the caller vouches that the thread is in that status: a terminal one never leaves it).
   */
  async appendMany(box: string, items: ReadonlyArray<{ thread_id: string; created_at: Date; status?: ThreadStatus }>): Promise<number[]> {
    const positions: number[] = [];
    const placed = new Map<number, (typeof items)[number]>();
    for (let start = 0; start < items.length; start += CHUNK) {
      const chunk = items.slice(start, start + CHUNK);
      for (let attempt = 0; ; attempt += 1) {
        const first = (attempt === 0 && this.known.has(box) ? this.known.get(box)! : await this.head(box)) + 1;
        try {
          await this.entries.insertMany(
            chunk.map((item, i) => ({ _id: entryId(box, first + i), thread_id: item.thread_id, created_at: item.created_at })),
            { ordered: true },
          );
        } catch (error) {
          if (attempt < CHUNK_ATTEMPTS && isDuplicateKey(error)) continue;
          throw error;
        }
        this.remember(box, first + chunk.length - 1);
        positions.push(...chunk.map((_, i) => first + i));
        chunk.forEach((item, i) => placed.set(first + i, item));
        await this.sealPlaced(box, placed, first, first + chunk.length - 1);
        break;
      }
    }
    if (positions.length > 0) await putById(this.heads, box, { n: positions[positions.length - 1]! });
    return positions;
  }

  /** Writes the blocks touching positions from..to whose every position is in `placed` (one insert). */
  private async sealPlaced(box: string, placed: ReadonlyMap<number, { thread_id: string; created_at: Date; status?: ThreadStatus }>, from: number, to: number): Promise<void> {
    if (!this.blocks) return;
    const docs: MailboxBlockDoc[] = [];
    for (let k = blockOf(from); k <= blockOf(to); k += 1) {
      const members = Array.from({ length: BLOCK }, (_, i) => placed.get(firstOf(k) + i));
      if (members.some((m) => !m)) continue;
      docs.push({
        _id: blockId(box, k),
        entries: members.map((m) => ({ thread_id: m!.thread_id, created_at: m!.created_at })),
        final: members.map((m) => (m!.status && TERMINAL_STATUSES.includes(m!.status) ? m!.status : null)),
      });
    }
    // Unordered: a block already written (a duplicate) does not keep the others out. A failure only costs reads.
    if (docs.length > 0) await this.blocks.insertMany(docs, { ordered: false }).catch(() => undefined);
  }

  /** The caller created `box` just now and nothing can be in it yet: its first append reads no head (a collision still would). */
  startsEmpty(box: string): void {
    if (!this.known.has(box)) setBounded(this.known, box, 0, REMEMBERED_BOXES);
  }

  private remember(box: string, position: number): void {
    if ((this.known.get(box) ?? 0) < position) setBounded(this.known, box, position, REMEMBERED_BOXES);
  }
}

/** One position of a box as a reader has it: its entry (null: the position holds none) and what is known of its thread. */
export interface Slot {
  entry: Entry | null;
  final: Final;
}

/** True when `next` says more than `known` (`elsewhere` says the most: the thread is terminal and not at this position). */
function adds(next: Final, known: Final): boolean {
  return next !== null && known !== 'elsewhere' && next !== known;
}

/**
 * What one page has read of a box, from `top` down. Full blocks below the top come from their block documents; a
 * missing one is read position by position (all of it, so that it can be written once the page is done), and so are
 * the positions above the last full block. What the page learns of threads for good (`learn`) goes into the blocks
 * it read or wrote (`flush`), and into this process's memory for the newest positions, which no block holds yet.
 */
export class BoxReader {
  private readonly slots = new Map<number, Slot>();
  /** The blocks read (or to write), by number, and whether this reader has anything to write of them. */
  private readonly held = new Map<number, { doc: MailboxBlockDoc; state: 'read' | 'changed' | 'new' }>();
  private readonly tried = new Set<number>();

  constructor(
    private readonly log: MailboxLog,
    private readonly box: string,
    /** The highest position this reader reads: the head, or the position below a cursor. */
    readonly top: number,
    /** Whether `top` is below the head (a cursor's), so that the block holding it may well be full. */
    private readonly belowHead: boolean,
    found: ReadonlyMap<number, Entry>,
  ) {
    for (const [position, entry] of found) if (position <= top) this.put(position, entry, null);
  }

  /** Sets a slot, keeping what was learned of its thread before (added to its block's, when it has one). */
  private put(position: number, entry: Entry | null, final: Final): void {
    const before = this.slots.get(position)?.final ?? null;
    this.slots.set(position, { entry, final });
    if (!entry) return;
    this.learn(position, before);
    this.learn(position, this.log.finalAt(this.box, position));
  }

  /** The slot of `position`, once loaded. */
  slot(position: number): Slot | undefined {
    return this.slots.get(position);
  }

  /** Loads every position from `lo` to `hi` (1 ≤ lo ≤ hi ≤ top) that is not loaded yet. */
  async load(lo: number, hi: number): Promise<void> {
    const byBlock = new Map<number, number[]>();
    for (let p = hi; p >= Math.max(lo, 1); p -= 1) {
      if (this.slots.has(p)) continue;
      const k = blockOf(p);
      byBlock.set(k, [...(byBlock.get(k) ?? []), p]);
    }
    if (byBlock.size === 0) return;
    const tryBlocks: number[] = [];
    const single: number[] = [];
    for (const [k, positions] of byBlock) {
      if (this.log.keepsBlocks && !this.tried.has(k) && ((k + 1) * BLOCK <= this.top || this.belowHead)) tryBlocks.push(k);
      else single.push(...positions);
    }
    const [docs, entries] = await Promise.all([Promise.all(tryBlocks.map((k) => this.log.block(this.box, k))), this.log.at(this.box, single)]);
    single.forEach((p, i) => this.put(p, entries[i] ?? null, null));
    const fallback: number[] = [];
    const sealable: number[] = [];
    tryBlocks.forEach((k, i) => {
      this.tried.add(k);
      const doc = docs[i];
      if (doc) {
        this.held.set(k, { doc, state: 'read' });
        doc.entries.forEach((entry, j) => {
          if (firstOf(k) + j <= this.top) this.put(firstOf(k) + j, entry, doc.final[j] ?? null);
        });
        return;
      }
      // Not written (yet): its positions one by one, all of them when it lies below the top, so that it can be.
      if ((k + 1) * BLOCK > this.top) {
        fallback.push(...byBlock.get(k)!);
        return;
      }
      sealable.push(k);
      for (let p = firstOf(k); p < firstOf(k + 1); p += 1) if (!this.slots.has(p)) fallback.push(p);
    });
    if (fallback.length === 0) return;
    const read = await this.log.at(this.box, fallback);
    fallback.forEach((p, i) => this.put(p, read[i] ?? null, null));
    for (const k of sealable) {
      const members = Array.from({ length: BLOCK }, (_, j) => this.slots.get(firstOf(k) + j));
      // A position with no entry: no block over it (it may stay empty for good, or be filled late).
      if (members.some((slot) => !slot?.entry)) continue;
      const doc: MailboxBlockDoc = { _id: blockId(this.box, k), entries: members.map((slot) => slot!.entry!), final: members.map((slot) => slot!.final) };
      this.held.set(k, { doc, state: 'new' });
    }
  }

  /** Records what the page learned for good about the thread of the entry at `position` (see MailboxBlockDoc.final). */
  learn(position: number, final: Final): void {
    const slot = this.slots.get(position);
    if (slot && adds(final, slot.final)) slot.final = final;
    const k = blockOf(position);
    const held = this.held.get(k);
    const j = position - firstOf(k);
    // No block holds this position (yet): this process remembers it instead.
    if (!held) this.log.noteFinal(this.box, position, final);
    if (!held || !adds(final, held.doc.final[j] ?? null)) return;
    held.doc.final[j] = final;
    if (held.state === 'read') held.state = 'changed';
  }

  /** Writes the blocks this page read whole by position, and what it learned into the blocks it read. */
  async flush(): Promise<void> {
    const writes: Array<Promise<void>> = [];
    for (const [k, held] of this.held) {
      if (held.state === 'new') writes.push(this.log.writeBlock(this.box, k, held.doc.entries, held.doc.final));
      if (held.state === 'changed') writes.push(this.log.rewriteBlock(held.doc));
      held.state = 'read';
    }
    await Promise.all(writes);
  }
}

/** What a thread read at `position` of its party's box tells for good: its terminal status, or that it is terminal and placed elsewhere. */
export function finalOf(status: ThreadStatus, sits: boolean, placed: boolean): Final {
  if (!TERMINAL_STATUSES.includes(status)) return null;
  // A thread not placed yet (the migration writes its places after their entries) may still come to sit here.
  if (!sits && placed) return 'elsewhere';
  return status;
}
