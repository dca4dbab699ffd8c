// The relay service: every surface (A2A, MCP, Slack, web) calls these operations. They check intent rules,
// blocks and who may do what, apply each state change as one versioned write (mongo-store.ts), and hand
// the outbox events that write recorded to the queues.
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { acceptanceVerdict, hashHandoffToken, declaredProject, type Verdict, type VerdictInput } from '../domain/acceptance-verdict';
import { constantTimeEqual } from '../ops/api-keys';
import { canonicalHash } from '../domain/canonical-json';
import type { AgentDoc, MessageDoc, OutboxEvent, SlackPendingPost, ThreadDoc } from '../domain/documents';
import { RelayError } from '../domain/errors';
import type { EventPublisher } from './event-publisher';
import { IdempotencyLedger, idempotentId } from './idempotency';
import { backoffMs, isDuplicateKey, type MongoStore } from '../store/mongo-store';
import {
  TERMINAL_STATUSES,
  type Artifact,
  type EventType,
  type NewHandoff,
  type Surface,
  type ThreadStatus,
  type TransitionName,
} from '../domain/schemas';
import { earlierRepliesRecorded, recordedTs, withClaim, withoutClaim, withRecord, type SlackPostKey } from './slack-posts';
import { systemClock, type Clock, type Teammates } from './teammates';
import { listItem, messageView, threadView, transitionView, type ListItem, type ThreadView, type TransitionView } from './wire-views';

export interface CreateResult {
  task_id: string;
  status: { state: 'pending' };
  created_at: string;
  inbox_url: string;
  recipient: string;
}

export interface TransitionRequest {
  thread_id: string;
  transition: TransitionName;
  result_summary?: string;
  artifacts?: Artifact[];
  reason?: string;
  /** The status the caller saw (a Slack button carries it); a different current status is state_changed. */
  expected_status?: ThreadStatus;
  /** For accept: the acceptance-verdict inputs (all optional); see acceptance-verdict.ts. */
  verdict?: VerdictInput;
}

export interface AppendRequest {
  thread_id: string;
  body: string;
  payload: Record<string, unknown>;
  artifacts: Artifact[];
}

export interface AppendResult {
  thread_id: string;
  message_id: string;
  sequence_no: number;
  created_at: string;
}

export interface ListRequest {
  role: 'recipient' | 'sender';
  status?: ThreadStatus[];
  since?: Date;
  limit: number;
  cursor?: string;
}

interface TransitionRule {
  from: readonly ThreadStatus[];
  to: ThreadStatus;
  actor: 'from' | 'to';
  event: EventType;
  stamp: 'accepted_at' | 'completed_at' | 'declined_at' | 'cancelled_at';
}

const TRANSITIONS: Record<TransitionName, TransitionRule> = {
  accept: { from: ['pending'], to: 'accepted', actor: 'to', event: 'thread.accepted', stamp: 'accepted_at' },
  complete: { from: ['accepted'], to: 'completed', actor: 'to', event: 'thread.completed', stamp: 'completed_at' },
  decline: { from: ['pending'], to: 'declined', actor: 'to', event: 'thread.declined', stamp: 'declined_at' },
  cancel: { from: ['pending', 'accepted'], to: 'cancelled', actor: 'from', event: 'thread.cancelled', stamp: 'cancelled_at' },
};

/** The delivery_source a Slack Accept reports in its verdict. */
export const SLACK_DELIVERY_SOURCE = 'slack_dm';

/** Messages a thread read returns at most (newest kept); the thread itself tells how many there are. */
const MESSAGES_PER_READ = 500;

/** An outbox entry whose thread does not record its event this long after it settled belongs to a write that never happened. */
const UNWRITTEN_EVENT_MS = 30_000;

export interface RelayServiceDeps {
  store: MongoStore;
  teammates: Teammates;
  events: EventPublisher;
  clock?: Clock;
  publicUrl: string;
  log: Logger;
  /** The secret handoff tokens are derived under (the key pepper); a per-process random one by default. */
  tokenSecret?: string;
  /** How long a handoff token stays valid. */
  handoffTokenTtlMs?: number;
}

