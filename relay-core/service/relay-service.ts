// The relay service: every surface (A2A, MCP, Slack, web) calls these operations.
import { randomBytes, randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { acceptanceVerdict, declaredProject, type Verdict } from '../domain/acceptance-verdict';
import { systemClock, type Clock } from '../domain/clock';
import type { AgentDoc, OutboxEvent, PolicyStamp, ThreadDoc } from '../domain/documents';
import { RelayError } from '../domain/errors';
import { claimedThread, explainFailedClaim, isCandidate, isRepeatedClaim, unclaimedThread } from '../domain/claim';
import { parseRecipient, TERMINAL_STATUSES as TERMINAL, withCanonicalLines, type Artifact, type NewHandoff, type RecipientTarget, type Surface, type ThreadStatus, type TransitionName } from '../domain/schemas';
import { assertParticipant, explainFailedTransition, intentProblems, isRepeatedTransition, newPendingThread, TRANSITIONS } from '../domain/thread-lifecycle';
import type { VerdictInput } from '../domain/verdict-input';
import { canonicalHash } from '../domain/canonical-json';
import { isDuplicateKey, putById, type MongoStore } from '../store/mongo-store';
import type { EventPublisher } from './event-publisher';
import type { HandoffTimers } from './handoff-timers';
import { TtlCache } from '../ops/ttl-cache';
import { deriveHandoffToken, HANDOFF_TOKEN_TTL_MS, mintHandoffToken } from './handoff-tokens';
import { IdempotencyLedger, idempotentId } from './idempotency';
import { inboxUrl, isGenuineInboxLink } from './inbox-links';
import { MessageAppender, type AppendRequest, type AppendResult } from './message-append';
import { Outbox } from './outbox';
import { Approvals, type ApplyApproved, type ApprovalAppliers } from './approvals';
import type { JobQueue } from '../queues/bullmq-queues';
import { describeApprovers } from '../domain/approval';
import { ChannelBindings } from './channel-bindings';
import { routeHandoff } from './handoff-routing';
import type { EventFeed } from './event-feed';
import { DEFAULT_RUN_SETTINGS, HandoffRuns, type RunSettings } from './handoff-runs';
import { threadFacts, type HeldStamp, type PolicyGate } from './policy-gate';
import type { Teammates } from './teammates';
import { AuditTrail } from './audit-trail';
import { listThreads, type ListRequest, type ThreadPage } from './thread-list';
import { cursorAfter, cursorPosition, type VisibleQuery } from '../store/thread-lists';
import type { DraftDoc, DraftQuery } from '../store/a2a-drafts';

/** A task in a ListTasks page: a thread, or an A2A task still waiting for its recipient. */
export type VisibleTask = { view: ThreadView } | { draft: DraftDoc };
import { messageView, threadView, transitionView, type ThreadView, type TransitionAnswer } from './wire-views';

// Each state change is one versioned thread write (mongo-store.ts) whose outbox events go to the queues (outbox.ts).

export interface CreateResult {
  task_id: string;
  /**
   * unclaimed: sent to a role, skill or owner that named several teammates; the first to claim it becomes the recipient.
   * awaiting_approval: a policy holds the create until people approve it (nothing is delivered until then).
   */
  status: { state: 'pending' | 'unclaimed' | 'awaiting_approval' };
  created_at: string;
  inbox_url: string;
  /** The recipient's handle, or the target (`role:frontend`) while unclaimed. */
  recipient: string;
  /** For a held create: the approval and who must approve it. */
  approval?: { approval_id: string; approvers: string[]; quorum: number; rule_id: string };
  /** Unclaimed only: who may claim it. */
  candidates?: string[];
}

export interface ClaimResult {
  thread_id: string;
  status: ThreadStatus;
  recipient: string;
  claimed_by: string;
  claimed_at: string | null;
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

/** The delivery_source a Slack Accept reports in its verdict. */
export const SLACK_DELIVERY_SOURCE = 'slack_dm';

/** Messages a thread read returns at most (newest kept); the thread itself tells how many there are. */
const MESSAGES_PER_READ = 500;

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
  /** The policy enforcement point; without one every call is allowed (tests of other things). */
  policy?: PolicyGate;
  /** Where approval reminders and timeouts wait (the `verify` queue); without it only the sweep fires them. */
  approvalTimers?: JobQueue;
  /** The teammates' event logs (event-feed.ts), for readers that wait on them; absent, nothing can wait. */
  feed?: EventFeed;
  /** Lease and progress limits of handoff runs (handoff-runs.ts); defaults otherwise. */
  runs?: Partial<RunSettings>;
  /** Arms a new thread's first timer step at create (handoff-timers.ts); without it the thread.created job does. */
  timers?: Pick<HandoffTimers, 'withFirstStep'>;
}

export class RelayService {
  readonly teammates: Teammates;
  /** Where unclaimed handoffs to a role, skill or owner are posted in Slack. */
  readonly channels: ChannelBindings;
  readonly feed?: EventFeed;
  private readonly store: MongoStore;
  private readonly outbox: Outbox;
  private readonly appender: MessageAppender;
  private readonly clock: Clock;
  private readonly publicUrl: string;
  private readonly log: Logger;
  private readonly ledger: IdempotencyLedger;
  private readonly tokenSecret: string;
  private readonly tokenTtlMs: number;
  private readonly policy?: PolicyGate;
  private readonly timers?: Pick<HandoffTimers, 'withFirstStep'>;
  /**
   * The read markers this process wrote lately (`thread:viewer` → messages seen): a re-read with nothing new writes
   * none. Short-lived, so a marker another process wrote over with an older count heals within a minute.
   */
  private readonly readMarks = new TtlCache<string, number>(60_000);
  /** Calls a policy holds for people to approve (approvals.ts). */
  readonly approvals: Approvals;
  /** Runs of accepted handoffs by the recipients' own agents (handoff-runs.ts). */
  readonly runs: HandoffRuns;
  /** Each teammate's own history (GET /agents/me/audit). */
  readonly auditTrail: AuditTrail;

  constructor(deps: RelayServiceDeps) {
    this.tokenSecret = deps.tokenSecret ?? randomBytes(32).toString('hex');
    this.tokenTtlMs = deps.handoffTokenTtlMs ?? HANDOFF_TOKEN_TTL_MS;
    this.store = deps.store;
    this.teammates = deps.teammates;
    this.clock = deps.clock ?? systemClock;
    this.publicUrl = deps.publicUrl;
    this.log = deps.log;
    this.ledger = new IdempotencyLedger(deps.store);
    this.auditTrail = new AuditTrail({ store: deps.store, clock: this.clock });
    this.channels = new ChannelBindings(deps.store, this.clock);
    this.policy = deps.policy;
    this.timers = deps.timers;
    this.feed = deps.feed;
    this.outbox = new Outbox({ store: deps.store, events: deps.events, clock: this.clock, log: deps.log });
    this.appender = new MessageAppender({
      store: deps.store,
      teammates: deps.teammates,
      outbox: this.outbox,
      clock: this.clock,
      log: deps.log,
      readThread: (caller, threadId) => this.readThread(caller, threadId),
    });
    this.approvals = new Approvals({ store: deps.store, teammates: deps.teammates, outbox: this.outbox, clock: this.clock, log: deps.log, timers: deps.approvalTimers });
    this.approvals.setAppliers({ transition: this.applyApprovedTransition, message: this.applyApprovedMessage, recheck: this.recheckApproved });
    const feed = deps.feed;
    this.runs = new HandoffRuns({
      store: deps.store,
      outbox: this.outbox,
      clock: this.clock,
      log: deps.log,
      settings: { ...DEFAULT_RUN_SETTINGS, ...deps.runs },
      // A require_approval rule holds the run (approval_pending); approved, applyApprovedMessage queues it.
      gate: async (caller, threadId, via, sessionId) => {
        await this.policyFor(caller, threadId, 'handoff.run', via, sessionId, { task_id: threadId });
      },
      complete: (caller, request, via, key) => this.transition(caller, request, via, key),
      append: (caller, request, via, key) => this.appendMessage(caller, request, via, key),
      ...(feed ? { waitForHint: (handle: string, ms: number, signal?: AbortSignal) => waitForHint(feed, handle, ms, signal) } : {}),
    });
  }

  /** The A2A push notification configs (jsonrpc/a2a-push.ts reads and changes them for participants). */
  get pushConfigs(): MongoStore['pushConfigs'] {
    return this.store.pushConfigs;
  }

  /** Now, by the relay's clock. */
  now(): Date {
    return this.clock.now();
  }

  /** The A2A tasks waiting for their recipient (jsonrpc/a2a-methods.ts). */
  get drafts(): MongoStore['drafts'] {
    return this.store.drafts;
  }

  /** Marks the task as one with push configs (ThreadDoc.push_configs), before its first config is stored. */
  async notePushConfigs(taskId: string): Promise<void> {
    await this.store.writeThread(taskId, (thread) => (thread.push_configs ? undefined : { ...thread, push_configs: true }));
  }

  /** The relay's public base URL (RELAY_PUBLIC_URL), without a trailing slash. */
  get publicUrlBase(): string {
    return this.publicUrl;
  }

  /** The thread's inbox page, signed for `viewer` when given (inbox-links.ts). */
  inboxUrl(threadId: string, viewer?: string): string {
    return inboxUrl(this.publicUrl, this.tokenSecret, threadId, viewer);
  }

  /** The thread behind a signed inbox link, for that participant; null when the link is not genuine. */
  async threadForInboxLink(threadId: string, viewer: string, signature: string): Promise<{ view: ThreadView; viewer: string } | null> {
    if (!isGenuineInboxLink(this.tokenSecret, threadId, viewer, signature)) return null;
    const doc = await this.store.readThread(threadId);
    if (!doc || (doc.from !== viewer && doc.to !== viewer)) return null;
    if (doc.hidden_from_recipient && doc.from !== viewer) return null;
    return { view: await this.view(doc, viewer), viewer };
  }

  // ── create ──────────────────────────────────────────────────────────────────

  async createHandoff(sender: AgentDoc, input: NewHandoff, via: Surface, sessionId?: string): Promise<CreateResult> {
    const [problem] = intentProblems(input);
    if (problem) throw new RelayError('invalid_intent_payload', problem.message);
    const route = await routeHandoff(this.teammates, sender, input.to);
    // Several candidates: the thread waits unclaimed; the policy sees the target as the recipient (its role or skill).
    const recipient = 'recipient' in route ? route.recipient : targetParty(route.target, sender);

    // With a key the id derives from sender + key, so a duplicate is a duplicate-key insert, never a second thread.
    const threadId = input.idempotency_key ? idempotentId(sender.handle, 'create', input.idempotency_key) : randomUUID();
    const now = this.clock.now();
    const pending = newPendingThread({ id: threadId, sender, recipient, input, via, now, eventId: randomUUID() }, (bodyHash) =>
      mintHandoffToken(this.tokenSecret, { id: threadId, team: recipient.team, bodyHash, projectId: declaredProject(input.metadata).project_id }, now, this.tokenTtlMs),
    );
    // A retry under the same key must match what the sender said (the target), whoever the target names by then.
    const asSent = (target: RecipientTarget) => newPendingThread({ id: threadId, sender, recipient: targetParty(target, sender), input, via, now, eventId: '' }, () => null).request_hash;
    const doc =
      'candidates' in route
        ? unclaimedThread(pending, route.target, route.candidates.map((c) => c.handle))
        : route.target
          ? { ...pending, to_target: route.target.label, candidates: [route.recipient.handle], request_hash: asSent(route.target) }
          : pending;
    const bodyHash = doc.request_hash;
    let earlier: ThreadDoc | null = null;
    const isReplay = async () => Boolean(input.idempotency_key && (earlier = await this.store.readThread(threadId)));
    const policy = await this.policy?.check({
      action: 'handoff.create',
      via,
      actor: sender,
      sender,
      recipient,
      intent: input.intent,
      artifacts: input.artifacts,
      target_files: input.proposed_action?.target_files ?? [],
      session_id: sessionId,
    }, isReplay);
    if (policy === 'replay') return this.replayCreate(earlier, bodyHash);
    let held: Awaited<ReturnType<Approvals['holdCreate']>> | undefined;
    if (policy && isHeld(policy)) {
      const { hold, ...stamp } = policy;
      // An approver that does not resolve refuses the create here, before anything is stored. Approved, a handoff
      // to a role, skill or owner with several candidates opens unclaimed (approvals.ts).
      held = await this.approvals.holdCreate(doc, hold, stamp, sender, recipient, via);
    } else if (policy) {
      doc.status_history = doc.status_history.map((entry) => ({ ...entry, policy }));
    }
    // The first timer step is armed on the document the create inserts (its thread.created event then needs no arm
    // job); a held create has no steps until it is approved.
    const stored = held ? doc : await this.withFirstStep(doc);
    const created = await this.outbox.recording(stored.outbox[0]!, async () => {
      try {
        return await this.store.insertThread(stored);
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
        return null;
      }
    });
    if (!created) return this.replayCreate(await this.store.readThread(threadId), bodyHash);
    if (held) await this.approvals.opened(threadId, held);
    this.log.info(
      { thread_id: threadId, from: sender.handle, to: doc.to, candidates: doc.status === 'unclaimed' ? doc.candidates : undefined, via, ...(held ? { approval_id: held.id } : {}) },
      held ? 'handoff held for approval' : 'handoff created',
    );
    return this.createResult(stored);
  }

  /** The new thread with its first timer step armed; as it is when that fails (its thread.created arm job arms it). */
  private async withFirstStep(doc: ThreadDoc): Promise<ThreadDoc> {
    if (!this.timers) return doc;
    return this.timers.withFirstStep(doc).catch((error: Error) => {
      this.log.warn({ thread_id: doc._id, err: error.message }, 'first timer not armed at create; its arm job will');
      return doc;
    });
  }

  // ── claim ───────────────────────────────────────────────────────────────────

  /**
   * A candidate takes an unclaimed handoff: the first claim wins (one versioned write), the claimer becomes the
   * recipient (pending, with a handoff token) and thread.claimed goes out. The claimer asking again answers success;
   * anyone else, or a claim after a cancel, is refused and changes nothing.
   */
  async claim(caller: AgentDoc, threadId: string, via: Surface, sessionId?: string): Promise<ClaimResult> {
    const current = await this.store.readThread(threadId);
    if (current && isRepeatedClaim(caller, current)) return claimResult(current);
    if (!current || !isCandidate(caller.handle, current)) throw explainFailedClaim(caller, threadId, current);
    const policy = await this.claimPolicy(caller, current, via, sessionId);
    const now = this.clock.now();
    const event: OutboxEvent = { id: randomUUID(), type: 'thread.claimed', at: now, by: caller.handle, via };
    let before: ThreadDoc | null = null;
    const after = await this.outbox.recording(event, async () => {
      const written = await this.store.writeThread(threadId, (doc) => {
        const token = mintHandoffToken(this.tokenSecret, { id: doc._id, team: caller.team, bodyHash: doc.body_hash, projectId: declaredProject(doc.metadata).project_id }, now, this.tokenTtlMs);
        return claimedThread(doc, { claimer: caller, now, via, event, token, ...(policy ? { policy } : {}) });
      });
      before = written.before;
      return written.after;
    });
    if (!after) {
      const seen = before as ThreadDoc | null;
      if (seen && isRepeatedClaim(caller, seen)) return claimResult(seen);
      throw explainFailedClaim(caller, threadId, seen);
    }
    this.log.info({ thread_id: threadId, claimed_by: caller.handle, via }, 'handoff claimed');
    return claimResult(after);
  }

  /** The policy as if the handoff had been sent to the claimer directly: a rule that denies that pair denies the claim. */
  private async claimPolicy(caller: AgentDoc, doc: ThreadDoc, via: Surface, sessionId?: string): Promise<PolicyStamp | undefined> {
    if (!this.policy) return undefined;
    const sender = await this.teammates.get(doc.from);
    if (!sender) return undefined;
    return this.asIfSent(sender, caller, doc, via, sessionId);
  }

  /** The policy's `handoff.create` for this thread sent from `sender` to `caller` (a claim, a Reassign): a deny refuses with policy_denied. */
  private async asIfSent(sender: AgentDoc, caller: AgentDoc, doc: ThreadDoc, via: Surface, sessionId?: string): Promise<PolicyStamp | undefined> {
    if (!this.policy) return undefined;
    const decision = await this.policy.explain({ action: 'handoff.create', via, actor: sender, sender, recipient: caller, ...threadFacts(doc), thread_id: doc._id, session_id: sessionId });
    if (decision.effect === 'deny') {
      throw new RelayError('policy_denied', `Policy rule ${decision.rule_id ?? 'default'} denies handoffs from ${doc.from} to ${caller.handle}: ${decision.reason}`, {
        rule_id: decision.rule_id,
        policy_version: decision.policy_version,
        reason: decision.reason,
      });
    }
    return { rule_id: decision.rule_id, effect: decision.effect, policy_version: decision.policy_version };
  }

  // ── read ────────────────────────────────────────────────────────────────────

  /** The thread as a participant sees it; anyone else gets not_a_participant. */
  async readThread(caller: AgentDoc, threadId: string): Promise<ThreadDoc> {
    const doc = await this.store.readThread(threadId);
    if (!doc) throw new RelayError('thread_not_found', `No thread ${threadId}`);
    assertParticipant(caller, doc);
    return doc;
  }

  /** The whole thread for a participant (or a candidate of an unclaimed one); reading it marks the other side's messages as read. */
  async threadViewFor(caller: AgentDoc, threadId: string): Promise<ThreadView> {
    const doc = await this.store.readThread(threadId);
    if (!doc) throw new RelayError('thread_not_found', `No thread ${threadId}`);
    if (!isCandidate(caller.handle, doc)) assertParticipant(caller, doc);
    const view: ThreadView = await this.view(doc, caller.handle);
    if (doc.to === caller.handle && doc.handoff_token) {
      view.handoff_token = deriveHandoffToken(this.tokenSecret, doc._id, doc.handoff_token.nonce);
      view.handoff_token_expires_at = doc.handoff_token.expires_at.toISOString();
    }
    const seen = doc.message_counts[doc.from === caller.handle ? 'to' : 'from'];
    const readId = `${threadId}:${caller.handle}`;
    // Message counts only grow, so a marker this process wrote with the same count is still the newest one.
    if (this.readMarks.get(readId) !== seen) {
      await putById(this.store.threadReads, readId, { seen, at: this.clock.now() });
      this.readMarks.set(readId, seen);
    }
    return view;
  }

  async view(doc: ThreadDoc, viewer?: string): Promise<ThreadView> {
    const newest = Array.from({ length: Math.min(doc.message_seq, MESSAGES_PER_READ) }, (_, i) => doc.message_seq - i);
    const [from, to, messages] = await Promise.all([this.teammates.get(doc.from), this.teammates.get(doc.to), this.store.messagesOf(doc, newest)]);
    return threadView(doc, { from, to }, messages.map(messageView), this.inboxUrl(doc._id, viewer));
  }

  async threadById(threadId: string): Promise<ThreadDoc | null> {
    return this.store.readThread(threadId);
  }

  /** A page of the caller's threads, newest first (thread-list.ts). */
  async listThreads(caller: AgentDoc, request: ListRequest): Promise<ThreadPage> {
    return listThreads({ store: this.store, teammates: this.teammates }, caller, request);
  }

  /**
   * A page of every task the caller can see, newest first, and how many match in all (A2A ListTasks): the threads
   * (sent, received, unclaimed with them a candidate) as whole views, and their own A2A tasks still waiting for a
   * recipient (`draftStatuses` says which of those match; none, when the status asked for is no draft's), merged
   * under one cursor. Listing marks nothing as read.
   */
  async listVisibleTasks(
    caller: AgentDoc,
    request: Omit<VisibleQuery, 'handle'> & { draftStatuses: DraftQuery['statuses'] },
  ): Promise<{ items: VisibleTask[]; next_cursor: string | null; total: number }> {
    const { draftStatuses, ...query } = request;
    const threadsWanted = query.statuses === undefined || query.statuses.length > 0;
    const after = query.cursor ? cursorPosition(query.cursor) : undefined;
    const [threads, drafts] = await Promise.all([
      threadsWanted ? this.store.lists.visiblePage({ ...query, handle: caller.handle }) : { threads: [], next_cursor: null, total: 0 },
      draftStatuses.length
        ? this.store.drafts.page({ from: caller.handle, statuses: draftStatuses, since: query.statusSince, id: query.threadId, after, limit: query.limit + 1 })
        : { drafts: [], total: 0 },
    ]);
    const merged = [...threads.threads.map((doc) => ({ doc, draft: false })), ...drafts.drafts.map((doc) => ({ doc, draft: true }))].sort(
      (a, b) => b.doc.created_at.getTime() - a.doc.created_at.getTime() || (a.doc._id < b.doc._id ? 1 : a.doc._id > b.doc._id ? -1 : 0),
    );
    const page = merged.slice(0, query.limit);
    const last = page[page.length - 1];
    const more = merged.length > query.limit || threads.next_cursor !== null;
    const items = await Promise.all(
      page.map(async ({ doc, draft }): Promise<VisibleTask> => (draft ? { draft: doc as DraftDoc } : { view: await this.view(doc as ThreadDoc, caller.handle) })),
    );
    return { items, next_cursor: more && last ? cursorAfter(last.doc) : null, total: threads.total + drafts.total };
  }

  // ── change ──────────────────────────────────────────────────────────────────

  /** Accept, complete, decline (recipient) or cancel (sender); idempotent under the caller's key. */
  async transition(caller: AgentDoc, request: TransitionRequest, via: Surface, idempotencyKey?: string, sessionId?: string): Promise<TransitionAnswer> {
    const { expected_status: _shown, ...body } = request;
    return this.ledger.run(caller.handle, idempotencyKey, { method: 'transition', ...body }, async () => {
      try {
        return await this.transitionOnce(caller, request, via, sessionId);
      } catch (error) {
        // Only a refusal as no participant costs a second read: it may be a candidate of an unclaimed handoff.
        if (!(error instanceof RelayError) || error.code !== 'not_a_participant') throw error;
        const current = await this.store.readThread(request.thread_id);
        if (current && isCandidate(caller.handle, current)) {
          // An agent accepting an unclaimed handoff it is a candidate for claims it first (accept_handoff, tasks/update).
          if (request.transition !== 'accept' || request.expected_status !== undefined) {
            throw new RelayError('invalid_transition', `This handoff to ${current.to_target} is unclaimed: claim it first (tasks/update "claim", or accept_handoff, which claims and accepts)`, { status: current.status });
          }
          await this.claim(caller, request.thread_id, via, sessionId);
          return this.transitionOnce(caller, request, via, sessionId);
        }
        // A candidate who lost the claim hears who has it, not that they are no participant.
        if (current?.claimed_by && current.claimed_by !== caller.handle && current.candidates?.includes(caller.handle)) throw explainFailedClaim(caller, request.thread_id, current);
        throw error;
      }
    });
  }

  private async transitionOnce(caller: AgentDoc, request: TransitionRequest, via: Surface, sessionId?: string): Promise<TransitionAnswer> {
    const { expected_status: _shown, ...body } = request;
    const { stamp: policy, read } = await this.policyFor(caller, request.thread_id, `handoff.${request.transition}`, via, sessionId, { ...body });
    let refused: (Verdict & { accepted: false }) | undefined;
    let passed: (Verdict & { accepted: true }) | undefined;
    const after = await this.applyTransition(caller, request, via, policy, read, (doc, now) => {
      // The verdict runs on the very version the accept writes, so a check and its write cannot drift apart.
      passed = undefined;
      refused = undefined;
      const verdict = acceptanceVerdict(this.verdictInput(doc, request, via), {
        thread: doc,
        token: doc.handoff_token ?? null,
        recipient_tools: caller.tools ?? [],
        now,
      }, caller.team);
      if (verdict.accepted) passed = { ...verdict, accepted: true };
      else refused = { ...verdict, accepted: false };
      return verdict.accepted;
    });
    if (refused) {
      const current = after ?? (await this.threadById(request.thread_id));
      return { thread_id: request.thread_id, status: current?.status ?? 'pending', accepted_at: null, ...refused };
    }
    const view = transitionView(after!);
    // Old callers (no verdict inputs) keep the plain answer; callers who asked for checks get the verdict alongside.
    return passed && request.verdict ? { ...view, ...passed } : view;
  }

  /**
   * What the verdict judges. A Slack click carries no inputs, but Slack has already proved the clicker is the
   * recipient, so the Slack path presents the recipient's own handoff token: an expired handoff is refused there
   * too, and an agent presenting the same token and delivery_source gets the very same verdict.
   */
  private verdictInput(doc: ThreadDoc, request: TransitionRequest, via: Surface): VerdictInput {
    const input = request.verdict ?? {};
    if (via !== 'slack' || input.goal_token !== undefined || !doc.handoff_token) return input;
    return { goal_token: deriveHandoffToken(this.tokenSecret, doc._id, doc.handoff_token.nonce), delivery_source: SLACK_DELIVERY_SOURCE, ...input };
  }

  private async applyTransition(
    caller: AgentDoc,
    request: TransitionRequest,
    via: Surface,
    policy: PolicyStamp | undefined,
    /** The thread as this request last read it (the policy's read): the write starts from it instead of reading again. */
    read: ThreadDoc | undefined,
    gate?: (doc: ThreadDoc, now: Date) => boolean,
  ): Promise<ThreadDoc | null> {
    const rule = TRANSITIONS[request.transition];
    const now = this.clock.now();
    const event: OutboxEvent = { id: randomUUID(), type: rule.event, at: now, by: caller.handle, via };
    let gateRefused = false;
    let repeated = false;
    let before: ThreadDoc | null = null;
    const after = await this.outbox.recording(event, async () => {
      const written = await this.store.writeThread(request.thread_id, (doc) => {
      gateRefused = false;
      repeated = false;
      if (doc[rule.actor] !== caller.handle) return undefined;
      // A presented token is judged even on a thread that is no longer pending (already_consumed).
      const judged = request.transition === 'accept' && gate && (rule.from.includes(doc.status) || request.verdict?.goal_token !== undefined);
      if (judged && !gate(doc, now)) {
        gateRefused = true;
        return undefined;
      }
      if (isRepeatedTransition(caller, request, rule, doc)) {
        repeated = true;
        return undefined;
      }
      if (!rule.from.includes(doc.status)) return undefined;
      if (request.expected_status && doc.status !== request.expected_status) return undefined;
      if (doc.hidden_from_recipient && rule.actor === 'to') return undefined;
      return this.transitioned(doc, request, rule, caller, via, policy, event, now);
      }, read);
      before = written.before;
      return written.after;
    });
    if (gateRefused) return before;
    if (repeated) {
      this.log.debug({ thread_id: request.thread_id, transition: request.transition, by: caller.handle, via }, 'repeated transition answered with the current state');
      return before;
    }
    if (!after) throw explainFailedTransition(caller, request, rule, before);
    this.log.info({ thread_id: after._id, transition: request.transition, by: caller.handle, via }, 'thread transition');
    return after;
  }

  // ── follow-ups of the timers (docs/timers.md) ──────

  /**
   * The sender hands a pending handoff to another teammate (Reassign): one versioned write changes `to`, re-binds the
   * handoff token to the new body, starts the timers over, and drops the old recipient's Slack records, so the new
   * recipient gets the normal DM (with the thread's messages as replies) and the old DM is redrawn to say it moved.
   */
  async reassign(caller: AgentDoc, threadId: string, to: string, via: Surface): Promise<ThreadDoc> {
    const recipient = await this.teammates.get(to);
    if (!recipient || recipient.status !== 'active') throw new RelayError('recipient_not_found', `No active teammate with handle ${to}`);
    if (recipient.handle === caller.handle) throw new RelayError('invalid_params', 'You cannot reassign a handoff to yourself');
    this.teammates.assertNotBlocked(caller, recipient);
    // Reassign is a create to the new recipient as far as the policy goes: a rule denying that pair refuses it.
    const current = this.policy ? await this.store.readThread(threadId) : null;
    const policy = current && current.from === caller.handle ? await this.asIfSent(caller, recipient, current, via) : undefined;
    const now = this.clock.now();
    const event: OutboxEvent = { id: randomUUID(), type: 'thread.reassigned', at: now, by: caller.handle, via };
    let before: ThreadDoc | null = null;
    const after = await this.outbox.recording(event, async () => {
      const written = await this.store.writeThread(threadId, (doc) => {
        // An unclaimed handoff nobody claimed can be handed to one teammate too (its escalation offers Reassign).
        if (doc.from !== caller.handle || (doc.status !== 'pending' && doc.status !== 'unclaimed') || doc.to === recipient.handle) return undefined;
        const body = { from: doc.from, to: recipient.handle, intent: doc.intent, summary: doc.summary, question: doc.question, proposed_action: doc.proposed_action, artifacts: doc.artifacts, metadata: doc.metadata };
        const bodyHash = canonicalHash(withCanonicalLines(body));
        const keep = (key: string) => !key.startsWith('recipient') && key !== 'escalation' && !key.includes(':t:');
        return {
          ...doc,
          to: recipient.handle,
          team: recipient.team,
          body_hash: bodyHash,
          status: 'pending',
          handoff_token: doc.handoff_token || doc.status === 'unclaimed'
            ? mintHandoffToken(this.tokenSecret, { id: doc._id, team: recipient.team, bodyHash, projectId: declaredProject(doc.metadata).project_id }, now, this.tokenTtlMs)
            : doc.handoff_token,
          updated_at: now,
          timers: { fired: {}, since: now },
          status_history: [...doc.status_history, { status: 'pending', by: caller.handle, at: now, via, ...(policy ? { policy } : {}) }],
          slack: null,
          slack_replies: Object.fromEntries(Object.entries(doc.slack_replies ?? {}).filter(([key]) => keep(key))),
          slack_pending: Object.fromEntries(Object.entries(doc.slack_pending ?? {}).filter(([key]) => keep(key))),
          reassigned_from: [...(doc.reassigned_from ?? []), { handle: doc.to, slack: doc.slack, at: now, by: caller.handle }],
          outbox: [...doc.outbox, event],
        };
      });
      before = written.before;
      return written.after;
    });
    if (after) {
      this.log.info({ thread_id: threadId, from: (before as ThreadDoc | null)?.to, to: recipient.handle, by: caller.handle, via }, 'handoff reassigned');
      return after;
    }
    const doc = before as ThreadDoc | null;
    if (!doc) throw new RelayError('thread_not_found', `No thread ${threadId}`);
    if (doc.from !== caller.handle) throw new RelayError('not_authorized_transition', `Only the sender (${doc.from}) can reassign this handoff`);
    if (doc.to === recipient.handle) throw new RelayError('invalid_params', `The handoff already goes to ${recipient.handle}`);
    throw new RelayError(TERMINAL.includes(doc.status) ? 'thread_terminal' : 'invalid_transition', `Only a pending or unclaimed handoff can be reassigned; this one is ${doc.status}`, { status: doc.status });
  }

  /**
   * The sender's Resend of an expired handoff: a new handoff with the same body, `metadata.resent_from` naming the
   * old one, which records `resent_as`. Its idempotency key derives from the old thread, so Resend twice is one new handoff.
   */
  async resend(caller: AgentDoc, threadId: string, via: Surface): Promise<CreateResult> {
    const doc = await this.readThread(caller, threadId);
    if (doc.from !== caller.handle) throw new RelayError('not_authorized_transition', `Only the sender (${doc.from}) can resend this handoff`);
    if (doc.status !== 'expired') throw new RelayError('invalid_transition', `Only an expired handoff can be resent; this one is ${doc.status}`, { status: doc.status });
    const created = await this.createHandoff(
      caller,
      {
        to: doc.to,
        intent: doc.intent,
        summary: doc.summary,
        ...(doc.question !== null ? { question: doc.question } : {}),
        artifacts: doc.artifacts,
        proposed_action: doc.proposed_action,
        metadata: { ...doc.metadata, resent_from: doc._id },
        idempotency_key: `resend:${doc._id}`,
      },
      via,
    );
    await this.store.writeThread(threadId, (d) => (d.resent_as ? undefined : { ...d, resent_as: created.task_id }));
    return created;
  }

  /** Appends a message (message-append.ts); idempotent under the caller's key. */
  async appendMessage(caller: AgentDoc, request: AppendRequest, via: Surface, idempotencyKey?: string, sessionId?: string): Promise<AppendResult> {
    return this.ledger.run(caller.handle, idempotencyKey, { method: 'append', ...request }, async (turn) => {
      // A draft for a proposed action (draft_proposed_action marks it) is its own action, so a rule can hold drafts apart.
      const action = request.payload?.kind === 'draft' ? 'draft.attach' : 'message.append';
      // A held append answers approval_pending; approved, it is appended as the caller (applyApprovedMessage).
      const { read } = await this.policyFor(caller, request.thread_id, action, via, sessionId, { ...request });
      return this.appender.append(caller, request, via, turn, read);
    });
  }

  /** Enqueues what missed its queue and finishes interrupted writes (outbox.ts); the number of events enqueued. */
  async sweepOutbox(settleMs: number, limit = 500): Promise<number> {
    return this.outbox.sweep(settleMs, limit);
  }

  private replayCreate(original: ThreadDoc | null, bodyHash: string): CreateResult {
    if (!original || original.request_hash !== bodyHash) {
      throw new RelayError('duplicate_idempotency_key', 'This idempotency key was already used with a different request body');
    }
    return this.createResult(original);
  }

  /**
   * The policy's stamp for a change to an existing thread; none when the thread is not the caller's to change.
   * A call a rule holds for approval (`args`: the transition asked for) is recorded as an approval request and
   * answered approval_pending: nothing else changes until it is approved. `read`: the thread as it read it to
   * judge (none without a policy, or once an approval request has written it), for the change to start from.
   */
  private async policyFor(
    caller: AgentDoc,
    threadId: string,
    action: Parameters<PolicyGate['check']>[0]['action'],
    via: Surface,
    sessionId: string | undefined,
    args: Record<string, unknown>,
  ): Promise<{ stamp: PolicyStamp | undefined; read?: ThreadDoc }> {
    if (!this.policy) return { stamp: undefined };
    const doc = await this.store.readThread(threadId);
    if (!doc) return { stamp: undefined };
    const none = { stamp: undefined, read: doc };
    if (doc.from !== caller.handle && doc.to !== caller.handle) return none;
    if (doc.hidden_from_recipient && doc.to === caller.handle && doc.from !== caller.handle) return none;
    const [sender, recipient] = await Promise.all([this.teammates.get(doc.from), this.teammates.get(doc.to)]);
    if (!sender || !recipient) return none;
    const stamp = await this.policy.check({ action, via, actor: caller, sender, recipient, ...threadFacts(doc), thread_id: doc._id, session_id: sessionId });
    if (stamp === 'replay') return none;
    if (!isHeld(stamp)) return { stamp, read: doc };
    const { hold: rule, ...plain } = stamp;
    // A request may have written the thread: what was read is no longer worth starting from.
    return { stamp: await this.approvals.request(caller, doc, { action, args, via, rule, stamp: plain, sender, recipient }) };
  }

  /**
   * An approved message.append or draft.attach, appended as its actor by the normal append; the approval id is the
   * idempotency key, so however many processes finish the approval the message is appended once.
   */
  private readonly applyApprovedMessage: ApprovalAppliers['message'] = async (doc, record, actor) => {
    if (record.action === 'handoff.run') {
      // Queued once however often it is asked: an active run of the thread is the one this approval queued.
      try {
        const run = await this.runs.request(actor, doc._id, record.via, undefined, { approved: true });
        return { message: `${record.action} was applied as ${actor.handle} (run ${run.run_id} ${run.status})` };
      } catch (error) {
        if (error instanceof RelayError && error.code !== 'internal' && error.code !== 'state_changed' && error.code !== 'unavailable') return { refusal: error.message };
        throw error;
      }
    }
    const request = record.args as unknown as AppendRequest;
    try {
      const done = await this.ledger.run(actor.handle, `approval:${record.id}`, { method: 'append', ...request }, (turn) => this.appender.append(actor, request, record.via, turn));
      return { message: `${record.action} was applied as ${actor.handle} (message ${done.sequence_no})` };
    } catch (error) {
      if (error instanceof RelayError && error.code !== 'internal' && error.code !== 'state_changed' && error.code !== 'unavailable') return { refusal: error.message };
      throw error;
    }
  };

  /** The policy in force now, asked about an approved call as it was asked: a rule that denies it now refuses it. */
  private readonly recheckApproved: ApprovalAppliers['recheck'] = async (doc, record, actor) => {
    if (!this.policy) return null;
    const target = doc.to_target && doc.to === doc.to_target ? parseRecipient(doc.to_target) : null;
    const [sender, recipient] = await Promise.all([this.teammates.get(doc.from), target ? null : this.teammates.get(doc.to)]);
    const to = recipient ?? (target && 'label' in target && sender ? targetParty(target, sender) : null);
    if (!sender || !to) return `${!sender ? doc.from : doc.to} is no longer a teammate`;
    const decision = await this.policy.explain({ action: record.action, via: record.via, actor, sender, recipient: to, ...threadFacts(doc), thread_id: doc._id });
    if (decision.effect !== 'deny') return null;
    return `the policy changed since it was asked: rule ${decision.rule_id ?? 'default'} (policy ${decision.policy_version}) now denies ${record.action}: ${decision.reason}`;
  };

  /**
   * An approved transition, applied to `doc` as the actor who asked for it: the same checks and the same change as
   * when it is asked for directly (the acceptance verdict included), or why it no longer applies.
   */
  private readonly applyApprovedTransition: ApplyApproved = (doc, record, actor, emit, now) => {
    const request = record.args as unknown as TransitionRequest;
    const rule = TRANSITIONS[request.transition];
    if (!rule) return { refusal: `${record.action} is not a transition` };
    if (doc[rule.actor] !== actor.handle) return { refusal: `${actor.handle} can no longer ${request.transition} this handoff` };
    if (!rule.from.includes(doc.status)) return { refusal: `the handoff is ${doc.status} now` };
    if (request.transition === 'accept') {
      const verdict = acceptanceVerdict(this.verdictInput(doc, request, record.via), { thread: doc, token: doc.handoff_token ?? null, recipient_tools: actor.tools ?? [], now }, actor.team);
      if (!verdict.accepted) return { refusal: `the acceptance checks refused it (${verdict.result}: ${verdict.reasons.join('; ')})` };
    }
    const event = emit(rule.event);
    const policy: PolicyStamp = { rule_id: record.rule_id, effect: 'require_approval', policy_version: record.policy_version };
    return { next: this.transitioned(doc, request, rule, actor, record.via, policy, event, now), type: rule.event };
  };

  /** The thread after `request`'s transition by `caller` (its preconditions already checked). */
  private transitioned(
    doc: ThreadDoc,
    request: TransitionRequest,
    rule: (typeof TRANSITIONS)[TransitionName],
    caller: AgentDoc,
    via: Surface,
    policy: PolicyStamp | undefined,
    event: OutboxEvent,
    now: Date,
  ): ThreadDoc {
    return {
      ...doc,
      ...(request.transition === 'accept' && doc.handoff_token ? { handoff_token: { ...doc.handoff_token, consumed_at: now } } : {}),
      status: rule.to,
      updated_at: now,
      [rule.stamp]: now,
      ...(request.transition === 'complete' ? { completed_summary: request.result_summary ?? null, completion_artifacts: request.artifacts ?? [] } : {}),
      ...(request.transition === 'decline' ? { decline_reason: request.reason ?? null } : {}),
      ...(request.transition === 'cancel' ? { cancel_reason: request.reason ?? null } : {}),
      status_history: [...doc.status_history, { status: rule.to, by: caller.handle, at: now, via, ...(policy ? { policy } : {}) }],
      outbox: [...doc.outbox, event],
    };
  }

  private createResult(doc: ThreadDoc): CreateResult {
    const held = doc.approvals?.find((a) => a.action === 'handoff.create');
    return {
      task_id: doc._id,
      // A replay answers what the create answered: held when it was held, whatever happened since.
      status: { state: held ? 'awaiting_approval' : doc.status === 'unclaimed' ? 'unclaimed' : 'pending' },
      created_at: doc.created_at.toISOString(),
      inbox_url: this.inboxUrl(doc._id, doc.from),
      recipient: doc.to,
      ...(doc.status === 'unclaimed' ? { candidates: doc.candidates ?? [] } : {}),
      ...(held ? { approval: { approval_id: held.id, approvers: describeApprovers(held.approvers.filter((a) => a.step === 0)).split(', '), quorum: held.quorum, rule_id: held.rule_id } } : {}),
    };
  }
}

/** Resolves after `ms`, or as soon as a hint says `handle`'s event log grew, or `signal` aborts. */
function waitForHint(feed: EventFeed, handle: string, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      unsubscribe();
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    const unsubscribe = feed.subscribe(handle, done);
    signal?.addEventListener('abort', done);
  });
}

function isHeld(stamp: PolicyStamp | HeldStamp): stamp is HeldStamp {
  return 'hold' in stamp;
}

function claimResult(doc: ThreadDoc): ClaimResult {
  return { thread_id: doc._id, status: doc.status, recipient: doc.to, claimed_by: doc.claimed_by!, claimed_at: doc.claimed_at?.toISOString() ?? null };
}

/** The target standing in for the recipient in the policy's facts while no one has claimed the handoff. */
function targetParty(target: RecipientTarget, sender: AgentDoc): AgentDoc {
  return {
    ...sender,
    _id: target.label,
    handle: target.label,
    name: target.label,
    role: target.kind === 'role' ? target.value : '',
    skills: target.kind === 'skill' ? [target.value] : [],
    repos_owned: target.kind === 'owner' ? [target.value] : [],
    slack_user_id: null,
    // A target has no lead: recipient_lead names nobody (the sender's lead is not the target's).
    lead: null,
    blocked: [],
    notification: null,
  };
}
