// The shapes stored in MongoDB: agents, api_keys, slack_links, threads.
import type { HandoffTokenRecord } from './acceptance-verdict';
import type { ApprovalRecord } from './approval';
import type { RunStatus, ThreadRun } from './run';
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
  /** The teammate's lead (a handle), set with the card; absent or null when none. */
  lead?: string | null;
  status: 'active' | 'disabled';
  /** Handles this teammate blocks: no new handoff or message between them, in either direction. */
  blocked: string[];
  /** Where this teammate's events are signed and POSTed; private, never in a public read. */
  notification: NotificationEndpoint | null;
  created_at: Date;
  updated_at: Date;
  /** Bumped by every write (absent until the first one). */
  version?: number;
}

export interface NotificationEndpoint {
  url: string;
  /** `whsec_` + base64 of 32 random bytes (Standard Webhooks); returned once when set. */
  secret: string;
  /** The secret a rotation replaced, still signed with until `previous_secret_expires_at` (both are accepted meanwhile). */
  previous_secret?: string | null;
  previous_secret_expires_at?: Date | null;
  verified: boolean;
  updated_at: Date;
  /** Set when the receiver answered 410 Gone: nothing more is sent until a new URL is set. */
  disabled_at?: Date | null;
}

/** The secrets a delivery to `endpoint` is signed with at `now`: the current one, then a previous one still in its overlap. */
export function signingSecrets(endpoint: NotificationEndpoint, now: Date): string[] {
  const previous =
    endpoint.previous_secret && endpoint.previous_secret_expires_at && endpoint.previous_secret_expires_at > now
      ? [endpoint.previous_secret]
      : [];
  return [endpoint.secret, ...previous];
}

export interface ApiKeyDoc {
  _id: string; // HMAC of the key
  key_id: string;
  handle: string;
  created_at: Date;
}

/** An invitation to join (service/invites.ts): only the code's keyed hash is stored; `status` moves once, from `open`. */
export interface InviteDoc {
  _id: string; // the invite id, the non-secret part of its code
  token_hash: string;
  status: 'open' | 'redeemed' | 'revoked';
  /** What the invitee's card starts from: `team` binds the handle's team, `role` and `lead` are set, `skills` and
   * `repos_owned` are added to the invitee's own. */
  preset: { team?: string; role?: string; skills?: string[]; repos_owned?: string[]; lead?: string };
  note?: string;
  /** `admin` for the admin key, or the Slack user id of a workspace admin. */
  created_by: string;
  created_at: Date;
  expires_at: Date;
  redeemed_at?: Date;
  /** The handle of the teammate the redemption registered. */
  redeemed_by?: string;
  /** While a redemption registers its teammate: after this, a redemption whose process died is taken over. */
  redeeming_until?: Date;
  revoked_at?: Date;
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
  /** For thread.message: which message. */
  message_id?: string;
  /** For run.* events: which run, and its status after the event. */
  run_id?: string;
  run_status?: RunStatus;
}

export interface MessageDoc {
  _id: string; // `${thread_id}:${sequence_no}`: the unique key that allocates sequence numbers
  id: string;
  thread_id: string;
  sequence_no: number;
  from: string;
  body: string;
  payload: Record<string, unknown>;
  artifacts: Artifact[];
  via: Surface;
  created_at: Date;
  /** The idempotency ledger id of the keyed append that wrote it (how a retaken key finds a dead owner's message). */
  idempotency_id?: string;
}

/** One mutating call's outcome under a caller's idempotency key. */
export interface IdempotencyDoc {
  _id: string; // idempotentId(caller, scope, key)
  request_hash: string;
  state: 'running' | 'done';
  result?: unknown;
  error?: { code: string; message: string; details?: unknown };
  created_at: Date;
}

export interface StatusChange {
  status: ThreadStatus;
  by: string;
  at: Date;
  via: Surface;
  /** The policy decision that let this change through (absent on threads older than policies). */
  policy?: PolicyStamp;
}