export const HANDOFF_TOKEN_TTL_MS = 7 * 24 * 60 * 60 * 1000;

export class RelayService {
  readonly teammates: Teammates;
  private readonly store: MongoStore;
  private readonly events: EventPublisher;
  private readonly clock: Clock;
  private readonly publicUrl: string;
  private readonly log: Logger;
  private readonly ledger: IdempotencyLedger;
  private readonly tokenSecret: string;
  private readonly tokenTtlMs: number;

  constructor(deps: RelayServiceDeps) {
    this.tokenSecret = deps.tokenSecret ?? randomBytes(32).toString('hex');
    this.tokenTtlMs = deps.handoffTokenTtlMs ?? HANDOFF_TOKEN_TTL_MS;
    this.store = deps.store;
    this.teammates = deps.teammates;
    this.events = deps.events;
    this.clock = deps.clock ?? systemClock;
    this.publicUrl = deps.publicUrl;
    this.log = deps.log;
    this.ledger = new IdempotencyLedger(deps.store);
  }

  /** The relay's public base URL (RELAY_PUBLIC_URL), without a trailing slash. */
  get publicUrlBase(): string {
    return this.publicUrl;
  }

  /**
   * The thread's inbox page. With a viewer, the link carries a signature binding thread and viewer, so the page
   * can show that participant the whole thread without a login: it is as private as the DM or API answer it
   * arrives in. Without one, the page only explains where to read the thread.
   */
  inboxUrl(threadId: string, viewer?: string): string {
    const base = `${this.publicUrl}/inbox/${threadId}`;
    if (!viewer) return base;
    return `${base}?as=${encodeURIComponent(viewer)}&sig=${this.inboxSignature(threadId, viewer)}`;
  }

  /** The thread behind a signed inbox link, for that participant; null when the link is not genuine. */
  async threadForInboxLink(threadId: string, viewer: string, signature: string): Promise<{ view: ThreadView; viewer: string } | null> {
    if (!constantTimeEqual(signature, this.inboxSignature(threadId, viewer))) return null;
    const doc = await this.store.readThread(threadId);
    if (!doc || (doc.from !== viewer && doc.to !== viewer)) return null;
    return { view: await this.view(doc, viewer), viewer };
  }

  private inboxSignature(threadId: string, viewer: string): string {
    return createHmac('sha256', this.tokenSecret).update(`inbox_link\0${threadId}\0${viewer}`).digest('base64url');
  }

  // ── create ──────────────────────────────────────────────────────────────────

