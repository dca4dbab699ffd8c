// The thread-write port a surface's own protocol uses (the Slack post ledger in bot/delivery/).
import type { MessageDoc, ThreadDoc } from './documents';

/**
 * `applyWithNextWrite`: the write is done once it cannot be undone; on FerretDB its claim is not applied to the cached
 * document at all, which the next write of the document does on its way (or a read, once the claim is
 * OWNER_APPLIES_MS old: store/thread-writes.ts). For a write that another follows at once and whose fields no list
 * reads (a Slack post's claim, then its record): every read and write walks claims past the cache meanwhile, as after
 * a writer that died between claim and apply. A list page reads the cache, so a write it must show at once keeps the
 * default.
 */
export interface WriteOptions {
  applyWithNextWrite?: boolean;
}

export interface ThreadWriter {
  /**
   * Applies `change` to the current version as one versioned write; `after` is null when it returned undefined.
   * `from`: the thread as this port returned it moments ago (a read, or a write's `after`), to start from instead
   * of reading it again (a newer version costs a retry, never a lost write). `options`: WriteOptions.
   */
  writeThread(
    id: string,
    change: (current: ThreadDoc) => ThreadDoc | undefined,
    from?: ThreadDoc,
    options?: WriteOptions,
  ): Promise<{ before: ThreadDoc | null; after: ThreadDoc | null }>;
  readThread(id: string): Promise<ThreadDoc | null>;
  /**
   * The thread at `version` or later, for a job of the event that wrote that version: what this process wrote
   * moments ago reads nothing, and a later version is the later job's (see MongoStore.readThreadFrom).
   */
  readThreadFrom(id: string, version: number | undefined): Promise<ThreadDoc | null>;
  /** The thread's messages with these sequence numbers (at most its `message_seq`), in order (no participant check). */
  messagesBySequence(thread: ThreadDoc, sequenceNos: number[]): Promise<MessageDoc[]>;
}
