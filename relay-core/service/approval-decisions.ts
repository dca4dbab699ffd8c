// Deciding an approval: one approver's vote, the call applied as its actor once the quorum is reached (in the same
// thread write, or right after it for an append or a run), and the outcome recorded once.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { approvalsCount, castVote, threadOfApproval, type ApprovalRecord, type Voter } from '../domain/approval';
import type { Clock } from '../domain/clock';
import type { AgentDoc, OutboxEvent, PolicyAuditDoc, ThreadDoc } from '../domain/documents';
import { RelayError } from '../domain/errors';
import type { EventType, Surface } from '../domain/schemas';
import { stateVersion } from '../domain/thread-lifecycle';
import type { ThreadWriter } from '../domain/thread-writer';
import type { MongoStore } from '../store/mongo-store';
import { policyAuditEvents } from '../store/account-log';
import { conclude, finished, withRecord, type Planned } from './approval-outcome';
import type { ApprovalRecords } from './approval-records';
import { isAppliedAfterApproval, type ApprovalAppliers, type DecisionAnswer } from './approvals';
import type { Outbox } from './outbox';
import type { Teammates } from './teammates';
import { approvalView } from './wire-views';

export interface ApprovalDecisionsDeps {
  /** The thread write, and where a decision the admin key made is audited. */
  store: Pick<ThreadWriter, 'readThread' | 'writeThread'> & {
    policyAudit: Pick<MongoStore['policyAudit'], 'insertOne'>;
    accountLog: Pick<MongoStore['accountLog'], 'record'>;
  };
  outbox: Pick<Outbox, 'recording'>;
  teammates: Pick<Teammates, 'get'>;
  records: Pick<ApprovalRecords, 'get' | 'index'>;
  /** How approved calls are applied and re-checked: the transitions, the appends and runs, the policy in force. */
  appliers: ApprovalAppliers;
  clock: Clock;
  log: Logger;
}

export class ApprovalDecisions {
  constructor(private readonly deps: ApprovalDecisionsDeps) {}

  /**
   * One approver's Approve or Reject. A vote that reaches the quorum applies the call in the same thread write:
   * a held create becomes pending and is delivered as a new handoff; a held call is applied as its actor — or,
   * when the thread has moved on since it was asked (cancelled, already accepted), nothing is applied and the
   * answer says so. A refused vote (not an approver, second vote, already decided) changes nothing.
   */
  async decide(
    id: string,
    voter: Voter,
    decision: 'approve' | 'reject',
    via: Surface,
    reason?: string,
  ): Promise<DecisionAnswer> {
    const threadId = threadOfApproval(id);
    if (!threadId) throw new RelayError('not_found', `No approval ${id}`);
    for (let round = 0; round < 5; round += 1) {
      const { thread: seen, record } = await this.deps.records.get(id);
      const actor = await this.deps.teammates.get(record.actor);
      const eventId = randomUUID();
      // Who an event is by: the actor when it carries their call (the create, the transition), else the approver.
      // Stamped with the decision's own time: the approval's history entry and its event share it, which is how
      // the Slack notices find the approval an event applied (change-notices.ts approvalOfEvent).
      const emitAt =
        (at: Date) =>
        (type: EventType): OutboxEvent => {
          const asActor = type !== 'thread.rejected' && type !== 'approval.decided';
          return {
            id: eventId,
            type,
            at,
            by: asActor ? record.actor : voter.label,
            via: asActor ? record.via : via,
          };
        };
      const emit = (type: EventType): OutboxEvent => emitAt(this.deps.clock.now())(type);
      // A vote that reaches the quorum asks the policy in force again first: one changed to deny since applies nothing.
      const reaches = castVote(record, voter, decision, this.deps.clock.now(), via, reason).kind === 'approved';
      const refusal =
        reaches && actor && !isAppliedAfterApproval(record.action)
          ? await this.deps.appliers.recheck(seen, record, actor)
          : null;
      const planned = this.vote(
        seen,
        record,
        voter,
        decision,
        via,
        this.deps.clock.now(),
        reason,
        actor,
        emit,
        refusal,
      ).event;
      const event = planned ? emit(planned) : null;
      let result: Planned | undefined;
      let drifted = false;
      const write = async () =>
        this.deps.store.writeThread(threadId, (current) => {
          const currentRecord = current.approvals?.find((a) => a.id === id);
          if (!currentRecord) return undefined;
          const now = this.deps.clock.now();
          result = this.vote(current, currentRecord, voter, decision, via, now, reason, actor, emitAt(now), refusal);
          drifted = (result.event ?? null) !== (event?.type ?? null);
          return drifted ? undefined : result.next;
        });
      const written = event
        ? await this.deps.outbox.recording(event, async () => (await write()).after)
        : (await write()).after;
      if (drifted) continue;
      if (!result) throw new RelayError('not_found', `No approval ${id}`);
      if (!written || !result.record) {
        return {
          approval: approvalView(threadId, result.record ?? record),
          message: result.message,
          changed: false,
          ...(result.refusal ? { refusal: result.refusal } : {}),
        };
      }
      await this.deps.records.index(threadId, result.record);
      this.deps.log.info(
        {
          thread_id: threadId,
          approval_id: id,
          by: voter.label,
          decision,
          status: result.record.status,
          ...(voter.admin ? { admin_on_behalf: true } : {}),
        },
        'approval vote',
      );
      if (voter.admin) await this.auditAdmin(threadId, result.record, voter, decision);
      let final = result.record;
      let message = result.message;
      if (final.status === 'approved' && isAppliedAfterApproval(final.action) && !final.outcome) {
        final = await this.finishHeld(threadId, id);
        message = final.outcome?.applied
          ? `Approved: ${final.outcome.message}.`
          : `Approval ${id} is approved, but ${final.outcome?.message ?? 'it is still being applied'}.`;
      }
      return {
        approval: approvalView(threadId, final),
        message: voter.admin
          ? `${message} (Recorded as decided by the admin key on behalf of ${voter.label}.)`
          : message,
        changed: true,
      };
    }
    throw new RelayError('state_changed', `Approval ${id} is changing too fast right now; try again`);
  }

