// The thread-write port a surface's own protocol uses (the Slack post ledger in bot/delivery/).
import type { MessageDoc, ThreadDoc } from './documents';

export interface ThreadWriter {
  /**
   * Applies `change` to the current version as one versioned write; `after` is null when it returned undefined.
   * `from`: the thread as this port returned it moments ago (a read, or a write's `after`), to start from instead
   * of reading it again (a newer version costs a retry, never a lost write). `applyWithNextWrite`: resolve once the
   * write cannot be undone and leave the stored document to the write that follows (store/thread-writes.ts
   * WriteOptions): only for fields no list reads, as every read by id sees the write at once.
   */
  writeThread(
    id: string,
    change: (current: ThreadDoc) => ThreadDoc | undefined,
    from?: ThreadDoc,
    options?: { applyWithNextWrite?: boolean },
  ): Promise<{ before: ThreadDoc | null; after: ThreadDoc | null }>;
  readThread(id: string): Promise<ThreadDoc | null>;
  /** The thread's messages with these sequence numbers (at most its `message_seq`), in order (no participant check). */
  messagesBySequence(thread: ThreadDoc, sequenceNos: number[]): Promise<MessageDoc[]>;
}
