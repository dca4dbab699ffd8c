// A thread's messages read a block at a time where the server only serves `_id` lookups (FerretDB): what
// MongoStore.messagesOf reads there, and what a counted append adds to the thread and to `message_blocks`.
import { BSON, type Collection } from 'mongodb';
import type { MessageBlockDoc, MessageDoc, ThreadDoc } from '../domain/documents';
import { isDuplicateKey } from './thread-writes';

/**
 * Messages per block. A read of the newest N messages costs ceil(N/16)+1 block reads at most, and a block is
 * gathered once by the append that completes it from the thread's carried tail (at most 15 messages, few KB).
 */
export const BLOCK_SIZE = 16;
/** A bigger message stays out of its block (read by its own `_id`): 16 of them keep a block at 4 MB, far from BSON's 16 MB. */
const BLOCK_MESSAGE_BYTES = 256 * 1024;
/** The thread carries a message of its open block when it has at most this size, and while the tail stays within TAIL_BYTES. */
const TAIL_MESSAGE_BYTES = 4 * 1024;
/** The thread document is rewritten (twice on FerretDB: claim and cache) on every change of it: its tail stays small. */
const TAIL_BYTES = 16 * 1024;

/** Block k holds sequence numbers k*16+1 .. (k+1)*16. */
export function blockOf(sequenceNo: number): number {
  return Math.floor((sequenceNo - 1) / BLOCK_SIZE);
}

export function blockId(threadId: string, block: number): string {
  return `${threadId}:b${block}`;
}

function messageId(threadId: string, sequenceNo: number): string {
  return `${threadId}:${sequenceNo}`;
}

/**
 * The message documents (`${thread}:${n}`) stay what allocates sequence numbers and the truth; blocks and the
 * thread's tail are copies of counted messages, which never change (only an uncounted one is ever taken back).
 * So a copy, once written, is right forever; a missing one (a thread older than blocks, an append that stopped
 * before writing its block, a message too big to copy) is read message by message, and a missing block is
 * written by the reader that had to do that.
 */
export class MessageBlocks {
  constructor(
    private readonly messages: Collection<MessageDoc>,
    private readonly blocks: Collection<MessageBlockDoc>,
  ) {}

  /** The thread's `recent_messages` once `message`, its next one, is counted on it: the tail of the open block. */
  tailWith(doc: ThreadDoc, message: MessageDoc): MessageDoc[] {
    // The message completes its block: the block document holds them from now on (completeBlock).
    if (message.sequence_no % BLOCK_SIZE === 0) return [];
    const kept = (doc.recent_messages ?? []).filter((m) => blockOf(m.sequence_no) === blockOf(message.sequence_no));
    const used = kept.reduce((bytes, m) => bytes + BSON.calculateObjectSize(m), 0);
    const size = BSON.calculateObjectSize(message);
    return size <= TAIL_MESSAGE_BYTES && used + size <= TAIL_BYTES ? [...kept, message] : kept;
  }

  /** After `message` was counted on `before` (the thread it was counted on): writes the block it completes, if it does. */
  async completeBlock(before: ThreadDoc, message: MessageDoc): Promise<void> {
    if (message.sequence_no % BLOCK_SIZE !== 0) return;
    const known = new Map([...(before.recent_messages ?? []), message].map((m) => [m.sequence_no, m]));
    await this.write(before._id, blockOf(message.sequence_no), known);
  }

  /**
   * The thread's messages with these sequence numbers (ascending, all counted: at most `thread.message_seq`):
   * from its tail, then from the blocks of complete ones, then by `_id` for whatever those did not hold.
   */
  async read(thread: Pick<ThreadDoc, '_id' | 'message_seq' | 'recent_messages'>, sequenceNos: readonly number[]): Promise<MessageDoc[]> {
    const found = new Map<number, MessageDoc>((thread.recent_messages ?? []).map((m) => [m.sequence_no, m]));
    const complete = (block: number) => (block + 1) * BLOCK_SIZE <= thread.message_seq;
    const wanted = [...new Set(sequenceNos.filter((n) => !found.has(n)).map(blockOf))].filter(complete);
    const blocks = await Promise.all(wanted.map((k) => this.blocks.findOne({ _id: blockId(thread._id, k) })));
    const unwritten: number[] = [];
    blocks.forEach((block, i) => {
      if (!block) unwritten.push(wanted[i]!);
      for (const m of block?.messages ?? []) found.set(m.sequence_no, m);
    });
    // Read whole (once) and written, so the next read of the thread finds it.
    const written = await Promise.all(unwritten.map((k) => this.write(thread._id, k, found)));
    for (const m of written.flat()) found.set(m.sequence_no, m);
    const rest = sequenceNos.filter((n) => !found.has(n));
    const read = await Promise.all(rest.map((n) => this.messages.findOne({ _id: messageId(thread._id, n) })));
    for (const m of read) if (m) found.set(m.sequence_no, m);
    return sequenceNos.map((n) => found.get(n)).filter((m): m is MessageDoc => m !== undefined);
  }

  /**
   * Writes block `block` of a thread from the messages in `known` and the others read by `_id`; a second writer's
   * insert of the same block fails on its `_id` and changes nothing. The block's messages, or [] when one is missing.
   */
  private async write(threadId: string, block: number, known: ReadonlyMap<number, MessageDoc>): Promise<MessageDoc[]> {
    const numbers = Array.from({ length: BLOCK_SIZE }, (_, i) => block * BLOCK_SIZE + i + 1);
    const docs = await Promise.all(numbers.map((n) => known.get(n) ?? this.messages.findOne({ _id: messageId(threadId, n) })));
    if (docs.some((m) => m === null)) return [];
    const messages = docs as MessageDoc[];
    try {
      await this.blocks.insertOne({
        _id: blockId(threadId, block),
        thread_id: threadId,
        messages: messages.filter((m) => BSON.calculateObjectSize(m) <= BLOCK_MESSAGE_BYTES),
        at: new Date(),
      });
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
    }
    return messages;
  }
}