/** Which rule decided a call, with what effect, under which policy version. */
export interface PolicyStamp {
  rule_id: string | null;
  effect: 'allow' | 'deny' | 'rate_limit' | 'require_approval';
  policy_version: string;
}

/** The policy in force (`_id: "current"`), as YAML; every process reads it by `_id`. */
export interface PolicyDoc {
  _id: string;
  source: string;
  version: string;
  applied_at: Date;
  applied_by: string;
}

/** A call the policy refused, with why; `_id` starts with the time so the newest sort last. */
export interface PolicyAuditDoc {
  _id: string;
  at: Date;
  action: string;
  actor: string;
  sender: string;
  recipient: string;
  via: Surface;
  thread_id: string | null;
  session_id: string | null;
  rule_id: string | null;
  effect: PolicyStamp['effect'];
  policy_version: string;
  /** admin_on_behalf: the admin key decided an approval as one of its approvers (`approvals approve ID --as WHO`). */
  outcome: 'denied' | 'rate_limited' | 'admin_on_behalf';
  reason: string;
}

export interface SlackDelivery {
  channel: string;
  ts: string;
  posted_at: Date;
  /**
   * A digest of what the relay last drew on it (bot/delivery/slack-posts.ts messageDigest), so a sync redraws it
   * only when that changes; absent when unknown (found by its marker, or recorded before digests): redrawn.
   */
  shown?: string;
}

/**
 * A Slack post the `slack` queue claimed before sending it (see bot/delivery/exactly-once-post.ts): a retry that finds
 * it without a recorded ts looks the message up by `marker` (sent as message metadata) before posting again.
 */
export interface SlackPendingPost {
  /** Random, fixed for the post's lifetime: the message's metadata carries it. */
  marker: string;
  /** Random, new on every (re)claim: the compare-and-set token for taking the claim over. */
  lease: string;
  channel: string;
  /** A thread reply's parent (the DM's ts); null for a DM. */
  thread_ts: string | null;
  /** The BullMQ job holding the claim; others wait until it is older than the lease before taking it over. */
  owner: string;
  /** When the post was first claimed (the message, if sent, is not older than this). */
  claimed_at: Date;
  /** When the current owner claimed it. */
  at: Date;
}

