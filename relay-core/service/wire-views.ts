// What a participant reads back: the thread in the wire shape (snake_case, ISO 8601 timestamps; docs/jsonrpc.md describes it).
import type { Verdict } from '../domain/acceptance-verdict';
import { describeApprovers, type ApprovalRecord } from '../domain/approval';
import type { AgentDoc, MessageDoc, ThreadDoc } from '../domain/documents';
import type { Artifact, ProposedAction, Surface, ThreadStatus } from '../domain/schemas';

export interface PartyView {
  handle: string;
  name: string;
  role: string;
}

export interface ThreadView {
  thread_id: string;
  intent: ThreadDoc['intent'];
  status: ThreadStatus;
  sender: PartyView;
  recipient: PartyView;
  summary: string;
  question: string | null;
  artifacts: Artifact[];
  metadata: Record<string, unknown>;
  proposed_action: ProposedAction | null;
  messages: MessageView[];
  completion_artifacts: Artifact[];
  completed_summary: string | null;
  decline_reason: string | null;
  status_history: Array<{ status: ThreadStatus; by: string; at: string; via: Surface }>;
  created_at: string;
  updated_at: string;
  accepted_at: string | null;
  completed_at: string | null;
  declined_at: string | null;
  cancelled_at: string | null;
  /** Only on an expired handoff (the timers' final state). */
  expired_at?: string;
  /** Only on an expired handoff its sender resent: the new handoff's thread id. */
  resent_as?: string;
  /** Only on an ask_question handoff its recipient answered: when, and the sequence_no of the answering message. */
  answered_at?: string;
  answer_sequence_no?: number;
  inbox_url: string;
  /** Handoffs sent to a role, skill or owner: the target, who it named, and who claimed it (absent otherwise). */
  to_target?: string;
  candidates?: string[];
  claimed_by?: string | null;
  claimed_at?: string | null;
  /** The recipient's view only: the single-use token that accept_handoff / tasks/update accept may present. */
  handoff_token?: string;
  handoff_token_expires_at?: string;
  /** Present once an approver rejected the create (status `rejected`). */
  reject_reason?: string | null;
  /** Approvals asked for on this thread; present only when there are any. */
  approvals?: ApprovalView[];
}

/** An approval as its actor, the thread's participants and its approvers read it. */
export interface ApprovalView {
  approval_id: string;
  thread_id: string;
  action: string;
  actor: string;
  status: ApprovalRecord['status'];
  /** Who may approve, as the policy resolved them (handles, or Slack user ids). */
  approvers: string[];
  quorum: number;
  approved_by: string[];
  rule_id: string;
  policy_version: string;
  reason: string | null;
  decided_by: string | null;
  decided_at: string | null;
  outcome: { applied: boolean; message: string } | null;
  created_at: string;
  deadline: string;
  on_timeout: 'deny' | 'escalate';
  history: Array<{ at: string; what: string; by?: string; note?: string }>;
}

export function approvalView(threadId: string, record: ApprovalRecord): ApprovalView {
  return {
    approval_id: record.id,
    thread_id: threadId,
    action: record.action,
    actor: record.actor,
    status: record.status,
    approvers: describeApprovers(record.approvers).split(', '),
    quorum: record.quorum,
    approved_by: record.approvals.map((v) => v.by),
    rule_id: record.rule_id,
    policy_version: record.policy_version,
    reason: record.reason,
    decided_by: record.decided_by,
    decided_at: record.decided_at ? record.decided_at.toISOString() : null,
    outcome: record.outcome,
    created_at: record.created_at.toISOString(),
    deadline: record.deadline.toISOString(),
    on_timeout: record.on_timeout,
    history: record.history.map((h) => ({
      at: h.at.toISOString(),
      what: h.what,
      ...(h.by ? { by: h.by } : {}),
      ...(h.note ? { note: h.note } : {}),
    })),
  };
}

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

function party(handle: string, agent: AgentDoc | null): PartyView {
  return { handle, name: agent?.name ?? handle, role: agent?.role ?? '' };
}

/** A stored message as the wire shows it: the document without its storage keys, the time as ISO text. */
export type MessageView = Omit<MessageDoc, '_id' | 'thread_id' | 'created_at' | 'idempotency_id'> & {
  created_at: string;
};

export function messageView(doc: MessageDoc): MessageView {
  return {
    id: doc.id,
    sequence_no: doc.sequence_no,
    from: doc.from,
    body: doc.body,
    payload: doc.payload,
    artifacts: doc.artifacts,
    via: doc.via,
    created_at: doc.created_at.toISOString(),
  };
}

