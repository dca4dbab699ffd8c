// What a participant reads back: the thread in the wire shape of WIRE.md (snake_case, ISO timestamps).
import type { AgentDoc, ThreadDoc } from './documents';
import type { Artifact, ProposedAction, Surface, ThreadStatus } from './schemas';

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
  messages: Array<{ id: string; sequence_no: number; from: string; body: string; artifacts: Artifact[]; created_at: string }>;
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
  inbox_url: string;
}

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

function party(handle: string, agent: AgentDoc | null): PartyView {
  return { handle, name: agent?.name ?? handle, role: agent?.role ?? '' };
}

export function threadView(doc: ThreadDoc, agents: { from: AgentDoc | null; to: AgentDoc | null }, inboxUrl: string): ThreadView {
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
    messages: [],
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
    inbox_url: inboxUrl,
  };
}

export function transitionView(doc: ThreadDoc): Record<string, unknown> {
  switch (doc.status) {
    case 'accepted':
      return { thread_id: doc._id, status: doc.status, accepted_at: iso(doc.accepted_at) };
    case 'completed':
      return { thread_id: doc._id, status: doc.status, completed_at: iso(doc.completed_at), completion_artifacts: doc.completion_artifacts };
    case 'declined':
      return { thread_id: doc._id, status: doc.status, declined_at: iso(doc.declined_at) };
    case 'cancelled':
      return { thread_id: doc._id, status: doc.status, cancelled_at: iso(doc.cancelled_at) };
    default:
      return { thread_id: doc._id, status: doc.status };
  }
}