export interface ThreadDoc {
  _id: string;
  /** Bumped by every write (see store/thread-writes.ts). */
  version: number;
  /** Set once the task had an A2A push notification config: only then does an event's fan-out read its configs. */
  push_configs?: true;
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
  /** Set when the handoff expired (domain/timer-schedule.ts); absent on threads older than expiry. */
  expired_at?: Date | null;
  /** The timer steps this thread went through (service/handoff-timers.ts); absent until the first one. */
  timers?: ThreadTimers;
  /** The step armed next (service/handoff-timers.ts); absent once none is left. */
  next_timer?: ArmedStep;
  /** When `next_timer` is due: a top-level field, so that the threads' `due` index serves the timer sweep. */
  next_due_at?: Date;
  /**
   * The version whose write armed `next_timer` itself, needing no job for it yet (a step due later than the job
   * horizon): the event of that version goes out without an arm job.
   */
  timer_version?: number;
  /** The handoff a Resend of this expired one created (its metadata carries `resent_from`). */
  resent_as?: string;
  /** Earlier recipients of a reassigned handoff, with the DM each was shown (redrawn once to say so). */
  reassigned_from?: ReassignedFrom[];
  /** The last message's sequence_no; messages are `${thread_id}:${sequence_no}` in `messages`. */
  message_seq: number;
  /** Messages written by each side, for unread counts: `from` by the sender, `to` by the recipient. */
  message_counts: { from: number; to: number };
  outbox: OutboxEvent[];
  /** The jobs of its events that have not finished yet, `<queue>:<event id>` (store/outbox-ledger.ts); absent when none. */
  jobs_pending?: string[];
  /** Since when `jobs_pending` has held jobs: a top-level field, so that the threads' `outbox` index serves the sweep. */
  pending_since?: Date;
  /** Previous layout only (the migration moves it into `outbox_entries`): events that might not be on a queue yet. */
  outbox_dirty?: boolean;
  /** Previous layout only: how many of `outbox`'s events the old sweep had seen on their queues. */
  outbox_enqueued?: number;
  /** Sent to a role, skill or owner (`role:frontend`): the target as given (absent on handoffs to a handle). */
  to_target?: string | null;
  /** The teammates the target named (several: the thread was `unclaimed` until one claimed it). */
  candidates?: string[];
  claimed_by?: string | null;
  claimed_at?: Date | null;
  /**
   * 1 exactly while the thread is unclaimed (store/thread-lists.ts `claimable`, set by the store on every write): the
   * index candidates' lists read it through holds only those threads.
   */
  claimable?: 1;
  /** Claim cards of an unclaimed thread: `channel` (the bound channel's card) or a candidate's Slack user id → its post. */
  slack_claims?: Record<string, SlackDelivery>;
  slack: SlackDelivery | null;
  /** The sender's DM for this handoff, when the sender is linked to Slack (absent on old threads). */
  slack_sender?: SlackDelivery | null;
  /** Thread replies posted under the DMs: `${audience}:${sequence_no}` → ts (see bot/delivery/slack-posts.ts). */
  slack_replies?: Record<string, string>;
  /** Posts claimed but not recorded yet, by the same keys ('recipient', 'sender', `${audience}:${n}`). */
  slack_pending?: Record<string, SlackPendingPost>;
  /**
   * The handoff token (SHA-256 only; `nonce` lets the relay re-derive the token under its secret for the
   * recipient's view). Consumed inside the same versioned write that accepts the thread. Absent on old threads.
   */
  handoff_token?: (HandoffTokenRecord & { nonce: string }) | null;
  /**
   * True while the recipient must not see the thread: a create held for approval (and one rejected or cancelled
   * before it was approved). Lists, reads, Slack and webhooks leave the recipient out while it is set.
   */
  hidden_from_recipient?: boolean;
  /**
   * How many of the other side's messages each reader has seen (unread counts), by store/read-marks.ts `readerKey`:
   * on the thread, so a list page has them without another read. Only ever raised (`$max`), beside the versioned writes.
   */
  reads?: Record<string, number>;
  /** Why an approver rejected the create (status `rejected`). */
  reject_reason?: string | null;
  rejected_at?: Date | null;
  /** Approvals asked for on this thread (domain/approval.ts), oldest first; decided in the thread's own writes. */
  approvals?: ApprovalRecord[];
  /** Approvers' Slack DMs: `approval:${approval_id}:${slack_user}` → the DM. */
  slack_approvals?: Record<string, SlackDelivery>;
  /**
   * An ask_question handoff its recipient answered: when their first reply (a message, not a run's progress) was
   * recorded, and its sequence_no. Its reminders and escalation stop (domain/timer-schedule.ts); absent until then.
   */
  answered_at?: Date | null;
  answer_seq?: number | null;
  /** The handoff's latest run by the recipient's agent (service/handoff-runs.ts); absent until one is asked for. */
  run?: ThreadRun | null;
}

/** The admin listing of approvals (`_id` is the approval id); the thread's own record is the truth, this only finds it. */
export interface ApprovalIndexDoc {
  _id: string;
  thread_id: string;
  status: ApprovalRecord['status'];
  action: string;
  actor: string;
  approvers: string[];
  created_at: Date;
  deadline: Date;
  /** 1 while the approval is open (pending, or approved and not yet applied): the `open` index serves the sweep. */
  open?: 1;
}

/** A timer step: `remind-1`, `remind-2`, … (snoozes add more), `escalate`, `stale` (accepted), `expire`. */
export type TimerStep = `remind-${number}` | 'escalate' | 'stale' | 'expire';

