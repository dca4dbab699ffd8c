// The outbox ledger (relay-core/store/outbox-ledger.ts) in memory, for the outbox sweep's fast tests: threads with
// jobs pending, the sweep's `waiting` read and `remove`, and finished jobs marked at the next flush, as the contract
// suite asks (test/contracts/outbox-ledger-contract.ts, run against this and against OutboxLedger on the real server).
import type { ThreadDoc } from '../../relay-core/domain/documents';
import { jobKey, type OutboxLedger } from '../../relay-core/store/outbox-ledger';

export class InMemoryOutboxLedger implements Pick<OutboxLedger, 'waiting' | 'remove' | 'finished' | 'flush'> {
  private readonly docs = new Map<string, ThreadDoc>();
  private finishedJobs: Array<[string, string]> = [];

  async insert(doc: ThreadDoc): Promise<void> {
    this.docs.set(doc._id, structuredClone(doc));
  }

  async read(id: string): Promise<ThreadDoc | null> {
    const doc = this.docs.get(id);
    return doc ? structuredClone(doc) : null;
  }

  async waiting(before: Date, limit: number): Promise<ThreadDoc[]> {
    return [...this.docs.values()]
      .filter((d) => d.pending_since !== undefined && d.pending_since <= before)
      .sort((a, b) => a.pending_since!.getTime() - b.pending_since!.getTime())
      .slice(0, limit)
      .map((d) => structuredClone(d));
  }

  async remove(threadId: string, keys: readonly string[]): Promise<void> {
    const doc = this.docs.get(threadId);
    if (!doc?.jobs_pending || keys.length === 0) return;
    const left = doc.jobs_pending.filter((k) => !keys.includes(k));
    if (left.length === doc.jobs_pending.length) return;
    const { jobs_pending: _jobs, pending_since: _since, ...rest } = doc;
    this.docs.set(threadId, left.length ? { ...doc, jobs_pending: left } : (rest as ThreadDoc));
  }

  finished(threadId: string, queue: string, eventId: string): void {
    this.finishedJobs.push([threadId, jobKey(queue, eventId)]);
  }

  async flush(): Promise<void> {
    const batch = this.finishedJobs;
    this.finishedJobs = [];
    for (const [threadId, key] of batch) await this.remove(threadId, [key]);
  }
}
