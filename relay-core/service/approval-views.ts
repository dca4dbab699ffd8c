// Approvals as their readers see them: one for a party to it, a thread's, and the listing (the admin API and CLI).
import type { ApprovalRecord } from '../domain/approval';
import type { AgentDoc, ThreadDoc } from '../domain/documents';
import { RelayError } from '../domain/errors';
import type { ApprovalRecords } from './approval-records';
import { approvalView, type ApprovalView } from './wire-views';

/** The open approvals a pending listing reads at most. */
const OPEN_READ_LIMIT = 5_000;

export interface ApprovalViewsDeps {
  records: Pick<ApprovalRecords, 'get' | 'open' | 'listed'>;
}

export class ApprovalViews {
  constructor(private readonly deps: ApprovalViewsDeps) {}

  /** The approval as `caller` may read it: its actor, the thread's sender, or one of its approvers. */
  async viewFor(caller: AgentDoc, id: string): Promise<ApprovalView> {
    const { thread, record } = await this.deps.records.get(id).catch(() => {
      throw new RelayError('not_found', `No approval ${id} that you can see`);
    });
    const approver = record.approvers.some(
      (a) => a.handle === caller.handle || (caller.slack_user_id !== null && a.slack_user_id === caller.slack_user_id),
    );
    if (record.actor !== caller.handle && thread.from !== caller.handle && !approver)
      throw new RelayError('not_found', `No approval ${id} that you can see`);
    return approvalView(thread._id, record);
  }

  /** The approvals of a thread the caller takes part in (its recipient sees none while the create is held). */
  async forThread(caller: AgentDoc, thread: ThreadDoc): Promise<ApprovalView[]> {
    return (thread.approvals ?? [])
      .filter(
        (a) =>
          a.actor === caller.handle ||
          thread.from === caller.handle ||
          (thread.to === caller.handle && !thread.hidden_from_recipient),
      )
      .map((a) => approvalView(thread._id, a));
  }

  /** The approvals listing, newest first (the admin API and CLI). */
  async list(filter: { status?: ApprovalRecord['status']; approver?: string }, limit = 200): Promise<ApprovalView[]> {
    // The pending ones come from the open approvals (the `open` index), never from a scan of every approval.
    const entries: Array<{ _id: string; created_at: Date }> =
      filter.status === 'pending'
        ? await this.deps.records.open(OPEN_READ_LIMIT)
        : await this.deps.records.listed(filter.status, OPEN_READ_LIMIT);
    entries.sort((a, b) => b.created_at.getTime() - a.created_at.getTime());
    const views: ApprovalView[] = [];
    for (const entry of entries) {
      if (views.length >= limit) break;
      const found = await this.deps.records.get(entry._id).catch(() => null);
      if (!found) continue;
      if (filter.status && found.record.status !== filter.status) continue;
      if (
        filter.approver &&
        !found.record.approvers.some(
          (a) => a.label === filter.approver || a.handle === filter.approver || a.slack_user_id === filter.approver,
        )
      )
        continue;
      views.push(approvalView(found.thread._id, found.record));
    }
    return views;
  }
}
