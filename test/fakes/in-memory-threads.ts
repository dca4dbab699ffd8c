// The thread-write port (relay-core/domain/thread-writer.ts) in memory, for fast use-case tests: one write at a time
// (nothing awaits between its read and its store), each bumping the version, as the contract suite asks
// (test/contracts/thread-writer-contract.ts, run against this and against MongoStore). Like MongoStore, a write ends
// with what settleThreadsWith set (the timers' settle), and writeThreadTimer keeps the version. A create's insert of a
// taken id is a duplicate key, as the server answers it, and a thread's messages read back in order
// (test/contracts/thread-insert-contract.ts).
import type { MessageDoc, ThreadDoc } from '../../relay-core/domain/documents';
import type { ThreadWriter } from '../../relay-core/domain/thread-writer';
import type { MongoStore } from '../../relay-core/store/mongo-store';

export class InMemoryThreads
  implements
    Pick<ThreadWriter, 'readThread' | 'readThreadFrom' | 'writeThread'>,
    Pick<MongoStore, 'insertThread' | 'messagesOf'>
{
  private readonly docs = new Map<string, ThreadDoc>();
  private readonly messages = new Map<string, MessageDoc>();
  private settle: (before: ThreadDoc, next: ThreadDoc) => ThreadDoc = (_before, next) => next;
  /** How many writes stored a new version. */
  writes = 0;

  /** What every writeThread does last to the document it stores (MongoStore.settleThreadsWith). */
  settleThreadsWith(settle: (before: ThreadDoc, next: ThreadDoc) => ThreadDoc): void {
    this.settle = settle;
  }

  /** Every stored thread (the in-memory due steps read them). */
  all(): ThreadDoc[] {
    return [...this.docs.values()].map((doc) => structuredClone(doc));
  }

  async insert(doc: ThreadDoc): Promise<void> {
    this.docs.set(doc._id, structuredClone(doc));
  }

  /** A create's insert (MongoStore.insertThread). */
  async insertThread(doc: ThreadDoc): Promise<ThreadDoc> {
    if (this.docs.has(doc._id)) {
      // The driver is loaded only here: the fast tests that never insert a taken id do not pay for it.
      const { MongoServerError } = await import('mongodb');
      throw new MongoServerError({ message: `E11000 duplicate key error: threads _id ${doc._id}`, code: 11000 });
    }
    this.docs.set(doc._id, structuredClone(doc));
    return structuredClone(doc);
  }

  /** Stores a thread's message as the append does (`_id` is `${thread_id}:${sequence_no}`). */
  async insertMessage(message: MessageDoc): Promise<void> {
    this.messages.set(message._id, structuredClone(message));
  }

  /** A message's body by its id (MongoStore.messageBody). */
  async messageBody(threadId: string, messageId: string): Promise<string | null> {
    return [...this.messages.values()].find((m) => m.thread_id === threadId && m.id === messageId)?.body ?? null;
  }

  /** The bodies of the threads' messages, each thread's in order (MongoStore.messageBodies). */
  async messageBodies(threadIds: readonly string[]): Promise<Map<string, string[]>> {
    const bodies = new Map<string, string[]>();
    const messages = [...this.messages.values()].sort((a, b) => a.sequence_no - b.sequence_no);
    for (const id of threadIds)
      for (const m of messages) if (m.thread_id === id) bodies.set(id, [...(bodies.get(id) ?? []), m.body]);
    return bodies;
  }

  /** The thread's messages with these sequence numbers, in order (MongoStore.messagesOf). */
  async messagesOf(thread: ThreadDoc, sequenceNos: readonly number[]): Promise<MessageDoc[]> {
    return [...new Set(sequenceNos)]
      .sort((a, b) => a - b)
      .flatMap((n) => {
        const message = this.messages.get(`${thread._id}:${n}`);
        return message ? [structuredClone(message)] : [];
      });
  }

  async readThread(id: string): Promise<ThreadDoc | null> {
    const doc = this.docs.get(id);
    return doc ? structuredClone(doc) : null;
  }

  async readThreadFrom(id: string): Promise<ThreadDoc | null> {
    return this.readThread(id);
  }

  async writeThread(
    id: string,
    change: (current: ThreadDoc) => ThreadDoc | undefined,
  ): Promise<{ before: ThreadDoc | null; after: ThreadDoc | null }> {
    // Settled against the very document the change was given, as MongoStore does (the timers compare by reference).
    return this.write(id, (current) => {
      const next = change(current);
      return next && this.settle(current, next);
    });
  }

  /** The armed step's own write: not settled, and the version stays (MongoStore.writeThreadTimer). */
  async writeThreadTimer(
    id: string,
    change: (current: ThreadDoc) => ThreadDoc | undefined,
  ): Promise<{ before: ThreadDoc | null; after: ThreadDoc | null }> {
    return this.write(id, change, true);
  }

  /** A field's own atomic update beside the versioned writes (a read mark's `$max`): the version stays. */
  patch(id: string, change: (current: ThreadDoc) => ThreadDoc): void {
    const current = this.docs.get(id);
    if (current) this.docs.set(id, structuredClone(change(structuredClone(current))));
  }

  private write(
    id: string,
    change: (current: ThreadDoc) => ThreadDoc | undefined,
    keepVersion = false,
  ): { before: ThreadDoc | null; after: ThreadDoc | null } {
    const current = this.docs.get(id);
    if (!current) return { before: null, after: null };
    const next = change(structuredClone(current));
    if (!next) return { before: structuredClone(current), after: null };
    const after = { ...next, _id: id, version: keepVersion ? current.version : (current.version ?? 0) + 1 };
    this.docs.set(id, structuredClone(after));
    this.writes += 1;
    return { before: structuredClone(current), after: structuredClone(after) };
  }
}