  async createHandoff(sender: AgentDoc, input: NewHandoff, via: Surface): Promise<CreateResult> {
    if (input.intent === 'propose_action' && !input.proposed_action) {
      throw new RelayError('invalid_intent_payload', 'proposed_action is required when intent is "propose_action"');
    }
    if (input.intent !== 'propose_action' && input.proposed_action) {
      throw new RelayError('invalid_intent_payload', `proposed_action is only allowed when intent is "propose_action" (got "${input.intent}")`);
    }
    if (input.question !== undefined && input.intent !== 'ask_question') {
      throw new RelayError('invalid_intent_payload', `question is only allowed when intent is "ask_question" (got "${input.intent}")`);
    }
    const recipient = await this.teammates.get(input.to);
    if (!recipient || recipient.status !== 'active') {
      throw new RelayError('recipient_not_found', `No active teammate with handle ${input.to}; call list_teammates to find the right handle`);
    }
    this.teammates.assertNotBlocked(sender, recipient);

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
    const bodyHash = canonicalHash(body);
    // With a key the id derives from sender + key, so a duplicate is a duplicate-key insert, never a second thread.
    const threadId = input.idempotency_key ? idempotentId(sender.handle, 'create', input.idempotency_key) : randomUUID();
    const now = this.clock.now();
    const event: OutboxEvent = { id: randomUUID(), type: 'thread.created', at: now, by: sender.handle, via };
    const nonce = randomBytes(16).toString('hex');
    const doc: ThreadDoc = {
      _id: threadId,
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
      outbox: [event],
      slack: null,
      handoff_token: {
        nonce,
        hash: hashHandoffToken(this.handoffToken(threadId, nonce)),
        team: recipient.team,
        body_hash: bodyHash,
        project_id: declaredProject(input.metadata).project_id,
        expires_at: new Date(now.getTime() + this.tokenTtlMs),
        consumed_at: null,
      },
    };
    const created = await this.writingEvent(threadId, event, async () => {
      const mailbox = await this.store.placeNewThread(doc);
      if (mailbox) doc.mailbox = mailbox;
      try {
        await this.store.threads.insertOne(doc);
        return doc;
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
        return null;
      }
    });
    if (!created) {
      const original = await this.store.readThread(threadId);
      if (!original || original.request_hash !== bodyHash) {
        throw new RelayError('duplicate_idempotency_key', 'This idempotency key was already used with a different request body');
      }
      return this.createResult(original);
    }
    this.log.info({ thread_id: threadId, from: sender.handle, to: recipient.handle, via }, 'handoff created');
    return this.createResult(doc);
  }

  // ── read ────────────────────────────────────────────────────────────────────

  /** The thread as a participant sees it; anyone else gets not_a_participant. */
  async readThread(caller: AgentDoc, threadId: string): Promise<ThreadDoc> {
    const doc = await this.store.readThread(threadId);
    if (!doc) throw new RelayError('thread_not_found', `No thread ${threadId}`);
    assertParticipant(caller, doc);
    return doc;
  }

  /** The whole thread for a participant; reading it marks the other side's messages as read. */
  async threadViewFor(caller: AgentDoc, threadId: string): Promise<ThreadView> {
    const doc = await this.readThread(caller, threadId);
    const view: ThreadView = await this.view(doc, caller.handle);
    if (doc.to === caller.handle && doc.handoff_token) {
      view.handoff_token = this.handoffToken(doc._id, doc.handoff_token.nonce);
      view.handoff_token_expires_at = doc.handoff_token.expires_at.toISOString();
    }
    const seen = doc.message_counts[doc.from === caller.handle ? 'to' : 'from'];
    await this.store.threadReads.replaceOne({ _id: `${threadId}:${caller.handle}` }, { seen, at: this.clock.now() }, { upsert: true });
    return view;
  }

  /** The raw token of a thread: HMAC under the relay's secret, so only its hash is ever stored. */
  private handoffToken(threadId: string, nonce: string): string {
    return `hto_${createHmac('sha256', this.tokenSecret).update(`handoff_token\0${threadId}\0${nonce}`).digest('base64url')}`;
  }

  async view(doc: ThreadDoc, viewer?: string): Promise<ThreadView> {
    const newest = Array.from({ length: Math.min(doc.message_seq, MESSAGES_PER_READ) }, (_, i) => doc.message_seq - i);
    const [from, to, messages] = await Promise.all([this.teammates.get(doc.from), this.teammates.get(doc.to), this.store.messagesOf(doc._id, newest)]);
    return threadView(doc, { from, to }, messages.map(messageView), this.inboxUrl(doc._id, viewer));
  }

  async threadById(threadId: string): Promise<ThreadDoc | null> {
    return this.store.readThread(threadId);
  }

