// The relay service: every surface (A2A, MCP, Slack, web) calls these operations.
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { systemClock, type Clock } from '../domain/clock';
import type { AgentDoc, ThreadDoc } from '../domain/documents';
import type { NewHandoff, Surface } from '../domain/schemas';
import type { MongoStore } from '../store/mongo-store';
import type { JobQueue } from '../queues/bullmq-queues';
import type { EventPublisher } from './event-publisher';
import type { HandoffTimers } from './handoff-timers';
import { HANDOFF_TOKEN_TTL_MS, HandoffTokens } from './handoff-tokens';
import { IdempotencyLedger } from './idempotency';
import { InboxLinks } from './inbox-links';
import { MessageAppender, type AppendRequest, type AppendResult } from './message-append';
import { Outbox } from './outbox';
import { ApprovalRecords } from './approval-records';
import { Approvers } from './approval-approvers';
import { ApprovalTimers } from './approval-timers';
import { ApprovalRequests } from './approval-requests';
import { ApprovalDecisions } from './approval-decisions';
import { ApprovalViews } from './approval-views';
import { ApprovalSweep } from './approval-sweep';
import { approvedCallAppliers } from './approved-calls';
import { ChannelBindings } from './channel-bindings';
import type { EventFeed } from './event-feed';
import { DEFAULT_RUN_SETTINGS, HandoffRuns, type RunSettings } from './handoff-runs';
import type { PolicyGate } from './policy-gate';
import { ThreadPolicy } from './thread-policy';
import type { Teammates } from './teammates';
import { AuditTrail } from './audit-trail';
import type { ListRequest, ThreadPage } from './thread-list';
import { ThreadReads } from './thread-reads';
import { Claims, type ClaimResult } from './claims';
import { Transitions, type TransitionRequest } from './transitions';
import { Messages } from './messages';
import { PushConfigs } from './push-configs';
import { CreateHandoff, type CreateResult } from './create-handoff';
import { Reassignments } from './reassignments';
import type { ThreadView, TransitionAnswer } from './wire-views';

export type { VisibleTask } from './thread-reads';
export type { ClaimResult } from './claims';
export type { CreateResult } from './create-handoff';
export { SLACK_DELIVERY_SOURCE, type TransitionRequest } from './transitions';

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

/**
 * The relay's use cases, built once from their ports (createRelay): each surface (JSON-RPC methods, MCP tools, Slack
 * listeners and processors, the web page, the CLI) is given the ones it calls.
 */
export interface Relay {
  teammates: Teammates;
  /** Where unclaimed handoffs to a role, skill or owner are posted in Slack. */
  channels: ChannelBindings;
  /** The teammates' event logs (event-feed.ts), for readers that wait on them. */
  feed?: EventFeed;
  /** Each teammate's own history (GET /agents/me/audit). */
  auditTrail: AuditTrail;
  clock: Clock;
  links: InboxLinks;
  reads: ThreadReads;
  creates: CreateHandoff;
  claims: Claims;
  transitions: Transitions;
  messages: Messages;
  reassignments: Reassignments;
  /** Enqueues what missed its queue and finishes interrupted writes (outbox.ts). */
  outbox: Outbox;
  /** Runs of accepted handoffs by the recipients' own agents (handoff-runs.ts). */
  runs: HandoffRuns;
  approvers: Approvers;
  approvalRecords: ApprovalRecords;
  approvalDecisions: ApprovalDecisions;
  approvalViews: ApprovalViews;
  approvalTimers: ApprovalTimers;
  approvalSweep: ApprovalSweep;
  pushConfigs: PushConfigs;
  /** The A2A tasks waiting for their recipient (jsonrpc/a2a-methods.ts). */
  drafts: MongoStore['drafts'];
}

