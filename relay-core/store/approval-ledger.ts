// The approvals still open: one small `_id`-addressed entry per approval, put when it is asked for and removed once
// it is decided and done. The sweep and `approvals list --status pending` read only this collection, so what they
// read grows with the open approvals, never with the decided ones (FerretDB on SQLite decodes a whole collection
// for any filter other than exactly `{ _id }`; an unfiltered read of this one decodes only what is open).
import type { Collection } from 'mongodb';
import type { ApprovalOpenDoc } from '../domain/documents';
import { putById } from './thread-writes';

export class OpenApprovals {
  constructor(private readonly entries: Collection<ApprovalOpenDoc>) {}

  /** The approval is open (pending, or approved and not yet applied); putting it twice is once. */
  async open(id: string, threadId: string, createdAt: Date): Promise<void> {
    await putById(this.entries, id, { thread_id: threadId, created_at: createdAt });
  }

  /** The approval is decided and done: the sweep need not look at it again. */
  async close(id: string): Promise<void> {
    await this.entries.deleteOne({ _id: id });
  }

  /** Open approvals, oldest first (no more than `limit`): one unfiltered read of a collection that holds only them. */
  async list(limit: number): Promise<ApprovalOpenDoc[]> {
    const docs = await this.entries.find({}).limit(limit).toArray();
    return docs.sort((a, b) => a.created_at.getTime() - b.created_at.getTime() || a._id.localeCompare(b._id));
  }
}
