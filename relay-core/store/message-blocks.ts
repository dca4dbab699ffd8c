// A thread's messages read a block at a time where the server only serves `_id` lookups (FerretDB): what
// MongoStore.messagesOf reads there, and what a counted append adds to the thread and to `message_blocks`.
import { BSON, type Collection } from 'mongodb';
import type { MessageBlockDoc, MessageDoc, ThreadDoc } from '../domain/documents';
import { isDuplicateKey } from './thread-writes';

/**
 * Messages per block of level 0. The append that completes one gathers it from the thread's tail (at most 15
 * small messages, so thread documents stay small) with one insert; tasks/get of 20 messages reads 1 or 2.
 */
export const BLOCK_SIZE = 16;
/** Each level's block holds 4 of the level below: 16, 64 and 256 messages. */
const FANOUT = 4;
/** 256 messages: a read of the relay's 500 newest takes at most 2 of them, 3 of 64 and 3 of 16 (and the tail). */
const TOP_LEVEL = 2;
/** A bigger message stays out of blocks (read by its own `_id`): 16 of them keep a block at 4 MB, far from BSON's 16 MB. */
const BLOCK_MESSAGE_BYTES = 256 * 1024;
/** A block of level 1 or 2 whose messages weigh more is not written: readers take its 4 parts instead. */
const UPPER_BLOCK_BYTES = 4 * 1024 * 1024;
/** The thread carries a message of its open block when it has at most this size, and while the tail stays within TAIL_BYTES. */
const TAIL_MESSAGE_BYTES = 4 * 1024;
/** The thread document is rewritten (twice on FerretDB: claim and cache) on every change of it: its tail stays small. */
const TAIL_BYTES = 16 * 1024;

/** How many messages a block of `level` holds. */
function span(level: number): number {
  return BLOCK_SIZE * FANOUT ** level;
}

/** Block `index` of `level` holds sequence numbers index*span+1 .. (index+1)*span. */
export function blockId(threadId: string, level: number, index: number): string {
  return `${threadId}:b${level}.${index}`;
}

function messageId(threadId: string, sequenceNo: number): string {
  return `${threadId}:${sequenceNo}`;
}

/** A block's messages as read or gathered; `whole` when none was missing (one too big to copy does not count). */
interface Gathered {
  messages: MessageDoc[];
  whole: boolean;
}

/**
 * The message documents (`${thread}:${n}`) stay what allocates sequence numbers and the truth; blocks and the
 * thread's tail are copies of counted messages, which never change (only an uncounted one is ever taken back).
 * So a copy, once written, is right forever, and writing it twice changes nothing (the second insert fails on its
 * `_id`). A missing one (a thread older than blocks, an append that stopped before writing its block, a message
 * too big to copy) is read from its parts, down to messages by `_id`, and written by the reader that had to.
 */
export class MessageBlocks {
  constructor(
    private readonly messages: Collection<MessageDoc>,
    private readonly blocks: Collection<MessageBlockDoc>,
  ) {}

  /** The thread's `recent_messages` once `message`, its next one, is counted on it: the tail of the open block. */
  tailWith(doc: ThreadDoc, message: MessageDoc): MessageDoc[] {
    // The message completes its block: the block documents hold them from now on (completeBlocks).
    if (message.sequence_no % BLOCK_SIZE === 0) return [];
    const open = Math.floor((message.sequence_no - 1) / BLOCK_SIZE);
    const kept = (doc.recent_messages ?? []).filter((m) => Math.floor((m.sequence_no - 1) / BLOCK_SIZE) === open);
    const used = kept.reduce((bytes, m) => bytes + BSON.calculateObjectSize(m), 0);
    const size = BSON.calculateObjectSize(message);
    return size <= TAIL_MESSAGE_BYTES && used + size <= TAIL_BYTES ? [...kept, message] : kept;
  }

  /**
   * After `message` was counted on `before` (the thread as it was): writes the block of 16 it completes, if it
   * does, and each bigger block that one completes (reading the other 3 parts of each).
   */
  async completeBlocks(before: ThreadDoc, message: MessageDoc): Promise<void> {
    if (message.sequence_no % BLOCK_SIZE !== 0) return;
    const known = new Map([...(before.recent_messages ?? []), message].map((m) => [m.sequence_no, m]));
    let index = message.sequence_no / BLOCK_SIZE - 1;
    let block = await this.gather(before._id, 0, index, known);
    for (let level = 1; level <= TOP_LEVEL && block.whole && (index + 1) % FANOUT === 0; level += 1) {
      index = (index + 1) / FANOUT - 1;
      const others = await Promise.all(Array.from({ length: FANOUT - 1 }, (_, i) => this.block(before._id, level - 1, index * FANOUT + i, known)));
      block = await this.written(before._id, level, index, [...others, block]);
    }
  }

