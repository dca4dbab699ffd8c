// Approvals: a call a policy holds until people approve it, bound to exactly what was asked. Pure rules over the
// record the thread carries (`ThreadDoc.approvals`), so every decision is part of one versioned thread write.
import { canonicalHash } from './canonical-json';
import type { PolicyAction } from './policy';
import type { Surface } from './schemas';

/** One resolved approver: who the policy named (`source`) and how that person shows up (a handle and/or a Slack user). */
export interface ApproverRef {
  /** How the approver is shown: the handle when there is one, else the Slack user id. */
  label: string;
  handle: string | null;
  slack_user_id: string | null;
  /** The policy entry it came from (`recipient_lead`, `role:sre`, `U0…`, `lead@acme`). */
  source: string;
  /** 0: named by `approvers`; 1: added by `escalate_to`. */
  step: number;
}

export type ApprovalStatus = 'pending' | 'approved' | 'rejected' | 'timed_out';

export interface ApprovalVote {
  by: string;
  at: Date;
  via: Surface;
  /** Cast with the admin key on the approver's behalf (`approvals approve ID --as WHO`), not by the approver. */
  admin?: true;
}

/** What happened to an approval, in order: asked, each vote, each reminder and escalation, the outcome. */
export interface ApprovalEvent {
  at: Date;
  what:
    'requested' | 'approved_by' | 'rejected_by' | 'reminded' | 'escalated' | 'timed_out' | 'applied' | 'not_applied';
  by?: string;
  note?: string;
}

export interface ApprovalRecord {
  /** `${thread_id}_a${n}` (no '.': it is a key in the thread's Slack records): the thread is found from the id alone (one `_id` read). */
  id: string;
  action: PolicyAction;
  /** The teammate the call was made as; an approved call is applied as this teammate. */
  actor: string;
  via: Surface;
  /** The call's arguments (for a create: none, the thread is the handoff). */
  args: Record<string, unknown>;
  /** The thread's state version (its number of status changes) the call was asked against. */
  state_version: number;
  rule_id: string;
  policy_version: string;
  /** canonicalHash of action, args, actor, thread, state version and policy version: what the approvers approve. */
  binding: string;
  approvers: ApproverRef[];
  quorum: number;
  approvals: ApprovalVote[];
  status: ApprovalStatus;
  reason: string | null;
  decided_by: string | null;
  decided_at: Date | null;
  /** For a non-create action: whether the approved call was applied, and if not why. */
  outcome: { applied: boolean; message: string } | null;
  created_at: Date;
  remind_after_ms: number | null;
  /** When the next reminder is due (null: none, or already sent for this step). */
  remind_at: Date | null;
  timeout_ms: number;
  deadline: Date;
  on_timeout: 'deny' | 'escalate';
  /** The escalate_to approvers as named by the policy, resolved when the approval is escalated. */
  escalate_to: string[];
  /** 0 until escalated, then 1. */
  step: number;
  history: ApprovalEvent[];
}

export const APPROVAL_ID_PATTERN = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})_a(\d{1,4})$/;

export function approvalId(threadId: string, n: number): string {
  return `${threadId}_a${n}`;
}

/** The thread an approval id belongs to, or null for an id this relay never issues. */
export function threadOfApproval(id: string): string | null {
  return APPROVAL_ID_PATTERN.exec(id)?.[1] ?? null;
}

export function bindingOf(
  fields: Pick<ApprovalRecord, 'action' | 'args' | 'actor' | 'state_version' | 'policy_version'> & {
    thread_id: string;
  },
): string {
  return canonicalHash({
    action: fields.action,
    args: fields.args,
    actor: fields.actor,
    thread_id: fields.thread_id,
    state_version: fields.state_version,
    policy_version: fields.policy_version,
  });
}

/** Who is voting: a Slack user, a teammate, or both (a linked Slack user). */
export interface Voter {
  handle: string | null;
  slack_user_id: string | null;
  /** How the vote is recorded: `@U0…` for a Slack click, the handle otherwise. */
  label: string;
  /** The admin key acts for this approver: the vote and its history entry say so. */
  admin?: boolean;
}

/** The history note of a vote the admin key cast on an approver's behalf. */
export const ADMIN_ON_BEHALF = 'by the admin key on their behalf';

/** The approver entries this voter is (by handle or by Slack user), among those asked so far. */
export function approverEntries(record: ApprovalRecord, voter: Voter): ApproverRef[] {
  return record.approvers.filter(
    (a) =>
      (voter.handle !== null && a.handle === voter.handle) ||
      (voter.slack_user_id !== null && a.slack_user_id === voter.slack_user_id),
  );
}