  /** A page of the caller's threads, newest first; the cursor continues exactly where the page ended. */
  async listThreads(caller: AgentDoc, request: ListRequest): Promise<{ items: ListItem[]; next_cursor: string | null }> {
    const party = request.role === 'recipient' ? 'to' : 'from';
    const { threads: page, next_cursor } = await this.store.lists.page({
      party,
      handle: caller.handle,
      limit: request.limit,
      ...(request.status?.length ? { statuses: request.status } : {}),
      ...(request.since ? { since: request.since } : {}),
      ...(request.cursor ? { cursor: request.cursor } : {}),
    });
    const other = party === 'to' ? 'from' : 'to';
    // What the caller has seen matters only where the other side wrote something; each read is one `_id` lookup.
    const seen = new Map(
      await Promise.all(
        page
          .filter((d) => d.message_counts[other] > 0)
          .map(async (d) => [d._id, (await this.store.threadReads.findOne({ _id: `${d._id}:${caller.handle}` }))?.seen ?? 0] as const),
      ),
    );
    const handles = [...new Set(page.flatMap((d) => [d.from, d.to]))];
    const agents = new Map(await Promise.all(handles.map(async (h) => [h, await this.teammates.get(h)] as const)));
    const items = page.map((d) => listItem(d, agents, Math.max(0, d.message_counts[other] - (seen.get(d._id) ?? 0))));
    return { items, next_cursor };
  }

  // ── change ──────────────────────────────────────────────────────────────────

  /** Accept, complete, decline (recipient) or cancel (sender); idempotent under the caller's key. */
  async transition(caller: AgentDoc, request: TransitionRequest, via: Surface, idempotencyKey?: string): Promise<TransitionView> {
    const { expected_status: _shown, ...body } = request;
    return this.ledger.run(caller.handle, idempotencyKey, { method: 'transition', ...body }, async () => {
      let refused: Verdict | undefined;
      let passed: Verdict | undefined;
      const after = await this.applyTransition(caller, request, via, (doc, now) => {
        // The verdict runs on the very version the accept writes, so a check and its write cannot drift apart.
        passed = undefined;
        refused = undefined;
        const verdict = acceptanceVerdict(this.verdictInput(doc, request, via), {
          thread: doc,
          token: doc.handoff_token ?? null,
          recipient_tools: caller.tools ?? [],
          now,
        }, caller.team);
        if (verdict.accepted) passed = verdict;
        else refused = verdict;
        return verdict.accepted;
      });
      if (refused) {
        const current = after ?? (await this.threadById(request.thread_id));
        return { thread_id: request.thread_id, status: current?.status ?? 'pending', accepted_at: null, ...refused };
      }
      const view = transitionView(after!);
      // Old callers (no verdict inputs) keep the plain answer; callers who asked for checks get the verdict alongside.
      return passed && request.verdict ? { ...view, ...passed } : view;
    });
  }

  /**
   * What the verdict judges. A Slack click carries no inputs, but Slack has already proved the clicker is the
   * recipient, so the Slack path presents the recipient's own handoff token: an expired handoff is refused there
   * too, and an agent presenting the same token and delivery_source gets the very same verdict.
   */
  private verdictInput(doc: ThreadDoc, request: TransitionRequest, via: Surface): VerdictInput {
    const input = request.verdict ?? {};
    if (via !== 'slack' || input.goal_token !== undefined || !doc.handoff_token) return input;
    return { goal_token: this.handoffToken(doc._id, doc.handoff_token.nonce), delivery_source: SLACK_DELIVERY_SOURCE, ...input };
  }

