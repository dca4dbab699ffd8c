// The thread-write port (relay-core/domain/thread-writer.ts) in memory, for fast use-case tests: one write at a time
// (nothing awaits between its read and its store), each bumping the version, as the contract suite asks
// (test/contracts/thread-writer-contract.ts, run against this and against MongoStore).
import type { ThreadDoc } from '../../relay-core/domain/documents';
import type { ThreadWriter } from '../../relay-core/domain/thread-writer';

export class InMemoryThreads implements Pick<ThreadWriter, 'readThread' | 'writeThread'> {
  private readonly docs = new Map<string, ThreadDoc>();
  /** How many writes stored a new version. */
  writes = 0;

  async insert(doc: ThreadDoc): Promise<void> {
    this.docs.set(doc._id, structuredClone(doc));
  }

  async readThread(id: string): Promise<ThreadDoc | null> {
    const doc = this.docs.get(id);
    return doc ? structuredClone(doc) : null;
  }

  async writeThread(
    id: string,
    change: (current: ThreadDoc) => ThreadDoc | undefined,
  ): Promise<{ before: ThreadDoc | null; after: ThreadDoc | null }> {
    const current = this.docs.get(id);
    if (!current) return { before: null, after: null };
    const next = change(structuredClone(current));
    if (!next) return { before: structuredClone(current), after: null };
    const after = { ...next, version: (current.version ?? 0) + 1 };
    this.docs.set(id, structuredClone(after));
    this.writes += 1;
    return { before: structuredClone(current), after: structuredClone(after) };
  }
}
