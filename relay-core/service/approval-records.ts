// Where approvals are kept: each on its thread (the record of truth) and in the `approvals` listing, whose `open`
// entries are the ones the sweep still looks at.
import type { Logger } from 'pino';
import { threadOfApproval, type ApprovalRecord } from '../domain/approval';
import type { ApprovalIndexDoc, ThreadDoc } from '../domain/documents';
import { RelayError } from '../domain/errors';
import type { MongoStore } from '../store/mongo-store';
import { putById } from '../store/thread-writes';
import { isAppliedAfterApproval } from './approvals';

export interface ApprovalRecordsDeps {
  store: MongoStore;
  log: Logger;
}

export class ApprovalRecords {
  constructor(private readonly deps: ApprovalRecordsDeps) {}

  /** The approval and its thread; not_found for an id this relay did not issue. */
  async get(id: string): Promise<{ thread: ThreadDoc; record: ApprovalRecord }> {
    const threadId = threadOfApproval(id);
    const thread = threadId ? await this.deps.store.readThread(threadId) : null;
    const record = thread?.approvals?.find((a) => a.id === id);
    if (!thread || !record) throw new RelayError('not_found', `No approval ${id}`);
    return { thread, record };
  }

  /** The open approvals, oldest first (no more than `limit`): one read on the `open` index. */
  open(limit: number): Promise<ApprovalIndexDoc[]> {
    return this.deps.store.approvals.find({ open: 1 }).sort({ created_at: 1 }).limit(limit).toArray();
  }

  /** The listing's entries newest first, only those in `status` when given (no more than `limit`). */
  listed(status: ApprovalRecord['status'] | undefined, limit: number): Promise<ApprovalIndexDoc[]> {
    return this.deps.store.approvals
      .find(status ? { status } : {})
      .sort({ created_at: -1 })
      .limit(limit)
      .toArray();
  }

  /** The approval's listing entry, open until it is decided and done. */
  async write(threadId: string, record: ApprovalRecord): Promise<void> {
    await putById(this.deps.store.approvals, record.id, listingEntry(threadId, record));
  }

  /** writeIndex after a change: a failure leaves the entry as it was (still open, the next sweep writes it again). */
  async index(threadId: string, record: ApprovalRecord): Promise<void> {
    await this.write(threadId, record).catch((error: Error) =>
      this.deps.log.warn({ approval_id: record.id, err: error.message }, 'approval listing not updated'),
    );
  }
}

/** What the listing keeps of an approval. */
export function listingEntry(threadId: string, record: ApprovalRecord): Omit<ApprovalIndexDoc, '_id'> {
  return {
    thread_id: threadId,
    status: record.status,
    action: record.action,
    actor: record.actor,
    approvers: record.approvers.map((a) => a.label),
    created_at: record.created_at,
    deadline: record.deadline,
    ...(isOpen(record) ? { open: 1 as const } : {}),
  };
}

/** Still the sweep's to look at: pending, or approved and its append not applied yet. */
function isOpen(record: ApprovalRecord): boolean {
  return (
    record.status === 'pending' ||
    (record.status === 'approved' && isAppliedAfterApproval(record.action) && !record.outcome)
  );
}