  private async applyTransition(
    caller: AgentDoc,
    request: TransitionRequest,
    via: Surface,
    gate?: (doc: ThreadDoc, now: Date) => boolean,
  ): Promise<ThreadDoc | null> {
    const rule = TRANSITIONS[request.transition];
    const now = this.clock.now();
    const event: OutboxEvent = { id: randomUUID(), type: rule.event, at: now, by: caller.handle, via };
    let gateRefused = false;
    let before: ThreadDoc | null = null;
    const after = await this.writingEvent(request.thread_id, event, async () => {
      const written = await this.store.writeThread(request.thread_id, (doc) => {
      gateRefused = false;
      if (doc[rule.actor] !== caller.handle) return undefined;
      // A presented token is judged even on a thread that is no longer pending (already_consumed).
      const judged = request.transition === 'accept' && gate && (rule.from.includes(doc.status) || request.verdict?.goal_token !== undefined);
      if (judged && !gate(doc, now)) {
        gateRefused = true;
        return undefined;
      }
      if (!rule.from.includes(doc.status)) return undefined;
      if (request.expected_status && doc.status !== request.expected_status) return undefined;
      return {
        ...doc,
        ...(request.transition === 'accept' && doc.handoff_token ? { handoff_token: { ...doc.handoff_token, consumed_at: now } } : {}),
        status: rule.to,
        updated_at: now,
        [rule.stamp]: now,
        ...(request.transition === 'complete'
          ? { completed_summary: request.result_summary ?? null, completion_artifacts: request.artifacts ?? [] }
          : {}),
        ...(request.transition === 'decline' ? { decline_reason: request.reason ?? null } : {}),
        ...(request.transition === 'cancel' ? { cancel_reason: request.reason ?? null } : {}),
        status_history: [...doc.status_history, { status: rule.to, by: caller.handle, at: now, via }],
        outbox: [...doc.outbox, event],
      };
      });
      before = written.before;
      return written.after;
    });
    if (gateRefused) return before;
    if (!after) throw explainFailedTransition(caller, request, rule, before);
    this.log.info({ thread_id: after._id, transition: request.transition, by: caller.handle, via }, 'thread transition');
    return after;
  }

  /**
   * Appends a message. Its sequence_no is claimed by inserting `${thread_id}:${n}` (unique), then the
   * thread's counter and outbox event follow in one versioned write. If the thread ended in between,
   * the message is taken back; if a writer died in between, the next append rolls its message forward.
   */
  async appendMessage(caller: AgentDoc, request: AppendRequest, via: Surface, idempotencyKey?: string): Promise<AppendResult> {
    return this.ledger.run(caller.handle, idempotencyKey, { method: 'append', ...request }, () => this.applyAppend(caller, request, via));
  }

  private async applyAppend(caller: AgentDoc, request: AppendRequest, via: Surface): Promise<AppendResult> {
    const deadline = Date.now() + 5_000;
    for (let attempt = 0; Date.now() < deadline; attempt += 1) {
      const thread = await this.readThread(caller, request.thread_id);
      await this.assertOpenBetween(caller, thread);
      const now = this.clock.now();
      const message: MessageDoc = {
        _id: `${thread._id}:${thread.message_seq + 1}`,
        id: randomUUID(),
        thread_id: thread._id,
        sequence_no: thread.message_seq + 1,
        from: caller.handle,
        body: request.body,
        payload: request.payload,
        artifacts: request.artifacts,
        via,
        created_at: now,
      };
      try {
        await this.store.messages.insertOne(message);
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
        // Someone holds this number: help count it (its writer may have died), then take the next one.
        const holder = await this.store.messages.findOne({ _id: message._id });
        if (holder) await this.recordMessage(thread._id, holder);
        await sleep(backoffMs(attempt));
        continue;
      }
      const recorded = await this.recordMessage(thread._id, message);
      if (!recorded) {
        // Only this writer ever inserted this `_id` (a duplicate insert fails), so it is ours to take back.
        await this.store.messages.deleteOne({ _id: message._id });
        const latest = await this.readThread(caller, request.thread_id);
        await this.assertOpenBetween(caller, latest);
        continue;
      }
      this.log.info({ thread_id: thread._id, sequence_no: message.sequence_no, from: caller.handle, via }, 'message appended');
      return { thread_id: thread._id, message_id: message.id, sequence_no: message.sequence_no, created_at: now.toISOString() };
    }
    throw new RelayError('state_changed', 'The thread is changing too fast right now; retry');
  }

