// The composition of the relay's use cases: each built once from its ports, in the order they depend on each other.
// A handoff's path through them: creates (create-handoff.ts) → claims (claims.ts, unclaimed only) → transitions
// (transitions.ts) and messages (messages.ts) → reassignments (reassignments.ts) after the timers; the approval
// pieces (approval-*.ts) and runs (handoff-runs.ts) on the side; every write's events leave through the outbox.
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { systemClock, type Clock } from '../domain/clock';
import type { MongoStore } from '../store/mongo-store';
import { MongoChannelBindings } from '../store/channel-binding-records';
import { MongoReadMarks } from '../store/read-marks';
import type { JobQueue } from '../queues/bullmq-queues';
import type { EventPublisher } from './event-publisher';
import type { HandoffTimers } from './handoff-timers';
import { HANDOFF_TOKEN_TTL_MS, HandoffTokens } from './handoff-tokens';
import { IdempotencyLedger } from './idempotency';
import { InboxLinks } from './inbox-links';
import { WebSessions } from './web-sessions';
import { MessageAppender } from './message-append';
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
import { ThreadReads } from './thread-reads';
import { searchThreads } from './thread-search';
import { Claims } from './claims';
import { Transitions } from './transitions';
import { Messages } from './messages';
import { PushConfigs } from './push-configs';
import { CreateHandoff } from './create-handoff';
import { Reassignments } from './reassignments';

export interface RelayDeps {
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
  /** How long a web inbox session lasts (web-sessions.ts); a week by default. */
  webSessionTtlMs?: number;
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
  /** The web inbox's sign-in links and sessions. */
  webSessions: WebSessions;
}

export function createRelay(deps: RelayDeps): Relay {
  const { store, teammates, log } = deps;
  const clock = deps.clock ?? systemClock;
  const tokenSecret = deps.tokenSecret ?? randomBytes(32).toString('hex');
  const tokens = new HandoffTokens(tokenSecret, deps.handoffTokenTtlMs ?? HANDOFF_TOKEN_TTL_MS);
  const links = new InboxLinks(deps.publicUrl, tokenSecret);
  const ledger = new IdempotencyLedger(store);
  const outbox = new Outbox({ store, events: deps.events, clock, log });
  const marks = new MongoReadMarks(store.threads);
  const reads = new ThreadReads({
    store,
    marks,
    search: (caller, request) => searchThreads({ text: store.text, readMarks: marks, teammates }, caller, request),
    teammates,
    links,
    tokens,
  });
  const appender = new MessageAppender({
    store,
    teammates,
    outbox,
    clock,
    log,
    readThread: (caller, threadId) => reads.readThread(caller, threadId),
  });

  const approvalRecords = new ApprovalRecords({ store, log });
  const approvers = new Approvers({ teammates });
  const approvalTimers = new ApprovalTimers({
    store,
    outbox,
    teammates,
    records: approvalRecords,
    approvers,
    queue: deps.approvalTimers,
    clock,
    log,
  });
  const requests = new ApprovalRequests({
    store,
    outbox,
    approvers,
    records: approvalRecords,
    timers: approvalTimers,
    clock,
    log,
  });
  const policy = new ThreadPolicy({ store, teammates, gate: deps.policy, requests });

  const claims = new Claims({ store, outbox, tokens, policy, clock, log });
  const transitions = new Transitions({ store, outbox, ledger, tokens, policy, claims, clock, log });
  const messages = new Messages({ ledger, appender, policy });
  const creates = new CreateHandoff({
    store,
    teammates,
    outbox,
    tokens,
    links,
    gate: deps.policy,
    approvals: requests,
    timers: deps.timers,
    clock,
    log,
  });
  const reassignments = new Reassignments({ store, teammates, outbox, tokens, policy, reads, creates, clock, log });
  const feed = deps.feed;
  const runs = new HandoffRuns({
    store,
    outbox,
    clock,
    log,
    settings: { ...DEFAULT_RUN_SETTINGS, ...deps.runs },
    // A require_approval rule holds the run (approval_pending); approved, approved-calls.ts queues it.
    gate: async (caller, threadId, via, sessionId) => {
      await policy.forChange(caller, threadId, 'handoff.run', via, sessionId, { task_id: threadId });
    },
    complete: (caller, request, via, key) => transitions.transition(caller, request, via, key),
    append: (caller, request, via, key) => messages.append(caller, request, via, key),
    ...(feed
      ? { waitForHint: (handle: string, ms: number, signal?: AbortSignal) => waitForHint(feed, handle, ms, signal) }
      : {}),
  });

  const appliers = approvedCallAppliers({ transitions, messages, runs, policy });
  const approvalDecisions = new ApprovalDecisions({
    store,
    outbox,
    teammates,
    records: approvalRecords,
    appliers,
    clock,
    log,
  });
  const approvalViews = new ApprovalViews({ records: approvalRecords });
  const approvalSweep = new ApprovalSweep({
    store,
    records: approvalRecords,
    timers: approvalTimers,
    decisions: approvalDecisions,
    clock,
  });

  return {
    teammates,
    channels: new ChannelBindings(new MongoChannelBindings(store.channelBindings), clock),
    ...(feed ? { feed } : {}),
    auditTrail: new AuditTrail({ store, clock }),
    clock,
    links,
    reads,
    creates,
    claims,
    transitions,
    messages,
    reassignments,
    outbox,
    runs,
    approvers,
    approvalRecords,
    approvalDecisions,
    approvalViews,
    approvalTimers,
    approvalSweep,
    pushConfigs: new PushConfigs({ configs: store.pushConfigs, threads: store }),
    drafts: store.drafts,
    webSessions: new WebSessions({
      store: store.web,
      teammates,
      pepper: tokenSecret,
      publicUrl: deps.publicUrl,
      clock,
      sessionTtlMs: deps.webSessionTtlMs ?? 7 * 24 * 3_600_000,
    }),
  };
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
