// The thread-write port: a surface's own protocol uses it (the Slack post ledger in bot/delivery/), and the use cases
// that only read and write threads take its readThread and writeThread (transitions.ts, claims.ts).
import type { MessageDoc, ThreadDoc } from './documents';

export interface ThreadWriter {
  /**
   * Applies `change` to the current version as one versioned write; `after` is null when it returned undefined.
   * `from`: the thread as this port returned it moments ago (a read, or a write's `after`), to start from instead
   * of reading it again (a newer version costs a retry, never a lost write).
   */
  writeThread(
    id: string,
    change: (current: ThreadDoc) => ThreadDoc | undefined,
    from?: ThreadDoc,
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