  /** Counts a stored message on its thread with its outbox event; false when the thread is already terminal. */
  private async recordMessage(threadId: string, message: MessageDoc): Promise<boolean> {
    const event: OutboxEvent = { id: message.id, type: 'thread.message', at: message.created_at, by: message.from, via: message.via, message_id: message.id };
    let alreadyRecorded = false;
    const after = await this.writingEvent(threadId, event, async () => (await this.store.writeThread(threadId, (doc) => {
      if (doc.message_seq >= message.sequence_no) {
        alreadyRecorded = true;
        return undefined;
      }
      if (TERMINAL_STATUSES.includes(doc.status)) return undefined;
      const side = message.from === doc.from ? 'from' : 'to';
      return {
        ...doc,
        message_seq: message.sequence_no,
        message_counts: { ...doc.message_counts, [side]: doc.message_counts[side] + 1 },
        updated_at: message.created_at,
        outbox: [...doc.outbox, event],
      };
    })).after);
    return after !== null || alreadyRecorded;
  }

  private async assertOpenBetween(caller: AgentDoc, thread: ThreadDoc): Promise<void> {
    if (TERMINAL_STATUSES.includes(thread.status)) {
      throw new RelayError('thread_terminal', `The handoff is ${thread.status}; no more messages can be added`, { status: thread.status });
    }
    const other = await this.teammates.get(thread.from === caller.handle ? thread.to : thread.from);
    if (other) this.teammates.assertNotBlocked(caller, other);
  }

  // ── outbox ──────────────────────────────────────────────────────────────────

  /**
   * Runs `write`, which records `event` on the thread, with the event in the outbox first: if this process dies
   * right after the write, or Redis refuses the add, the sweep still enqueues it. A write that did not happen
   * (null) takes its entry back. The event goes on its queues right after the write.
   */
  private async writingEvent<T>(threadId: string, event: OutboxEvent, write: () => Promise<T | null>): Promise<T | null> {
    const mine = await this.store.outbox.pending(threadId, event);
    let written: T | null = null;
    try {
      written = await write();
    } finally {
      if (written === null && mine) await this.store.outbox.abandoned(event.id).catch(() => {});
    }
    if (written !== null) await this.publish(threadId, [event]);
    return written;
  }

  /**
   * Puts events on their queues right after the write that recorded them. A failure is not the caller's:
   * the events stay in the outbox and the sweep enqueues them (job ids are event ids, so twice is once).
   */
  private async publish(threadId: string, events: readonly OutboxEvent[]): Promise<void> {
    try {
      await this.events.publish(threadId, events);
      this.store.outbox.enqueued(events.map((e) => e.id));
    } catch (error) {
      this.log.warn({ thread_id: threadId, err: (error as Error).message }, 'events not enqueued yet; the outbox sweep will retry');
    }
  }

  /**
   * Enqueues the outbox events older than `settleMs` (Redis was down, a process died after its write) and removes
   * them. It reads only the outbox, which holds the events in flight: with nothing waiting it costs one empty read.
   * An entry whose write never happened (its thread does not record the event) is dropped once that write's time
   * is up. Reading each thread through the store also finishes a write whose writer died before applying it.
   */
  async sweepOutbox(settleMs: number, limit = 500): Promise<number> {
    await this.store.outbox.flush();
    const now = this.clock.now().getTime();
    let enqueued = 0;
    for (const entry of await this.store.outbox.waiting(limit)) {
      const age = now - entry.at.getTime();
      if (age < settleMs) continue;
      const thread = await this.store.readThread(entry.thread_id);
      if (thread?.outbox.some((e) => e.id === entry._id)) {
        await this.events.publish(entry.thread_id, [entry.event]);
        await this.store.outbox.remove([entry._id]);
        enqueued += 1;
      } else if (age > settleMs + UNWRITTEN_EVENT_MS) {
        await this.store.outbox.remove([entry._id]);
      }
    }
    return enqueued;
  }

  // ── Slack delivery records (bot/slack-delivery.ts; the pure rules are in slack-posts.ts) ──

  /** Records the recipient's DM; false when one was already recorded. */
  async recordSlackDelivery(threadId: string, delivery: { channel: string; ts: string }): Promise<boolean> {
    return this.recordSlackPost(threadId, 'recipient', delivery);
  }

