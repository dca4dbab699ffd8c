// Human approval: a call a require_approval rule holds is recorded on its thread (approval-requests.ts), decided by
// its approvers (approval-approvers.ts, approval-decisions.ts), and (once approved) applied exactly once as the
// original actor, each step one versioned thread write; reminders and timeouts in approval-timers.ts. What they share.
import { describeApprovers, type ApprovalRecord, type VoteRefusal } from '../domain/approval';
import type { AgentDoc, OutboxEvent, ThreadDoc } from '../domain/documents';
import { RelayError } from '../domain/errors';
import type { PolicyAction, PolicyRule } from '../domain/policy';
import type { EventType } from '../domain/schemas';
import type { ApprovalView } from './wire-views';

export type ApprovalRule = Extract<PolicyRule, { effect: 'require_approval' }>;

/** The `verify` queue job that fires an approval's reminder or timeout. */
export const APPROVAL_TIMER_JOB = 'approval-timer';

/**
 * Applies an approved non-create call to the thread as its actor: the next thread (with the call's event in its
 * outbox), or why it no longer applies (transitions.ts).
 */
export type ApplyApproved = (
  doc: ThreadDoc,
  record: ApprovalRecord,
  actor: AgentDoc,
  emit: (type: EventType) => OutboxEvent,
  now: Date,
) => { next: ThreadDoc; type: EventType } | { refusal: string };

/** How approved calls are applied and re-checked, given to the decisions when they are built (approved-calls.ts). */
export interface ApprovalAppliers {
  /** An approved transition, in the thread write that records the approval. */
  transition: ApplyApproved;
  /**
   * An approved message.append or draft.attach, appended as its actor through the normal append (or an approved
   * handoff.run, queued as its actor): exactly once
   * per approval however often it is asked (the approval id is its idempotency key). What was appended, or why not.
   */
  message: (
    doc: ThreadDoc,
    record: ApprovalRecord,
    actor: AgentDoc,
  ) => Promise<{ message: string } | { refusal: string }>;
  /** The policy in force now, asked about the approved call: why it no longer lets it through (a rule now denies it), or null. */
  recheck: (doc: ThreadDoc, record: ApprovalRecord, actor: AgentDoc) => Promise<string | null>;
}

/** The held calls applied after their approval (an append, a run queued), not in the approval's own thread write. */
export function isAppliedAfterApproval(action: PolicyAction): boolean {
  return action === 'message.append' || action === 'draft.attach' || action === 'handoff.run';
}

/** What a decision did, for whoever made it (Slack, the CLI, the API). */
export interface DecisionAnswer {
  approval: ApprovalView;
  /** One sentence: what changed, or why nothing did. */
  message: string;
  changed: boolean;
  /** Why nothing changed, when a vote was refused. */
  refusal?: VoteRefusal;
}

/** The approval_pending error: the call is held, nothing changed; data names the approval and who must approve. */
export function approvalPending(record: ApprovalRecord): RelayError {
  return new RelayError(
    'approval_pending',
    `Policy rule ${record.rule_id} holds ${record.action} for approval by ${describeApprovers(record.approvers)} (approval ${record.id}); nothing was changed. ` +
      'Waiting for a person is normal: check_approval tells where it stands, and the call is applied once approved.',
    {
      approval_id: record.id,
      approvers: describeApprovers(record.approvers).split(', '),
      quorum: record.quorum,
      rule_id: record.rule_id,
      policy_version: record.policy_version,
    },
  );
}
