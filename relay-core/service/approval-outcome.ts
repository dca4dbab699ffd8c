// What an approval that just ended does to its thread (pure): a held create delivered or rejected, an approved
// transition applied as its actor, or why nothing is applied.
import type { ApprovalRecord, VoteRefusal } from '../domain/approval';
import type { AgentDoc, OutboxEvent, PolicyStamp, ThreadDoc } from '../domain/documents';
import type { EventType } from '../domain/schemas';
import { stateVersion } from '../domain/thread-lifecycle';
import { isAppliedAfterApproval, type ApplyApproved } from './approvals';

export interface Planned {
  refusal?: VoteRefusal;
  record?: ApprovalRecord;
  next?: ThreadDoc;
  event?: EventType;
  message: string;
}

/**
 * An approval that was just approved, rejected or timed out: the thread as it follows from it, and its event.
 * `refusal`: why the policy in force now refuses the approved call (then nothing is applied).
 */
export function conclude(
  thread: ThreadDoc,
  record: ApprovalRecord,
  now: Date,
  actor: AgentDoc | null,
  emit: (type: EventType) => OutboxEvent,
  refusal: string | null = null,
  /** How an approved transition applies (the timeout, which never applies one, has none). */
  apply?: ApplyApproved,
): Planned {
  const withEvent = (doc: ThreadDoc, type: EventType): ThreadDoc => ({ ...doc, outbox: [...doc.outbox, emit(type)] });
  const stamp: PolicyStamp = {
    rule_id: record.rule_id,
    effect: 'require_approval',
    policy_version: record.policy_version,
  };
  const notApplied = (why: string): Planned => {
    const done = finished(record, now, false, `nothing was applied: ${why}`);
    return {
      record: done,
      event: 'approval.decided',
      next: withEvent(withRecord(thread, done), 'approval.decided'),
      message: `Approval ${record.id} is ${record.status.replace('_', ' ')}, but ${done.outcome!.message}.`,
    };
  };
  if (record.action === 'handoff.create') {
    if (thread.status !== 'awaiting_approval') return notApplied(`the handoff is ${thread.status} now`);
    if (record.status === 'approved' && !refusal) {
      // A handoff to a role, skill or owner with several candidates opens unclaimed: its Claim cards go out as usual.
      const unclaimed = Boolean(thread.to_target && thread.to === thread.to_target);
      const done = finished(
        record,
        now,
        true,
        unclaimed
          ? `the handoff was opened to its candidates (${thread.to})`
          : 'the handoff was delivered to its recipient',
      );
      const status = unclaimed ? 'unclaimed' : 'pending';
      const next: ThreadDoc = {
        ...withRecord(thread, done),
        status,
        hidden_from_recipient: false,
        updated_at: now,
        status_history: [
          ...thread.status_history,
          { status, by: record.actor, at: now, via: record.via, policy: stamp },
        ],
      };
      const message = unclaimed
        ? `Approved: the handoff from ${thread.from} is open to ${thread.to} (${(thread.candidates ?? []).join(', ')}); the first to claim it gets it.`
        : `Approved: the handoff from ${thread.from} is delivered to ${thread.to}.`;
      return { record: done, event: 'thread.created', next: withEvent(next, 'thread.created'), message };
    }
    const decided = refusal ? finished(record, now, false, `nothing was applied: ${refusal}`) : record;
    const why = refusal ?? record.reason ?? 'rejected';
    const by = refusal ? 'policy' : (record.decided_by ?? 'policy');
    const next: ThreadDoc = {
      ...withRecord(thread, decided),
      status: 'rejected',
      reject_reason: why,
      rejected_at: now,
      updated_at: now,
      status_history: [
        ...thread.status_history,
        { status: 'rejected', by, at: now, via: emit('thread.rejected').via, policy: stamp },
      ],
    };
    const message = refusal
      ? `Approval ${record.id} is approved, but ${decided.outcome!.message}; ${thread.from} is told why and nothing is delivered to ${thread.to}.`
      : `Rejected: ${thread.from} is told why; nothing is delivered to ${thread.to}.`;
    return { record: decided, event: 'thread.rejected', next: withEvent(next, 'thread.rejected'), message };
  }
  if (record.status !== 'approved') {
    const verb = record.status === 'rejected' ? 'Rejected' : 'Timed out';
    return {
      record,
      event: 'approval.decided',
      next: withEvent(withRecord(thread, record), 'approval.decided'),
      message: `${verb}: ${record.action} by ${record.actor} is not applied; they are told.`,
    };
  }
  if (stateVersion(thread) !== record.state_version)
    return notApplied(`the thread changed since it was asked (it is ${thread.status} now)`);
  if (!actor || actor.status !== 'active') return notApplied(`${record.actor} is no longer an active teammate`);
  if (!apply) return notApplied('this relay cannot apply it');
  if (refusal) return notApplied(refusal);
  // An approved append is applied right after this write (finishHeld): the record waits for its outcome meanwhile.
  if (isAppliedAfterApproval(record.action))
    return {
      record,
      next: withRecord(thread, record),
      message: `Approved: ${record.action} is being applied as ${record.actor}.`,
    };
  const done = finished(record, now, true, `${record.action} was applied as ${record.actor}`);
  const applied = apply(withRecord(thread, done), done, actor, emit, now);
  if ('refusal' in applied) return notApplied(applied.refusal);
  return { record: done, event: applied.type, next: applied.next, message: `Approved: ${done.outcome!.message}.` };
}

export function withRecord(thread: ThreadDoc, record: ApprovalRecord): ThreadDoc {
  return { ...thread, approvals: (thread.approvals ?? []).map((a) => (a.id === record.id ? record : a)) };
}

export function finished(record: ApprovalRecord, at: Date, applied: boolean, message: string): ApprovalRecord {
  return {
    ...record,
    outcome: { applied, message },
    history: [...record.history, { at, what: applied ? 'applied' : 'not_applied', note: message }],
  };
}
