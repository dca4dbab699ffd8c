// The thread lifecycle rules: intent requirements, transitions, who may make them, and why one was refused.
import { canonicalHash } from './canonical-json';
import type { AgentDoc, ThreadDoc } from './documents';
import { RelayError } from './errors';
import {
  TERMINAL_STATUSES,
  withCanonicalLines,
  type EventType,
  type Intent,
  type NewHandoff,
  type Surface,
  type ThreadStatus,
  type TransitionName,
} from './schemas';

export interface TransitionRule {
  from: readonly ThreadStatus[];
  to: ThreadStatus;
  actor: 'from' | 'to';
  event: EventType;
  stamp: 'accepted_at' | 'completed_at' | 'declined_at' | 'cancelled_at';
}

export const TRANSITIONS: Record<TransitionName, TransitionRule> = {
  accept: { from: ['pending'], to: 'accepted', actor: 'to', event: 'thread.accepted', stamp: 'accepted_at' },
  complete: { from: ['accepted'], to: 'completed', actor: 'to', event: 'thread.completed', stamp: 'completed_at' },
  decline: { from: ['pending'], to: 'declined', actor: 'to', event: 'thread.declined', stamp: 'declined_at' },
  cancel: {
    from: ['pending', 'accepted', 'unclaimed', 'awaiting_approval'],
    to: 'cancelled',
    actor: 'from',
    event: 'thread.cancelled',
    stamp: 'cancelled_at',
  },
};

/** A field of a new handoff that its intent does not allow (or requires and lacks), with the one wording every surface shows. */
export interface IntentProblem {
  field: 'proposed_action' | 'question';
  message: string;
}

/**
 * The intent rules: propose_action needs a proposed_action and no other intent may carry one; a question
 * belongs only to ask_question. Empty when the handoff is consistent.
 */
export function intentProblems(input: {
  intent: Intent;
  proposed_action?: unknown;
  question?: unknown;
}): IntentProblem[] {
  const problems: IntentProblem[] = [];
  const hasAction = input.proposed_action !== undefined && input.proposed_action !== null;
  if (input.intent === 'propose_action' && !hasAction) {
    problems.push({ field: 'proposed_action', message: 'proposed_action is required when intent is "propose_action"' });
  }
  if (input.intent !== 'propose_action' && hasAction) {
    problems.push({
      field: 'proposed_action',
      message: `proposed_action is only allowed when intent is "propose_action" (got "${input.intent}")`,
    });
  }
  if (input.intent !== 'ask_question' && input.question !== undefined) {
    problems.push({
      field: 'question',
      message: `question is only allowed when intent is "ask_question" (got "${input.intent}")`,
    });
  }
  return problems;
}

/**
 * A new handoff's thread, pending, with its thread.created event in the outbox. The body hash (what a retry
 * under the same key must match, and what the handoff token is bound to) covers exactly what the sender said.
 */
export function newPendingThread(
  fields: {
    id: string;
    sender: AgentDoc;
    recipient: AgentDoc;
    input: NewHandoff;
    via: Surface;
    now: Date;
    eventId: string;
  },
  handoffToken: (bodyHash: string) => ThreadDoc['handoff_token'],
): ThreadDoc {
  const { id, sender, recipient, input, via, now } = fields;
  const body = {
    from: sender.handle,
    to: recipient.handle,
    intent: input.intent,
    summary: input.summary,
    question: input.question ?? null,
    proposed_action: input.proposed_action ?? null,
    artifacts: input.artifacts,
    metadata: input.metadata,
  };
  const bodyHash = canonicalHash(withCanonicalLines(body));
  return {
    _id: id,
    version: 1,
    team: recipient.team,
    ...body,
    status: 'pending',
    status_history: [{ status: 'pending', by: sender.handle, at: now, via }],
    request_hash: bodyHash,
    body_hash: bodyHash,
    completed_summary: null,
    completion_artifacts: [],
    decline_reason: null,
    cancel_reason: null,
    created_at: now,
    updated_at: now,
    accepted_at: null,
    completed_at: null,
    declined_at: null,
    cancelled_at: null,
    message_seq: 0,
    message_counts: { from: 0, to: 0 },
    outbox: [{ id: fields.eventId, type: 'thread.created', at: now, by: sender.handle, via }],
    slack: null,
    handoff_token: handoffToken(bodyHash),
  };
}