/** Distinct approvers who voted yes (a person named twice, by handle and by role, counts once). */
export function approvalsCount(record: ApprovalRecord): number {
  return new Set(record.approvals.map((v) => v.by)).size;
}

export function describeApprovers(approvers: readonly ApproverRef[]): string {
  return [...new Set(approvers.map((a) => a.label))].join(', ');
}

/** Why a vote changed nothing: not an approver, the approval is decided, a second vote, a rejection without a reason. */
export type VoteRefusal = 'not_approver' | 'decided' | 'already_voted' | 'no_reason';

export type VoteOutcome =
  | { kind: 'refused'; why: VoteRefusal; message: string }
  | { kind: 'recorded'; record: ApprovalRecord }
  | { kind: 'approved'; record: ApprovalRecord }
  | { kind: 'rejected'; record: ApprovalRecord };

/**
 * One approver's vote on a pending approval: a yes counts toward the quorum (approved when it is reached), a no
 * rejects at once. A vote by someone who is not an approver, a second vote, or a vote on a decided approval is
 * refused with why, and changes nothing.
 */
export function castVote(
  record: ApprovalRecord,
  voter: Voter,
  decision: 'approve' | 'reject',
  at: Date,
  via: Surface,
  reason?: string,
): VoteOutcome {
  if (approverEntries(record, voter).length === 0) {
    return {
      kind: 'refused',
      why: 'not_approver',
      message: `${voter.label} is not an approver of ${record.id} (approvers: ${describeApprovers(record.approvers)}). Nothing was changed.`,
    };
  }
  if (record.status !== 'pending') {
    const by = record.decided_by ? ` by ${record.decided_by}` : '';
    return {
      kind: 'refused',
      why: 'decided',
      message: `Approval ${record.id} is already ${record.status.replace('_', ' ')}${by}. Nothing was changed.`,
    };
  }
  const me = voterKey(record, voter);
  if (record.approvals.some((v) => v.by === me)) {
    return {
      kind: 'refused',
      why: 'already_voted',
      message: `You already approved ${record.id}; it needs ${record.quorum - approvalsCount(record)} more approval(s). Nothing was changed.`,
    };
  }
  if (decision === 'reject') {
    const text = (reason ?? '').trim();
    if (!text)
      return { kind: 'refused', why: 'no_reason', message: 'A rejection needs a reason. Nothing was changed.' };
    const note = voter.admin ? `${text} (${ADMIN_ON_BEHALF})` : text;
    return {
      kind: 'rejected',
      record: {
        ...record,
        status: 'rejected',
        reason: text,
        decided_by: me,
        decided_at: at,
        remind_at: null,
        history: [...record.history, { at, what: 'rejected_by', by: me, note }],
      },
    };
  }
  const voted: ApprovalRecord = {
    ...record,
    approvals: [...record.approvals, { by: me, at, via, ...(voter.admin ? { admin: true as const } : {}) }],
    history: [
      ...record.history,
      { at, what: 'approved_by', by: me, ...(voter.admin ? { note: ADMIN_ON_BEHALF } : {}) },
    ],
  };
  if (approvalsCount(voted) < record.quorum) return { kind: 'recorded', record: voted };
  return {
    kind: 'approved',
    record: { ...voted, status: 'approved', decided_by: me, decided_at: at, remind_at: null },
  };
}

/** A voter is recorded under the label of the approver entry they match (so a Slack click and an API call by one person count once). */
function voterKey(record: ApprovalRecord, voter: Voter): string {
  return approverEntries(record, voter)[0]!.label;
}

export type TimerStep = 'remind' | 'timeout';

/** What is due on the approval at `now`: a reminder, a timeout (deny or escalate), or nothing. */
export function dueTimer(record: ApprovalRecord, now: Date): TimerStep | null {
  if (record.status !== 'pending') return null;
  if (now.getTime() >= record.deadline.getTime()) return 'timeout';
  if (record.remind_at && now.getTime() >= record.remind_at.getTime()) return 'remind';
  return null;
}

/** The deterministic id of a timer job: one per approval, step and kind, so arming it twice is once. */
export function timerJobId(record: Pick<ApprovalRecord, 'id' | 'step'>, kind: TimerStep): string {
  return `approval-${kind}-${record.id}-${record.step}`;
}