export class RelayService implements Relay {
  readonly teammates: Teammates;
  readonly channels: ChannelBindings;
  readonly feed?: EventFeed;
  readonly auditTrail: AuditTrail;
  readonly clock: Clock;
  readonly links: InboxLinks;
  readonly reads: ThreadReads;
  readonly creates: CreateHandoff;
  readonly claims: Claims;
  readonly transitions: Transitions;
  readonly messages: Messages;
  readonly reassignments: Reassignments;
  readonly outbox: Outbox;
  readonly runs: HandoffRuns;
  readonly approvers: Approvers;
  readonly approvalRecords: ApprovalRecords;
  readonly approvalDecisions: ApprovalDecisions;
  readonly approvalViews: ApprovalViews;
  readonly approvalTimers: ApprovalTimers;
  readonly approvalSweep: ApprovalSweep;
  readonly pushConfigs: PushConfigs;
  readonly drafts: MongoStore['drafts'];
  private readonly appender: MessageAppender;
  private readonly ledger: IdempotencyLedger;
  private readonly tokens: HandoffTokens;
  private readonly policy: ThreadPolicy;
  /** Calls a policy holds for people to approve (approvals.ts): who approves, their decisions, the views, the timers. */
  readonly approvals: {
    get: ApprovalRecords['get'];
    voterFor: Approvers['voterFor'];
    decide: ApprovalDecisions['decide'];
    viewFor: ApprovalViews['viewFor'];
    forThread: ApprovalViews['forThread'];
    list: ApprovalViews['list'];
    fire: ApprovalTimers['fire'];
    sweep: ApprovalSweep['sweep'];
  };

  constructor(deps: RelayServiceDeps) {
    const tokenSecret = deps.tokenSecret ?? randomBytes(32).toString('hex');
    this.tokens = new HandoffTokens(tokenSecret, deps.handoffTokenTtlMs ?? HANDOFF_TOKEN_TTL_MS);
    this.links = new InboxLinks(deps.publicUrl, tokenSecret);
    this.pushConfigs = new PushConfigs(deps.store);
    this.drafts = deps.store.drafts;
    this.teammates = deps.teammates;
    this.clock = deps.clock ?? systemClock;
    this.ledger = new IdempotencyLedger(deps.store);
    this.auditTrail = new AuditTrail({ store: deps.store, clock: this.clock });
    this.channels = new ChannelBindings(deps.store, this.clock);
    this.reads = new ThreadReads({ store: deps.store, teammates: deps.teammates, links: this.links, tokens: this.tokens, clock: this.clock });
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
    const records = (this.approvalRecords = new ApprovalRecords({ store: deps.store, log: deps.log }));
    const approvers = (this.approvers = new Approvers({ teammates: deps.teammates }));
    const approvalTimers = (this.approvalTimers = new ApprovalTimers({ store: deps.store, outbox: this.outbox, teammates: deps.teammates, records, approvers, queue: deps.approvalTimers, clock: this.clock, log: deps.log }));
    const requests = new ApprovalRequests({ store: deps.store, outbox: this.outbox, approvers, records, timers: approvalTimers, clock: this.clock, log: deps.log });
    this.policy = new ThreadPolicy({ store: deps.store, teammates: deps.teammates, gate: deps.policy, requests });
    this.claims = new Claims({ store: deps.store, outbox: this.outbox, tokens: this.tokens, policy: this.policy, clock: this.clock, log: deps.log });
    this.transitions = new Transitions({ store: deps.store, outbox: this.outbox, ledger: this.ledger, tokens: this.tokens, policy: this.policy, claims: this.claims, clock: this.clock, log: deps.log });
    this.messages = new Messages({ ledger: this.ledger, appender: this.appender, policy: this.policy });
    this.creates = new CreateHandoff({
      store: deps.store,
      teammates: deps.teammates,
      outbox: this.outbox,
      tokens: this.tokens,
      links: this.links,
      gate: deps.policy,
      approvals: requests,
      timers: deps.timers,
      clock: this.clock,
      log: deps.log,
    });
    this.reassignments = new Reassignments({
      store: deps.store,
      teammates: deps.teammates,
      outbox: this.outbox,
      tokens: this.tokens,
      policy: this.policy,
      reads: this.reads,
      creates: this.creates,
      clock: this.clock,
      log: deps.log,
    });
    const feed = deps.feed;
    this.runs = new HandoffRuns({
      store: deps.store,
      outbox: this.outbox,
      clock: this.clock,
      log: deps.log,
      settings: { ...DEFAULT_RUN_SETTINGS, ...deps.runs },
      // A require_approval rule holds the run (approval_pending); approved, approved-calls.ts queues it.
      gate: async (caller, threadId, via, sessionId) => {
        await this.policy.forChange(caller, threadId, 'handoff.run', via, sessionId, { task_id: threadId });
      },
      complete: (caller, request, via, key) => this.transition(caller, request, via, key),
      append: (caller, request, via, key) => this.appendMessage(caller, request, via, key),
      ...(feed ? { waitForHint: (handle: string, ms: number, signal?: AbortSignal) => waitForHint(feed, handle, ms, signal) } : {}),
    });
    const appliers = approvedCallAppliers({ transitions: this.transitions, messages: this.messages, runs: this.runs, policy: this.policy });
    const decisions = (this.approvalDecisions = new ApprovalDecisions({ store: deps.store, outbox: this.outbox, teammates: deps.teammates, records, appliers, clock: this.clock, log: deps.log }));
    const views = (this.approvalViews = new ApprovalViews({ store: deps.store, records }));
    const sweep = (this.approvalSweep = new ApprovalSweep({ store: deps.store, records, timers: approvalTimers, decisions, clock: this.clock }));
    this.approvals = {
      get: (id) => records.get(id),
      voterFor: (identity) => approvers.voterFor(identity),
      decide: (...args) => decisions.decide(...args),
      viewFor: (caller, id) => views.viewFor(caller, id),
      forThread: (caller, thread) => views.forThread(caller, thread),
      list: (filter, limit) => views.list(filter, limit),
      fire: (id) => approvalTimers.fire(id),
      sweep: (limit) => sweep.sweep(limit),
    };
  }