  private vote(
    thread: ThreadDoc,
    record: ApprovalRecord,
    voter: Voter,
    decision: 'approve' | 'reject',
    via: Surface,
    now: Date,
    reason: string | undefined,
    actor: AgentDoc | null,
    emit: (type: EventType) => OutboxEvent,
    refusal: string | null,
  ): Planned {
    const vote = castVote(record, voter, decision, now, via, reason);
    if (vote.kind === 'refused') return { message: vote.message, refusal: vote.why };
    if (vote.kind === 'recorded') {
      const left = record.quorum - approvalsCount(vote.record);
      // The other approvers' DMs are redrawn to show the vote (approval.voted).
      return {
        record: vote.record,
        event: 'approval.voted',
        next: { ...withRecord(thread, vote.record), outbox: [...thread.outbox, emit('approval.voted')] },
        message: `Your approval of ${record.id} is recorded; it needs ${left} more.`,
      };
    }
    return conclude(thread, vote.record, now, actor, emit, refusal, this.deps.appliers.transition);
  }

  /**
   * Applies an approved message.append or draft.attach: the policy in force is asked again, then the message is
   * appended as its actor through the normal append (exactly once: the approval id is its idempotency key), and the
   * outcome is recorded on the approval with approval.decided, once. Safe to run any number of times and from any
   * process (a decision, the sweep after a crash between the decision and the append).
   */
  async finishHeld(threadId: string, id: string): Promise<ApprovalRecord> {
    const { thread, record } = await this.deps.records.get(id);
    if (record.status !== 'approved' || record.outcome || !isAppliedAfterApproval(record.action)) return record;
    const actor = await this.deps.teammates.get(record.actor);
    let outcome: { applied: boolean; message: string };
    if (stateVersion(thread) !== record.state_version)
      outcome = {
        applied: false,
        message: `nothing was applied: the thread changed since it was asked (it is ${thread.status} now)`,
      };
    else if (!actor || actor.status !== 'active')
      outcome = { applied: false, message: `nothing was applied: ${record.actor} is no longer an active teammate` };
    else {
      const refusal = await this.deps.appliers.recheck(thread, record, actor);
      const applied = refusal ? { refusal } : await this.deps.appliers.message(thread, record, actor);
      outcome =
        'refusal' in applied
          ? { applied: false, message: `nothing was applied: ${applied.refusal}` }
          : { applied: true, message: applied.message };
    }
    const event: OutboxEvent = {
      id: randomUUID(),
      type: 'approval.decided',
      at: this.deps.clock.now(),
      by: record.actor,
      via: record.via,
    };
    const written = await this.deps.outbox.recording(event, async () => {
      const result = await this.deps.store.writeThread(threadId, (current) => {
        const rec = current.approvals?.find((a) => a.id === id);
        if (!rec || rec.status !== 'approved' || rec.outcome) return undefined;
        return {
          ...withRecord(current, finished(rec, this.deps.clock.now(), outcome.applied, outcome.message)),
          outbox: [...current.outbox, event],
        };
      });
      return result.after;
    });
    const latest = written?.approvals?.find((a) => a.id === id) ?? (await this.deps.records.get(id)).record;
    await this.deps.records.index(threadId, latest);
    this.deps.log.info(
      { thread_id: threadId, approval_id: id, action: record.action, applied: latest.outcome?.applied },
      'approved call finished',
    );
    return latest;
  }

  /** A decision the admin key made on an approver's behalf, in the policy audit (GET /admin/policy/audit). */
  private async auditAdmin(
    threadId: string,
    record: ApprovalRecord,
    voter: Voter,
    decision: 'approve' | 'reject',
  ): Promise<void> {
    const at = this.deps.clock.now();
    const thread = await this.deps.store.readThread(threadId);
    const doc: PolicyAuditDoc = {
      _id: `${at.toISOString()}_${randomUUID()}`,
      at,
      action: record.action,
      actor: 'admin',
      sender: thread?.from ?? '',
      recipient: thread?.to ?? '',
      via: 'api',
      thread_id: threadId,
      session_id: null,
      rule_id: record.rule_id,
      effect: 'require_approval',
      policy_version: record.policy_version,
      outcome: 'admin_on_behalf',
      reason: `the admin key ${decision === 'approve' ? 'approved' : 'rejected'} ${record.id} on behalf of approver ${voter.label}`,
    };
    await Promise.all([
      this.deps.store.policyAudit.insertOne(doc),
      this.deps.store.accountLog.record(policyAuditEvents(doc)),
    ]).catch((error: Error) =>
      this.deps.log.warn({ approval_id: record.id, err: error.message }, 'admin decision not audited'),
    );
  }
}