export function assertParticipant(caller: AgentDoc, doc: ThreadDoc): void {
  if (doc.from !== caller.handle && doc.to !== caller.handle) {
    throw new RelayError('not_a_participant', `${caller.handle} is not a participant of thread ${doc._id}`);
  }
  // A handoff held for approval does not exist for its recipient yet (nor does one rejected before it was approved).
  if (doc.hidden_from_recipient && doc.to === caller.handle && doc.from !== caller.handle) {
    throw new RelayError('thread_not_found', `No thread ${doc._id}`);
  }
}

/** Whether the recipient may see the thread (Slack, webhooks, lists, reads). */
export function visibleToRecipient(doc: Pick<ThreadDoc, 'hidden_from_recipient'>): boolean {
  return !doc.hidden_from_recipient;
}

/** The thread's state version: its number of status changes. Approvals bind to it (Slack bookkeeping writes do not change it). */
export function stateVersion(doc: Pick<ThreadDoc, 'status_history'>): number {
  return doc.status_history.length;
}

/**
 * True when a transition asks for the status the thread is already in, from the party who put it there: accept
 * after accept by the recipient, complete after complete with the same result, decline after decline, cancel
 * after cancel. It is answered with the current state and changes nothing, so a client that lost an answer and
 * asks again is never told it failed. A request made against a status someone was shown (a Slack button's
 * expected_status) is never a repeat: Slack explains a second click instead.
 */
export function isRepeatedTransition(
  caller: AgentDoc,
  request: {
    transition: TransitionName;
    expected_status?: ThreadStatus;
    result_summary?: string;
    artifacts?: unknown[];
  },
  rule: TransitionRule,
  doc: ThreadDoc,
): boolean {
  if (request.expected_status !== undefined || doc.status !== rule.to || doc[rule.actor] !== caller.handle)
    return false;
  const last = doc.status_history[doc.status_history.length - 1];
  if (last?.status !== rule.to || last.by !== caller.handle) return false;
  if (request.transition !== 'complete') return true;
  return (
    doc.completed_summary === (request.result_summary ?? null) &&
    canonicalHash(withCanonicalLines(doc.completion_artifacts)) ===
      canonicalHash(withCanonicalLines(request.artifacts ?? []))
  );
}

/** Why a transition wrote nothing, judged on the thread as it was last read (null: it does not exist). */
export function explainFailedTransition(
  caller: AgentDoc,
  request: { thread_id: string; transition: TransitionName; expected_status?: ThreadStatus },
  rule: TransitionRule,
  doc: ThreadDoc | null,
): RelayError {
  if (!doc) return new RelayError('thread_not_found', `No thread ${request.thread_id}`);
  assertParticipant(caller, doc);
  if (doc[rule.actor] !== caller.handle) {
    const who = rule.actor === 'to' ? `the recipient (${doc.to})` : `the sender (${doc.from})`;
    return new RelayError('not_authorized_transition', `Only ${who} can ${request.transition} this handoff`);
  }
  if (request.expected_status && doc.status !== request.expected_status) {
    return new RelayError(
      'state_changed',
      `The handoff is now ${doc.status} (it was ${request.expected_status} when this was shown)`,
      { status: doc.status },
    );
  }
  if (TERMINAL_STATUSES.includes(doc.status)) {
    return new RelayError('thread_terminal', `The handoff is already ${doc.status}`, { status: doc.status });
  }
  return new RelayError('invalid_transition', `Cannot ${request.transition} a handoff that is ${doc.status}`, {
    status: doc.status,
  });
}