export function threadView(
  doc: ThreadDoc,
  agents: { from: AgentDoc | null; to: AgentDoc | null },
  messages: MessageView[],
  inboxUrl: string,
): ThreadView {
  return {
    thread_id: doc._id,
    intent: doc.intent,
    status: doc.status,
    sender: party(doc.from, agents.from),
    recipient: party(doc.to, agents.to),
    summary: doc.summary,
    question: doc.question,
    artifacts: doc.artifacts,
    metadata: doc.question === null ? doc.metadata : { ...doc.metadata, question: doc.question },
    proposed_action: doc.proposed_action,
    messages,
    completion_artifacts: doc.completion_artifacts,
    completed_summary: doc.completed_summary,
    decline_reason: doc.decline_reason,
    status_history: doc.status_history.map((h) => ({ status: h.status, by: h.by, at: h.at.toISOString(), via: h.via })),
    created_at: doc.created_at.toISOString(),
    updated_at: doc.updated_at.toISOString(),
    accepted_at: iso(doc.accepted_at),
    completed_at: iso(doc.completed_at),
    declined_at: iso(doc.declined_at),
    cancelled_at: iso(doc.cancelled_at),
    ...(doc.expired_at ? { expired_at: doc.expired_at.toISOString() } : {}),
    ...(doc.resent_as ? { resent_as: doc.resent_as } : {}),
    ...(doc.answered_at
      ? {
          answered_at: doc.answered_at.toISOString(),
          ...(doc.answer_seq ? { answer_sequence_no: doc.answer_seq } : {}),
        }
      : {}),
    inbox_url: inboxUrl,
    ...(doc.to_target
      ? {
          to_target: doc.to_target,
          candidates: doc.candidates ?? [],
          claimed_by: doc.claimed_by ?? null,
          claimed_at: iso(doc.claimed_at ?? null),
        }
      : {}),
    ...(doc.status === 'rejected' ? { reject_reason: doc.reject_reason ?? null } : {}),
    ...(doc.approvals?.length ? { approvals: doc.approvals.map((a) => approvalView(doc._id, a)) } : {}),
  };
}

/** The thread after a transition, by the status it reached: that status's timestamp, and what completing handed back. */
export type TransitionView =
  | { thread_id: string; status: 'pending' | 'unclaimed' }
  | { thread_id: string; status: 'accepted'; accepted_at: string | null }
  | { thread_id: string; status: 'completed'; completed_at: string | null; completion_artifacts: Artifact[] }
  | { thread_id: string; status: 'declined'; declined_at: string | null }
  | { thread_id: string; status: 'cancelled'; cancelled_at: string | null }
  | { thread_id: string; status: 'awaiting_approval' }
  | { thread_id: string; status: 'rejected' }
  | { thread_id: string; status: 'expired'; expired_at: string | null };

/** An accept the verdict refused: nothing changed, the verdict says why. */
export type RefusedAccept = { thread_id: string; status: ThreadStatus; accepted_at: null } & Verdict & {
    accepted: false;
  };

/**
 * What a transition answers: the view; after an accept with verdict inputs, the view with the passed verdict;
 * or the refusal. `accepted` tells them apart (absent on the plain view).
 */
export type TransitionAnswer =
  (TransitionView & { accepted?: never }) | (TransitionView & Verdict & { accepted: true }) | RefusedAccept;

export function transitionView(doc: ThreadDoc): TransitionView {
  switch (doc.status) {
    case 'accepted':
      return { thread_id: doc._id, status: doc.status, accepted_at: iso(doc.accepted_at) };
    case 'completed':
      return {
        thread_id: doc._id,
        status: doc.status,
        completed_at: iso(doc.completed_at),
        completion_artifacts: doc.completion_artifacts,
      };
    case 'declined':
      return { thread_id: doc._id, status: doc.status, declined_at: iso(doc.declined_at) };
    case 'cancelled':
      return { thread_id: doc._id, status: doc.status, cancelled_at: iso(doc.cancelled_at) };
    case 'expired':
      return { thread_id: doc._id, status: doc.status, expired_at: iso(doc.expired_at ?? null) };
    default:
      return { thread_id: doc._id, status: doc.status };
  }
}

export interface ListItem {
  thread_id: string;
  sender: PartyView;
  recipient: PartyView;
  summary_preview: string;
  intent: ThreadDoc['intent'];
  status: ThreadStatus;
  unread_messages: number;
  /** Only on an ask_question handoff its recipient answered. */
  answered_at?: string;
  created_at: string;
  updated_at: string;
}

const PREVIEW_CHARS = 200;

export function listItem(
  doc: Pick<ThreadDoc, '_id' | 'from' | 'to' | 'summary' | 'intent' | 'status' | 'created_at' | 'updated_at'> &
    Pick<Partial<ThreadDoc>, 'answered_at'>,
  agents: Map<string, AgentDoc | null>,
  unread: number,
): ListItem {
  return {
    thread_id: doc._id,
    sender: party(doc.from, agents.get(doc.from) ?? null),
    recipient: party(doc.to, agents.get(doc.to) ?? null),
    summary_preview: doc.summary.length > PREVIEW_CHARS ? `${doc.summary.slice(0, PREVIEW_CHARS - 1)}…` : doc.summary,
    intent: doc.intent,
    status: doc.status,
    unread_messages: unread,
    ...(doc.answered_at ? { answered_at: new Date(doc.answered_at).toISOString() } : {}),
    created_at: doc.created_at.toISOString(),
    updated_at: doc.updated_at.toISOString(),
  };
}
