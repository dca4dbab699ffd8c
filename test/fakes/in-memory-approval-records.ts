// The approval records (relay-core/service/approval-records.ts) in memory, for the fast tests of approval views and
// decisions: each approval on its thread in an InMemoryThreads, and the listing as ApprovalRecords writes it
// (test/contracts/approval-records-contract.ts, run against this and against ApprovalRecords on the real server).
import { threadOfApproval, type ApprovalRecord } from '../../relay-core/domain/approval';
import type { ApprovalIndexDoc, ThreadDoc } from '../../relay-core/domain/documents';
import { RelayError } from '../../relay-core/domain/errors';
import { listingEntry, type ApprovalRecords } from '../../relay-core/service/approval-records';
import type { InMemoryThreads } from './in-memory-threads';

export class InMemoryApprovalRecords implements Pick<ApprovalRecords, 'get' | 'open' | 'listed' | 'write' | 'index'> {
  private readonly listing = new Map<string, ApprovalIndexDoc>();

  constructor(private readonly threads: Pick<InMemoryThreads, 'readThread'>) {}

  async get(id: string): Promise<{ thread: ThreadDoc; record: ApprovalRecord }> {
    const threadId = threadOfApproval(id);
    const thread = threadId ? await this.threads.readThread(threadId) : null;
    const record = thread?.approvals?.find((a) => a.id === id);
    if (!thread || !record) throw new RelayError('not_found', `No approval ${id}`);
    return { thread, record };
  }

  async open(limit: number): Promise<ApprovalIndexDoc[]> {
    return this.entries()
      .filter((e) => e.open === 1)
      .sort((a, b) => a.created_at.getTime() - b.created_at.getTime())
      .slice(0, limit);
  }

  async listed(status: ApprovalRecord['status'] | undefined, limit: number): Promise<ApprovalIndexDoc[]> {
    return this.entries()
      .filter((e) => !status || e.status === status)
      .sort((a, b) => b.created_at.getTime() - a.created_at.getTime())
      .slice(0, limit);
  }

  async write(threadId: string, record: ApprovalRecord): Promise<void> {
    this.listing.set(record.id, { _id: record.id, ...structuredClone(listingEntry(threadId, record)) });
  }

  async index(threadId: string, record: ApprovalRecord): Promise<void> {
    await this.write(threadId, record);
  }

  private entries(): ApprovalIndexDoc[] {
    return [...this.listing.values()].map((e) => structuredClone(e));
  }
}
