// The shapes stored in MongoDB: agents, api_keys, slack_links, threads.
import type { Artifact, EventType, Intent, ProposedAction, Surface, ThreadStatus } from './schemas';

export interface AgentDoc {
  _id: string; // the handle
  handle: string;
  team: string;
  name: string;
  role: string;
  skills: string[];
  repos_owned: string[];
  tools: string[];
  slack_user_id: string | null;
  status: 'active' | 'disabled';
  created_at: Date;
  updated_at: Date;
}

export interface ApiKeyDoc {
  _id: string; // HMAC of the key
  key_id: string;
  handle: string;
  created_at: Date;
}

export interface SlackLinkDoc {
  _id: string; // Slack user id
  handle: string;
  created_at: Date;
}

export interface OutboxEvent {
  id: string;
  type: EventType;
  at: Date;
  by: string;
  via: Surface;
}

export interface StatusChange {
  status: ThreadStatus;
  by: string;
  at: Date;
  via: Surface;
}

export interface SlackDelivery {
  channel: string;
  ts: string;
  posted_at: Date;
}

export interface ThreadDoc {
  _id: string;
  /** Bumped by every write; the write to version N is claimed first in `thread_writes` (see mongo-store.ts). */
  version: number;
  team: string;
  from: string;
  to: string;
  intent: Intent;
  summary: string;
  question: string | null;
  proposed_action: ProposedAction | null;
  artifacts: Artifact[];
  metadata: Record<string, unknown>;
  status: ThreadStatus;
  status_history: StatusChange[];
  request_hash: string;
  body_hash: string;
  completed_summary: string | null;
  completion_artifacts: Artifact[];
  decline_reason: string | null;
  cancel_reason: string | null;
  created_at: Date;
  updated_at: Date;
  accepted_at: Date | null;
  completed_at: Date | null;
  declined_at: Date | null;
  cancelled_at: Date | null;
  outbox: OutboxEvent[];
  /** true while some event in `outbox` may not be on its queue yet; the sweep enqueues them and clears it. */
  outbox_dirty: boolean;
  slack: SlackDelivery | null;
}

/** The claim on one version of a thread: the first insert of `${thread_id}:${version}` owns that write. */
export interface ThreadWriteDoc {
  _id: string;
  thread_id: string;
  version: number;
  /** The whole new document, so anyone can finish a write whose writer died between claim and replace. */
  doc: ThreadDoc;
  at: Date;
}
