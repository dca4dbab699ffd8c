// The relay service: every surface (A2A, MCP, Slack, web) calls these operations; they validate intent
// rules, authorize, apply each state change as one compare-and-set, and hand outbox events to the queues.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Filter } from 'mongodb';
import { apiKeyId, hashApiKey, issueApiKey } from './api-keys';
import { canonicalHash, sha256Hex } from './canonical-json';
import type { AgentDoc, OutboxEvent, ThreadDoc } from './documents';
import { RelayError } from './errors';
import type { EventPublisher } from './event-publisher';
import { isDuplicateKey, type MongoStore } from './mongo-store';
import {
  TERMINAL_STATUSES,
  type AgentCardInput,
  type Artifact,
  type EventType,
  type NewHandoff,
  type Surface,
  type ThreadStatus,
  type TransitionName,
} from './schemas';
import { TtlCache } from './ttl-cache';
import { threadView, type ThreadView } from './wire-views';

export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

export interface PublicCard {
  handle: string;
  name: string;
  role: string;
  skills: string[];
  repos_owned: string[];
}

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

export interface RelayServiceDeps {
  store: MongoStore;
  events: EventPublisher;
  clock?: Clock;
  publicUrl: string;
  keyPepper: string;
  log: Logger;
}

export class RelayService {
  private readonly store: MongoStore;
  private readonly events: EventPublisher;
  private readonly clock: Clock;
  private readonly publicUrl: string;
  private readonly keyPepper: string;
  private readonly log: Logger;
  private readonly agentCache = new TtlCache<string, AgentDoc>(10_000);
  private readonly keyCache = new TtlCache<string, string>(10_000);

  constructor(deps: RelayServiceDeps) {
    this.store = deps.store;
    this.events = deps.events;
    this.clock = deps.clock ?? systemClock;
    this.publicUrl = deps.publicUrl;
    this.keyPepper = deps.keyPepper;
    this.log = deps.log;
  }

  inboxUrl(threadId: string): string {
    return `${this.publicUrl}/inbox/${threadId}`;
  }

  // ── teammates ────────────────────────────────────────────────────────────────

  async registerAgent(input: AgentCardInput): Promise<{ card: PublicCard & { slack_user_id: string | null }; api_key: string }> {
    const now = this.clock.now();
    const doc: AgentDoc = {
      _id: input.handle,
      handle: input.handle,
      team: input.handle.split('@')[1]!,
      name: input.name,
      role: input.role,
      skills: input.skills,
      repos_owned: input.repos_owned,
      tools: input.tools,
      slack_user_id: input.slack_user_id ?? null,
      status: 'active',
      created_at: now,
      updated_at: now,
    };
    if (input.slack_user_id) {
      try {
        await this.store.slackLinks.insertOne({ _id: input.slack_user_id, handle: input.handle, created_at: now });
      } catch (error) {
        if (isDuplicateKey(error)) {
          throw new RelayError('invalid_params', `params.slack_user_id: ${input.slack_user_id} is already linked to another teammate`, undefined, 409);
        }
        throw error;
      }
    }
    try {
      await this.store.agents.insertOne(doc);
    } catch (error) {
      if (input.slack_user_id) await this.store.slackLinks.deleteOne({ _id: input.slack_user_id, handle: input.handle });
      if (isDuplicateKey(error)) {
        throw new RelayError('invalid_params', `params.handle: ${input.handle} is already registered`, undefined, 409);
      }
      throw error;
    }
    const issued = issueApiKey(this.keyPepper);
    await this.store.apiKeys.insertOne({ _id: issued.hash, key_id: issued.keyId, handle: input.handle, created_at: now });
    this.log.info({ handle: input.handle, key_id: issued.keyId }, 'teammate registered');
    return { card: { ...publicCard(doc), slack_user_id: doc.slack_user_id }, api_key: issued.key };
  }

  /** The active teammate a bearer key belongs to, or null. */
  async authenticate(apiKey: string): Promise<AgentDoc | null> {
    if (!apiKeyId(apiKey)) return null;
    const hash = hashApiKey(apiKey, this.keyPepper);
    let handle = this.keyCache.get(hash);
    if (handle === undefined) {
      const key = await this.store.apiKeys.findOne({ _id: hash });
      if (!key) return null;
      handle = key.handle;
      this.keyCache.set(hash, handle);
    }
    const agent = await this.agent(handle);
    return agent && agent.status === 'active' ? agent : null;
  }