  /**
   * Claims Slack post `key` for `owner` before it is sent: a new claim when `takeOver` is null, else the
   * replacement of exactly that claim (same marker, new lease). Null when the post is recorded, someone else
   * holds or changed the claim, or (for a reply) an earlier reply under the same DM is not recorded yet.
   */
  async claimSlackPost(
    threadId: string,
    key: SlackPostKey,
    target: { channel: string; thread_ts: string | null; owner: string },
    takeOver: SlackPendingPost | null,
  ): Promise<SlackPendingPost | null> {
    const now = this.clock.now();
    let claim: SlackPendingPost | null = null;
    await this.store.writeThread(threadId, (doc) => {
      claim = null;
      const pending = doc.slack_pending?.[key];
      if (recordedTs(doc, key) !== null || !earlierRepliesRecorded(doc, key)) return undefined;
      if (takeOver ? pending?.lease !== takeOver.lease : pending) return undefined;
      claim = {
        marker: takeOver?.marker ?? randomUUID(),
        lease: randomUUID(),
        ...target,
        claimed_at: takeOver?.claimed_at ?? now,
        at: now,
      };
      return withClaim(doc, key, claim);
    });
    return claim;
  }

  /** Gives a claim up after Slack refused the post (nothing was posted); false when the claim had changed. */
  async releaseSlackPost(threadId: string, key: SlackPostKey, lease: string): Promise<boolean> {
    const { after } = await this.store.writeThread(threadId, (doc) => withoutClaim(doc, key, lease));
    return after !== null;
  }

  /** A thread's messages with these sequence numbers, in order (for the Slack replies; no participant check). */
  async messagesBySequence(threadId: string, sequenceNos: number[]): Promise<MessageDoc[]> {
    return this.store.messagesOf(threadId, sequenceNos);
  }

  /** Records a posted message (the first record wins) and clears the claim with the same marker. */
  async recordSlackPost(threadId: string, key: SlackPostKey, post: { channel: string; ts: string; marker?: string }): Promise<boolean> {
    const at = this.clock.now();
    const { after } = await this.store.writeThread(threadId, (doc) => withRecord(doc, key, post, at));
    return after !== null;
  }

  private createResult(doc: ThreadDoc): CreateResult {
    return {
      task_id: doc._id,
      status: { state: 'pending' },
      created_at: doc.created_at.toISOString(),
      inbox_url: this.inboxUrl(doc._id, doc.from),
      recipient: doc.to,
    };
  }
}

function assertParticipant(caller: AgentDoc, doc: ThreadDoc): void {
  if (doc.from !== caller.handle && doc.to !== caller.handle) {
    throw new RelayError('not_a_participant', `${caller.handle} is not a participant of thread ${doc._id}`);
  }
}

function explainFailedTransition(caller: AgentDoc, request: TransitionRequest, rule: TransitionRule, doc: ThreadDoc | null): RelayError {
  if (!doc) return new RelayError('thread_not_found', `No thread ${request.thread_id}`);
  assertParticipant(caller, doc);
  if (doc[rule.actor] !== caller.handle) {
    const who = rule.actor === 'to' ? `the recipient (${doc.to})` : `the sender (${doc.from})`;
    return new RelayError('not_authorized_transition', `Only ${who} can ${request.transition} this handoff`);
  }
  if (request.expected_status && doc.status !== request.expected_status) {
    return new RelayError('state_changed', `The handoff is now ${doc.status} (it was ${request.expected_status} when this was shown)`, { status: doc.status });
  }
  if (TERMINAL_STATUSES.includes(doc.status)) {
    return new RelayError('thread_terminal', `The handoff is already ${doc.status}`, { status: doc.status });
  }
  return new RelayError('invalid_transition', `Cannot ${request.transition} a handoff that is ${doc.status}`, { status: doc.status });
}