  /** Now, by the relay's clock. */
  now(): Date {
    return this.clock.now();
  }

  /** Marks the task as one with push configs (ThreadDoc.push_configs), before its first config is stored. */
  async notePushConfigs(taskId: string): Promise<void> {
    await this.pushConfigs.mark(taskId);
  }

  /** The relay's public base URL (RELAY_PUBLIC_URL), without a trailing slash. */
  get publicUrlBase(): string {
    return this.links.publicUrl;
  }

  /** The thread's inbox page, signed for `viewer` when given (inbox-links.ts). */
  inboxUrl(threadId: string, viewer?: string): string {
    return this.links.url(threadId, viewer);
  }

  threadForInboxLink(threadId: string, viewer: string, signature: string): Promise<{ view: ThreadView; viewer: string } | null> {
    return this.reads.threadForInboxLink(threadId, viewer, signature);
  }

  // ── create ──────────────────────────────────────────────────────────────────

  createHandoff(sender: AgentDoc, input: NewHandoff, via: Surface, sessionId?: string): Promise<CreateResult> {
    return this.creates.create(sender, input, via, sessionId);
  }

  // ── claim ───────────────────────────────────────────────────────────────────

  claim(caller: AgentDoc, threadId: string, via: Surface, sessionId?: string): Promise<ClaimResult> {
    return this.claims.claim(caller, threadId, via, sessionId);
  }

  // ── read ────────────────────────────────────────────────────────────────────

  readThread(caller: AgentDoc, threadId: string): Promise<ThreadDoc> {
    return this.reads.readThread(caller, threadId);
  }

  threadViewFor(caller: AgentDoc, threadId: string): Promise<ThreadView> {
    return this.reads.threadViewFor(caller, threadId);
  }

  view(doc: ThreadDoc, viewer?: string): Promise<ThreadView> {
    return this.reads.view(doc, viewer);
  }

  threadById(threadId: string): Promise<ThreadDoc | null> {
    return this.reads.threadById(threadId);
  }

  listThreads(caller: AgentDoc, request: ListRequest): Promise<ThreadPage> {
    return this.reads.listThreads(caller, request);
  }

  listVisibleTasks(caller: AgentDoc, request: Parameters<ThreadReads['listVisibleTasks']>[1]): ReturnType<ThreadReads['listVisibleTasks']> {
    return this.reads.listVisibleTasks(caller, request);
  }

  // ── change ──────────────────────────────────────────────────────────────────

  transition(caller: AgentDoc, request: TransitionRequest, via: Surface, idempotencyKey?: string, sessionId?: string): Promise<TransitionAnswer> {
    return this.transitions.transition(caller, request, via, idempotencyKey, sessionId);
  }

  // ── follow-ups of the timers (README: Reminders, escalation and expiry) ──────

  reassign(caller: AgentDoc, threadId: string, to: string, via: Surface): Promise<ThreadDoc> {
    return this.reassignments.reassign(caller, threadId, to, via);
  }

  resend(caller: AgentDoc, threadId: string, via: Surface): Promise<CreateResult> {
    return this.reassignments.resend(caller, threadId, via);
  }

  appendMessage(caller: AgentDoc, request: AppendRequest, via: Surface, idempotencyKey?: string, sessionId?: string): Promise<AppendResult> {
    return this.messages.append(caller, request, via, idempotencyKey, sessionId);
  }

  /** Enqueues what missed its queue and finishes interrupted writes (outbox.ts); the number of events enqueued. */
  async sweepOutbox(settleMs: number, limit = 500): Promise<number> {
    return this.outbox.sweep(settleMs, limit);
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