  async agent(handle: string): Promise<AgentDoc | null> {
    const cached = this.agentCache.get(handle);
    if (cached) return cached;
    const doc = await this.store.agents.findOne({ _id: handle });
    if (doc) this.agentCache.set(handle, doc);
    return doc;
  }

  async agentBySlackUser(slackUserId: string): Promise<AgentDoc | null> {
    const link = await this.store.slackLinks.findOne({ _id: slackUserId });
    if (!link) return null;
    const agent = await this.agent(link.handle);
    return agent && agent.status === 'active' ? agent : null;
  }

  async listAgents(filter: { role?: string; skill?: string; repo?: string }): Promise<PublicCard[]> {
    const query: Filter<AgentDoc> = { status: 'active' };
    if (filter.role !== undefined) query.role = filter.role;
    if (filter.skill !== undefined) query.skills = filter.skill;
    if (filter.repo !== undefined) query.repos_owned = filter.repo;
    const docs = await this.store.agents.find(query).sort({ _id: 1 }).limit(1000).toArray();
    return docs.map(publicCard);
  }

  // ── threads ─────────────────────────────────────────────────────────────────

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
    const recipient = await this.agent(input.to);
    if (!recipient || recipient.status !== 'active') {
      throw new RelayError('recipient_not_found', `No active teammate with handle ${input.to}; call list_teammates to find the right handle`);
    }

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
    const threadId = input.idempotency_key ? idempotentId(sender.handle, 'create', input.idempotency_key) : randomUUID();
    const now = this.clock.now();
    const event: OutboxEvent = { id: randomUUID(), type: 'thread.created', at: now, by: sender.handle, via };
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
      outbox: [event],
      outbox_dirty: true,
      slack: null,
    };
    try {
      await this.store.threads.insertOne(doc);
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
      const original = await this.store.threads.findOne({ _id: threadId });
      if (!original || original.request_hash !== bodyHash) {
        throw new RelayError('duplicate_idempotency_key', 'This idempotency key was already used with a different request body');
      }
      return this.createResult(original);
    }
    this.log.info({ thread_id: threadId, from: sender.handle, to: recipient.handle, via }, 'handoff created');
    await this.publish(threadId, doc.outbox);
    return this.createResult(doc);
  }

  /** The thread as a participant sees it; anyone else gets not_a_participant. */
  async readThread(caller: AgentDoc, threadId: string): Promise<ThreadDoc> {
    const doc = await this.store.threads.findOne({ _id: threadId });
    if (!doc) throw new RelayError('thread_not_found', `No thread ${threadId}`);
    if (doc.from !== caller.handle && doc.to !== caller.handle) {
      throw new RelayError('not_a_participant', `${caller.handle} is not a participant of thread ${threadId}`);
    }
    return doc;
  }

  async threadViewFor(caller: AgentDoc, threadId: string): Promise<ThreadView> {
    const doc = await this.readThread(caller, threadId);
    return this.view(doc);
  }

  async view(doc: ThreadDoc): Promise<ThreadView> {
    const [from, to] = await Promise.all([this.agent(doc.from), this.agent(doc.to)]);
    return threadView(doc, { from, to }, this.inboxUrl(doc._id));
  }

  async threadById(threadId: string): Promise<ThreadDoc | null> {
    return this.store.threads.findOne({ _id: threadId });
  }

  async transition(caller: AgentDoc, request: TransitionRequest, via: Surface): Promise<ThreadDoc> {
    const rule = TRANSITIONS[request.transition];
    const now = this.clock.now();
    const event: OutboxEvent = { id: randomUUID(), type: rule.event, at: now, by: caller.handle, via };
    const { before, after } = await this.store.writeThread(request.thread_id, (doc) => {
      if (doc[rule.actor] !== caller.handle || !rule.from.includes(doc.status)) return undefined;
      if (request.expected_status && doc.status !== request.expected_status) return undefined;
      return {
        ...doc,
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
        outbox_dirty: true,
      };
    });
    if (!after) throw this.explainFailedTransition(caller, request, rule, before);
    this.log.info({ thread_id: after._id, transition: request.transition, by: caller.handle, via }, 'thread transition');
    await this.publish(after._id, [event]);
    return after;
  }

  private explainFailedTransition(caller: AgentDoc, request: TransitionRequest, rule: TransitionRule, doc: ThreadDoc | null): RelayError {
    if (!doc) return new RelayError('thread_not_found', `No thread ${request.thread_id}`);
    if (doc.from !== caller.handle && doc.to !== caller.handle) {
      return new RelayError('not_a_participant', `${caller.handle} is not a participant of thread ${request.thread_id}`);
    }
    if (doc[rule.actor] !== caller.handle) {
      const who = rule.actor === 'to' ? `the recipient (${doc.to})` : `the sender (${doc.from})`;
      return new RelayError('not_authorized_transition', `Only ${who} can ${request.transition} this handoff`);
    }
    if (request.expected_status && doc.status !== request.expected_status) {
      return new RelayError('state_changed', `The handoff is now ${doc.status} (it was ${request.expected_status} when this was shown)`, {
        status: doc.status,
      });
    }
    if (TERMINAL_STATUSES.includes(doc.status)) {
      return new RelayError('thread_terminal', `The handoff is already ${doc.status}`, { status: doc.status });
    }
    if (!rule.from.includes(doc.status)) {
      return new RelayError('invalid_transition', `Cannot ${request.transition} a handoff that is ${doc.status}`, { status: doc.status });
    }
    return new RelayError('state_changed', 'The handoff changed while this request ran; read it again', { status: doc.status });
  }

  // ── outbox ──────────────────────────────────────────────────────────────────

  /**
   * Puts events on their queues right after the write that recorded them. A failure is not the caller's:
   * the thread stays outbox_dirty and the sweep enqueues it (job ids are event ids, so twice is once).
   */
  private async publish(threadId: string, events: readonly OutboxEvent[]): Promise<void> {
    try {
      await this.events.publish(threadId, events);
    } catch (error) {
      this.log.warn({ thread_id: threadId, err: (error as Error).message }, 'events not enqueued yet; the outbox sweep will retry');
    }
  }

  /**
   * Enqueues every event of threads written more than `settleMs` ago that may have missed their queue
   * (Redis was down, a process died), then clears their dirty flag. Also finishes interrupted writes.
   */
  async sweepOutbox(settleMs: number, limit = 500): Promise<number> {
    await this.store.repairThreadWrites();
    const cutoff = new Date(this.clock.now().getTime() - settleMs);
    const dirty = await this.store.threads
      .find({ outbox_dirty: true, updated_at: { $lte: cutoff } }, { projection: { _id: 1, outbox: 1, version: 1 } })
      .limit(limit)
      .toArray();
    let swept = 0;
    for (const doc of dirty) {
      await this.events.publish(doc._id, doc.outbox);
      const seen = doc.outbox.length;
      await this.store.writeThread(doc._id, (current) =>
        current.outbox_dirty && current.outbox.length === seen ? { ...current, outbox_dirty: false } : undefined,
      );
      swept += 1;
    }
    return swept;
  }

  /** Records the DM the created job posted; false when one was already recorded. */
  async recordSlackDelivery(threadId: string, delivery: { channel: string; ts: string }): Promise<boolean> {
    const posted_at = this.clock.now();
    const { after } = await this.store.writeThread(threadId, (doc) => (doc.slack ? undefined : { ...doc, slack: { ...delivery, posted_at } }));
    return after !== null;
  }

  private createResult(doc: ThreadDoc): CreateResult {
    return {
      task_id: doc._id,
      status: { state: 'pending' },
      created_at: doc.created_at.toISOString(),
      inbox_url: this.inboxUrl(doc._id),
      recipient: doc.to,
    };
  }
}

export function publicCard(doc: AgentDoc): PublicCard {
  return { handle: doc.handle, name: doc.name, role: doc.role, skills: doc.skills, repos_owned: doc.repos_owned };
}

/** A stable UUID-shaped id from the caller and its idempotency key: uniqueness lives in _id (no optional unique index). */
export function idempotentId(caller: string, scope: string, key: string): string {
  const hex = sha256Hex(`${caller}\u0000${scope}\u0000${key}`);
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