/** Where an escalation went: the recipient's lead, the configured channel, or back to the sender. */
export interface EscalationTarget {
  kind: 'lead' | 'channel' | 'sender';
  /** The lead's or sender's handle. */
  handle?: string;
  /** The lead's or sender's Slack user, or the channel id. */
  slack?: string | null;
}

export interface ThreadTimers {
  /** Each step that fired, once, with when. */
  fired: Partial<Record<TimerStep, Date>>;
  /** The recipient asked for the next reminder at this time (Snooze); cleared when it fires. */
  snoozed_until?: Date | null;
  escalated_to?: EscalationTarget | null;
  /** Why it expired: its handoff token ran out, or it was pending past expire_after. */
  expire_reason?: 'token_expired' | 'expire_after';
  /** The schedule counts from here: the thread's creation, its claim, or its last reassignment. */
  since?: Date;
  /** The steps that fired while the handoff waited unclaimed, kept when a claim started the schedule over. */
  unclaimed_fired?: Partial<Record<TimerStep, Date>>;
}

export interface ReassignedFrom {
  handle: string;
  slack: SlackDelivery | null;
  at: Date;
  by: string;
  /** The old DM was redrawn to say it moved. */
  redrawn?: boolean;
}

/** A thread's armed step as the timers work with it: its `next_timer` and `next_due_at`, `_id` = the thread's. */
export interface TimerDoc {
  _id: string;
  step: TimerStep;
  due_at: Date;
  /** Bumped whenever the step is armed anew (a moved due time, a job that ran early): part of the job id. */
  attempt: number;
  status: ThreadStatus;
  armed_at: Date;
}

/** What a thread document holds of its armed step (ThreadDoc.next_timer; the due time is `next_due_at`). */
export type ArmedStep = Omit<TimerDoc, '_id' | 'due_at'>;

/** Up to layout 5, an event whose jobs had not finished (store/migrate.ts moves them onto their threads). `_id` is the event id. */
export interface OutboxEntryDoc {
  _id: string;
  thread_id: string;
  event: OutboxEvent;
  at: Date;
  /**
   * The queues whose job of this event has not finished yet (EventPublisher.queues when written); each worker takes
   * its queue out as its job finishes, and the entry goes with the last. Absent on entries of an earlier layout.
   */
  jobs?: string[];
}

/** A role, skill or owner target bound to a Slack channel: unclaimed handoffs to it are posted there (`_id` is the target). */
export interface ChannelBindingDoc {
  _id: string;
  /** The same as `_id`, for readers that do not know the convention. */
  target: string;
  channel: string;
  bound_by: string;
  at: Date;
}

/** Small named values of the store: the schema version, the agents change marker. */
export interface MetaDoc {
  _id: string;
  value: unknown;
  at: Date;
}

/** One attempt to POST a webhook: its outcome, never the URL or the secret. */
export interface WebhookAttempt {
  at: Date;
  outcome: 'delivered' | 'failed' | 'held' | 'gone';
  http_status: number | null;
  error: string | null;
}

/** One event owed to one teammate's endpoint (`_id` = `${event_id}.${handle}`, also the `webhook-id`). */
export interface WebhookDeliveryDoc {
  _id: string;
  event_id: string;
  event_type: EventType;
  thread_id: string;
  handle: string;
  /** pending: attempts remain; delivered: a 2xx was received; failed: the dead letter; gone: the endpoint answered 410; skipped: no endpoint any more. */
  status: 'pending' | 'delivered' | 'failed' | 'gone' | 'skipped';
  attempts: WebhookAttempt[];
  /** How often a person re-drove it; each re-drive runs as job `${_id}.r${redrives}`. */
  redrives: number;
  /** An A2A push notification config of the task this goes to (its id), instead of `handle`'s card webhook. */
  push_config?: string;
  /** The event delivered, for a re-drive long after its thread stopped holding it; absent on deliveries opened before it was added. */
  event?: OutboxEvent;
  created_at: Date;
  updated_at: Date;
}
