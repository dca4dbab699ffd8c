// The approvals' sweep (with the outbox sweep): lost timers armed again, overdue ones fired, approved appends a
// crash left unapplied finished.
import { dueTimer } from '../domain/approval';
import type { Clock } from '../domain/clock';
import { RelayError } from '../domain/errors';
import type { MongoStore } from '../store/mongo-store';
import type { ApprovalDecisions } from './approval-decisions';
import type { ApprovalRecords } from './approval-records';
import type { ApprovalTimers } from './approval-timers';
import { isAppliedAfterApproval } from './approvals';

export interface ApprovalSweepDeps {
  /** Only the approvals' listing: an entry whose approval is gone leaves the `open` index there. */
  store: { approvals: Pick<MongoStore['approvals'], 'updateOne'> };
  records: Pick<ApprovalRecords, 'get' | 'index' | 'open'>;
  timers: Pick<ApprovalTimers, 'arm' | 'fire'>;
  decisions: Pick<ApprovalDecisions, 'finishHeld'>;
  clock: Clock;
}

export class ApprovalSweep {
  constructor(private readonly deps: ApprovalSweepDeps) {}

  /**
   * Re-arms the timers of every pending approval (a lost delayed job, Redis flushed), fires what is overdue, and
   * finishes an approved append a crash left unapplied. It reads the open approvals only (the `open` index): its
   * reads grow with the approvals still open, not with every approval ever decided.
   */
  async sweep(limit = 500): Promise<number> {
    const open = await this.deps.records.open(limit);
    let fired = 0;
    for (const entry of open) {
      const found = await this.deps.records.get(entry._id).catch((error: unknown) => {
        if (error instanceof RelayError && error.code === 'not_found') return null;
        throw error;
      });
      if (!found) {
        await this.deps.store.approvals.updateOne({ _id: entry._id }, { $unset: { open: '' } });
        continue;
      }
      if (found.record.status === 'approved' && isAppliedAfterApproval(found.record.action) && !found.record.outcome) {
        await this.deps.decisions.finishHeld(found.thread._id, entry._id);
        continue;
      }
      if (found.record.status !== 'pending') {
        await this.deps.records.index(found.thread._id, found.record);
        continue;
      }
      if (dueTimer(found.record, this.deps.clock.now())) {
        if ((await this.deps.timers.fire(entry._id)) !== 'not_due') fired += 1;
      } else {
        await this.deps.timers.arm(found.record);
      }
    }
    return fired;
  }
}