  /**
   * The thread's messages with these sequence numbers (ascending, all counted: at most `thread.message_seq`):
   * from its tail, then from the fewest complete blocks that cover the rest, then by `_id` for whatever those did
   * not hold.
   */
  async read(thread: Pick<ThreadDoc, '_id' | 'message_seq' | 'recent_messages'>, sequenceNos: readonly number[]): Promise<MessageDoc[]> {
    const found = new Map<number, MessageDoc>((thread.recent_messages ?? []).map((m) => [m.sequence_no, m]));
    const inBlocks = sequenceNos.filter((n) => !found.has(n) && n <= thread.message_seq - (thread.message_seq % BLOCK_SIZE));
    if (inBlocks.length > 0) {
      const cover = coverOf(inBlocks[0]!, inBlocks[inBlocks.length - 1]!);
      const blocks = await Promise.all(cover.map(({ level, index }) => this.block(thread._id, level, index, found)));
      for (const m of blocks.flatMap((b) => b.messages)) found.set(m.sequence_no, m);
    }
    const rest = sequenceNos.filter((n) => !found.has(n));
    const read = await Promise.all(rest.map((n) => this.messages.findOne({ _id: messageId(thread._id, n) })));
    for (const m of read) if (m) found.set(m.sequence_no, m);
    return sequenceNos.map((n) => found.get(n)).filter((m): m is MessageDoc => m !== undefined);
  }

  /** A complete block: its document, or else its parts (down to messages by `_id`), then written for the next reader. */
  private async block(threadId: string, level: number, index: number, known: ReadonlyMap<number, MessageDoc>): Promise<Gathered> {
    const doc = await this.blocks.findOne({ _id: blockId(threadId, level, index) });
    if (doc) return { messages: doc.messages, whole: true };
    if (level === 0) return this.gather(threadId, 0, index, known);
    const parts = await Promise.all(Array.from({ length: FANOUT }, (_, i) => this.block(threadId, level - 1, index * FANOUT + i, known)));
    return this.written(threadId, level, index, parts);
  }

  /** Block `index` of level 0 from the messages in `known` and the others read by `_id`, written when none is missing. */
  private async gather(threadId: string, level: 0, index: number, known: ReadonlyMap<number, MessageDoc>): Promise<Gathered> {
    const numbers = Array.from({ length: BLOCK_SIZE }, (_, i) => index * BLOCK_SIZE + i + 1);
    const docs = await Promise.all(numbers.map((n) => known.get(n) ?? this.messages.findOne({ _id: messageId(threadId, n) })));
    const messages = docs.filter((m): m is MessageDoc => m !== null);
    if (messages.length < BLOCK_SIZE) return { messages, whole: false };
    await this.insert(threadId, level, index, messages.filter((m) => BSON.calculateObjectSize(m) <= BLOCK_MESSAGE_BYTES));
    return { messages, whole: true };
  }

  /** A bigger block made of its parts, in order; written when all were whole and it is not too big. */
  private async written(threadId: string, level: number, index: number, parts: Gathered[]): Promise<Gathered> {
    const block = { messages: parts.flatMap((p) => p.messages), whole: parts.every((p) => p.whole) };
    const copied = block.messages.filter((m) => BSON.calculateObjectSize(m) <= BLOCK_MESSAGE_BYTES);
    if (block.whole && BSON.calculateObjectSize({ copied }) <= UPPER_BLOCK_BYTES) await this.insert(threadId, level, index, copied);
    return block;
  }

  private async insert(threadId: string, level: number, index: number, messages: MessageDoc[]): Promise<void> {
    try {
      await this.blocks.insertOne({ _id: blockId(threadId, level, index), thread_id: threadId, level, first: index * span(level) + 1, messages, at: new Date() });
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
    }
  }
}

/**
 * The blocks that cover sequence numbers lo..hi (all in complete blocks), newest first: from the block of 16 that
 * holds `hi` down, each the biggest one that ends there (aligned) and is at most twice what is left to cover, so a
 * block may reach below `lo` but never reads more than twice what is needed.
 */
export function coverOf(lo: number, hi: number): Array<{ level: number; index: number }> {
  const cover: Array<{ level: number; index: number }> = [];
  let end = Math.ceil(hi / BLOCK_SIZE) * BLOCK_SIZE;
  while (end >= lo) {
    let level = 0;
    while (level < TOP_LEVEL && end % span(level + 1) === 0 && span(level + 1) <= 2 * (end - lo + 1)) level += 1;
    cover.push({ level, index: end / span(level) - 1 });
    end -= span(level);
  }
  return cover;
}
