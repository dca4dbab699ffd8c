// MongoDB adapter: typed collections and their indexes, versioned writes and list pages, the same on every engine;
// the server is checked at connect time and refused when it cannot serve that design.
import { randomUUID } from 'node:crypto';
import { BSON, MongoClient, type Collection, type Db, type MongoClientOptions } from 'mongodb';
import type {
  AgentDoc,
  ApiKeyDoc,
  ApprovalIndexDoc,
  ChannelBindingDoc,
  IdempotencyDoc,
  InviteDoc,
  MessageDoc,
  MetaDoc,
  PolicyAuditDoc,
  PolicyDoc,
  SlackLinkDoc,
  ThreadDoc,
} from '../domain/documents';
import { AgentCards } from './agent-cards';
import { InsertBatcher } from './insert-batcher';
import { ensureIndexes } from './indexes';
import { KeyedQueue } from './keyed-queue';
import { AccountLog } from './account-log';
import { EventLog } from './event-log';
import { PushConfigStore } from './push-configs';
import { DraftStore } from './a2a-drafts';
import { RunStore } from './run-store';
import { WebSessionStore } from './web-sessions';
import { OutboxLedger } from './outbox-ledger';
import { cappedOutbox } from './outbox-cap';
import { IndexedThreadLists, withClaimable, type ThreadLists } from './thread-lists';
import { ThreadText } from './thread-text';
import { isDuplicateKey, VersionedWriter, type Change, type VersionedWrite, type WriteOptions } from './thread-writes';
import { LRUCache } from 'lru-cache';

export { isDuplicateKey, backoffMs, putById, type VersionedWrite } from './thread-writes';
export type ThreadWrite = VersionedWrite<ThreadDoc>;

/** What the server is, learned at connect time (for logs; nothing the store does depends on it). */
export interface ServerCapabilities {
  kind: 'mongodb' | 'ferretdb';
}

/** The `meta` document holding the database's own id (MongoStore.identity). */
const IDENTITY_ID = 'identity';

/**
 * How long, and for how many threads, the store keeps the version of a thread this process itself created or wrote
 * last (readThreadFrom): long enough for the jobs of its events to start, and at most 4 MiB, since only documents
 * of at most RECENT_THREAD_BYTES are kept (a handoff with a large diff is read back by its jobs instead).
 */
const RECENT_THREAD_MS = 10_000;
const RECENT_THREADS = 256;
const RECENT_THREAD_BYTES = 16 * 1024;

/** The oldest MongoDB the relay supports (what its store design needs: conditional replaces, compound indexes). */
const MIN_MONGODB_MAJOR = 6;
/** FerretDB 1.x builds that serve the design: ours, patched (scripts/local-services/ferretdb-build.ts), from this one on. */
const MIN_FERRETDB_BUILD = 8;

/**
 * What the server serves, from `buildInfo`; refuses one that cannot serve the store's design with an error naming
 * what is missing: a stock FerretDB 1.x runs a conditional update as a read and a separate write (two racing
 * writers can both win), our builds before 8 have no text index, and a MongoDB before 6 is not supported.
 */
export async function detectCapabilities(db: Db): Promise<ServerCapabilities> {
  return capabilitiesOf(await db.admin().command({ buildInfo: 1 }));
}

/** detectCapabilities' decision from the server's `buildInfo` answer. */
export function capabilitiesOf(info: Record<string, unknown>): ServerCapabilities {
  const ferret = typeof info.ferretdbVersion === 'string' ? info.ferretdbVersion : undefined;
  if (ferret !== undefined) {
    const major = Number(/^v?(\d+)\./.exec(ferret)?.[1] ?? 0);
    if (major >= 2) return { kind: 'mongodb' };
    const build = Number(/-handoff-relay\.(\d+)(\+|$)/.exec(ferret)?.[1] ?? 0);
    if (build < MIN_FERRETDB_BUILD) {
      throw new Error(
        `The database server is FerretDB ${ferret}, ` +
          (build < 5
            ? 'whose updates are not atomic (a conditional update reads and writes back in separate steps) and whose ' +
              'indexes serve no query'
            : 'which has no text index (the inbox search needs one)') +
          `: use the relay's own FerretDB build (unset MONGODB_URL and \`npm start\` builds and runs it), FerretDB 2, ` +
          `or MongoDB ${MIN_MONGODB_MAJOR}+.`,
      );
    }
    return { kind: 'ferretdb' };
  }
  const version = typeof info.version === 'string' ? info.version : '0';
  if (Number(version.split('.')[0]) < MIN_MONGODB_MAJOR) {
    throw new Error(
      `The database server is MongoDB ${version}: the relay needs MongoDB ${MIN_MONGODB_MAJOR} or later.`,
    );
  }
  return { kind: 'mongodb' };
}

export class MongoStore {
  readonly agents: Collection<AgentDoc>;
  readonly apiKeys: Collection<ApiKeyDoc>;
  readonly slackLinks: Collection<SlackLinkDoc>;
  /** Invitations by invite id (service/invites.ts); a redemption is one conditional update of `status`. */
  readonly invites: Collection<InviteDoc>;
  readonly threads: Collection<ThreadDoc>;
  readonly messages: Collection<MessageDoc>;
  readonly policies: Collection<PolicyDoc>;
  readonly policyAudit: Collection<PolicyAuditDoc>;
  /** The approvals listing (approval id → thread), the open ones marked (`open`); each thread holds its approvals' truth. */
  readonly approvals: Collection<ApprovalIndexDoc>;
  readonly idempotency: Collection<IdempotencyDoc>;
  readonly meta: Collection<MetaDoc>;
  /** Role, skill and owner targets bound to Slack channels, by `_id` = the target. */
  readonly channelBindings: Collection<ChannelBindingDoc>;
  /** Inserts on the write path of every request, group-committed (insert-batcher.ts). */
  readonly inserts: {
    threads: InsertBatcher<ThreadDoc>;
    messages: InsertBatcher<MessageDoc>;
  };
  /** Every thread write and every read of a thread's current version goes through this. */
  readonly writer: VersionedWriter<ThreadDoc>;
  /** The same for teammates' documents. */
  readonly agentWriter: VersionedWriter<AgentDoc>;
  readonly lists: ThreadLists;
  /** The web inbox's text search: each thread's words under a text index (thread-text.ts). */
  readonly text: ThreadText;
  readonly outbox: OutboxLedger;
  /** Per-teammate event logs (GET /events, check_inbox wait_seconds), `_id`-addressed on every server. */
  readonly eventLog: EventLog;
  /** Per-teammate account history (key rotations, blocks, policy refusals), `_id`-ranged (GET /agents/me/audit). */
  readonly accountLog: AccountLog;
  /** A2A push notification configs, one document per task. */
  readonly pushConfigs: PushConfigStore;
  /** A2A tasks waiting for the recipient a later message names, one document per task. */
  readonly drafts: DraftStore;
  /** Handoff runs by the recipients' agents and each teammate's open runs (service/handoff-runs.ts). */
  readonly runs: RunStore;
  /** The teammates' cards as lists and targets read them (agent-cards.ts). */
  readonly cards: AgentCards;
  /** The web inbox's sign-in links and sessions (web-sessions.ts). */
  readonly web: WebSessionStore;
  private readonly threadWriteQueue = new KeyedQueue();
  private readonly agentListeners: Array<() => Promise<void>> = [];
  /**
   * What every thread write does last to the document it stores: the relay's timers work out its next step there
   * (settleThreadsWith; service/handoff-timers.ts settle), so a write arms it without another command.
   */
  private settleThread: (before: ThreadDoc, next: ThreadDoc) => ThreadDoc = (_before, next) => next;
  /** The newest version of each thread this process created or wrote moments ago (readThreadFrom). */
  private readonly recentThreads = new LRUCache<string, ThreadDoc>({
    max: RECENT_THREADS,
    ttl: RECENT_THREAD_MS,
  });
  /** The body of each message this process stored moments ago, by `${thread_id}:${id}` (messageBody). */
  private readonly recentBodies = new LRUCache<string, string>({
    max: RECENT_THREADS,
    ttl: RECENT_THREAD_MS,
    maxSize: RECENT_THREADS * RECENT_THREAD_BYTES,
    sizeCalculation: (body) => Math.max(1, body.length),
  });

  private constructor(
    private readonly client: MongoClient,
    readonly db: Db,
    readonly capabilities: ServerCapabilities,
  ) {
    this.agents = db.collection<AgentDoc>('agents');
    this.apiKeys = db.collection<ApiKeyDoc>('api_keys');
    this.slackLinks = db.collection<SlackLinkDoc>('slack_links');
    this.invites = db.collection<InviteDoc>('invites');
    this.threads = db.collection<ThreadDoc>('threads');
    this.messages = db.collection<MessageDoc>('messages');
    this.policies = db.collection<PolicyDoc>('policies');
    this.policyAudit = db.collection<PolicyAuditDoc>('policy_audit');
    this.approvals = db.collection<ApprovalIndexDoc>('approvals');
    this.idempotency = db.collection<IdempotencyDoc>('idempotency');
    this.meta = db.collection<MetaDoc>('meta');
    this.channelBindings = db.collection<ChannelBindingDoc>('channel_bindings');
    // One insert command in flight per collection: what arrives meanwhile goes in the next one together (on SQLite,
    // which takes one writer at a time, more in flight would only queue up there).
    const inFlight = 1;
    this.inserts = {
      threads: new InsertBatcher(this.threads, inFlight),
      messages: new InsertBatcher(this.messages, inFlight),
    };
    this.outbox = new OutboxLedger(this.threads);
    this.eventLog = new EventLog(db, inFlight);
    this.accountLog = new AccountLog(db);
    this.pushConfigs = new PushConfigStore(db);
    this.drafts = new DraftStore(db);
    this.runs = new RunStore(db);
    this.web = new WebSessionStore(db);
    // A thread's pending jobs: its writes add them, the workers take them out (outbox-ledger.ts).
    this.writer = new VersionedWriter(this.threads, 'thread', { list: 'jobs_pending', since: 'pending_since' });
    this.agentWriter = new VersionedWriter(this.agents, 'teammate');
    this.lists = new IndexedThreadLists(this.threads);
    this.text = new ThreadText(db, this.threads);
    this.cards = new AgentCards(this.agents);
  }

  /** `options` adds to the client's (a test turns on command monitoring to count what a path reads). */
  static async connect(url: string, dbName?: string, options: MongoClientOptions = {}): Promise<MongoStore> {
    // Strings read back unchecked for invalid UTF-8 (the driver's check is a pass over every character of every
    // string read: a thread's diff, each message): the driver only ever writes valid UTF-8 (a lone surrogate goes as
    // U+FFFD), so what the relay reads is what it wrote; a byte sequence written some other way reads as U+FFFD.
    const client = new MongoClient(url, {
      serverSelectionTimeoutMS: 5_000,
      maxPoolSize: 20,
      enableUtf8Validation: false,
      ...options,
    });
    await client.connect();
    const db = client.db(dbName);
    return new MongoStore(client, db, await detectCapabilities(db));
  }

  /**
   * Creates the indexes the queries are served with (idempotent, store/indexes.ts), the same on every engine, once the
   * database is at this layout (store/migrate.ts: run it first).
   */
  async ensureIndexes(): Promise<void> {
    const userTeams = this.db.collection('slack_user_teams');
    await ensureIndexes(
      [
        [this.agents, { role: 1 }, { name: 'role' }],
        // A card's skills and owned repos: multikey indexes, an entry per element (agent-cards.ts).
        [this.agents, { skills: 1 }, { name: 'by_skill' }],
        [this.agents, { repos_owned: 1 }, { name: 'by_repo' }],
        [this.apiKeys, { handle: 1 }, { name: 'handle' }],
        // tasks/list: equality on the party, newest first (ties by _id: the whole sort is read from the index), status
        // filtered within (ESR order).
        // The web inbox's filters (thread-lists.ts) by intent and by the teammate on the other side are keys of the
        // same two indexes, checked on index entries as the party's list is walked: an index of their own each would be
        // one more index written on every thread write (about a tenth more CPU a create or accept on the embedded engine).
        [this.threads, { to: 1, created_at: -1, _id: -1, status: 1, intent: 1, from: 1 }, { name: 'inbox' }],
        [this.threads, { from: 1, created_at: -1, _id: -1, status: 1, intent: 1, to: 1 }, { name: 'sent' }],
        // The unclaimed handoffs (few at any time), whose candidates' received lists show them (withClaimable).
        [this.threads, { claimable: 1, created_at: -1, _id: -1 }, { name: 'claimable' }],
        // ListTasks: the A2A tasks a sender has waiting for their recipient (a2a-drafts.ts), newest first.
        [this.drafts.docs, { from: 1, created_at: -1, _id: -1 }, { name: 'by_sender' }],
        [this.messages, { thread_id: 1, sequence_no: 1 }, { name: 'thread_order', unique: true }],
        // The timer sweep's due steps (store/timer-due.ts), and the outbox sweep's threads with jobs in flight
        // (outbox-ledger.ts).
        [this.threads, { next_due_at: 1 }, { name: 'due' }],
        [this.threads, { pending_since: 1 }, { name: 'outbox' }],
        // A teammate's event log after a cursor, and each event in it once (event-log.ts; layout 4's migration fills
        // `event_id` in older entries, so this runs after it).
        [this.eventLog.entries, { handle: 1, seq: 1 }, { name: 'by_position' }],
        [this.eventLog.entries, { handle: 1, event_id: 1 }, { name: 'by_event', unique: true }],
        // A teammate's account log, newest first (account-log.ts).
        [this.accountLog.entries, { handle: 1, _id: 1 }, { name: 'by_handle_id' }],
        // The approvals still open (the approvals sweep, `approvals list --status pending`), and the listing by status.
        [this.approvals, { open: 1, created_at: 1 }, { name: 'open' }],
        [this.approvals, { status: 1, created_at: -1 }, { name: 'by_status' }],
        // What ages out, by age (queues/store-cleanup-job.ts).
        [this.idempotency, { created_at: 1 }, { name: 'age' }],
        // GET /admin/invites: newest first.
        [this.invites, { created_at: -1 }, { name: 'newest' }],
        // Slack OAuth mode (bot/oauth/slack-clients.ts): a workspace's org, as seen in requests from its people, and an
        // org-wide install's workspaces.
        [userTeams, { team_id: 1, enterprise_id: 1 }, { name: 'by_team' }],
        [userTeams, { enterprise_id: 1, team_id: 1 }, { name: 'by_org' }],
      ],
      // Made by earlier versions: the cards' skills and repos under their first names (marked multikey by engine
      // builds that then served no query with them: by_skill and by_repo are made anew), the outbox sweep's, the
      // threads' by status (an engine without statistics read a party's one-status list through it: `claimable`
      // replaced it), and the account log's by handle (the embedded engine built its `_id` key as JSON text, which no
      // query compares: `by_handle_id` has the same keys).
      [
        [this.agents, ['skills', 'repos_owned']],
        [this.threads, ['candidates', 'outbox_sweep', 'by_status']],
        [this.accountLog.entries, ['by_handle']],
      ],
    );
    await this.web.ensureIndexes();
    await this.text.ensureIndexes();
  }

  async ping(): Promise<void> {
    await this.db.command({ ping: 1 });
  }

  /**
   * This database's own id, made on its first start: jobs carry it, so a worker never acts on jobs Redis still
   * holds for another database under the same queue prefix (a deleted `.data`, a restored backup).
   */
  identity(): Promise<string> {
    return this.settle(IDENTITY_ID, async () => randomUUID());
  }

  /**
   * A setting this database decides once for every process and start of its relay (its `meta` document `key`):
   * the value stored, else `decide()`'s, stored. Processes that decide at once agree on the one stored first.
   */
  async settle<T extends string>(key: string, decide: () => Promise<T>): Promise<T> {
    const read = async () => (await this.meta.findOne({ _id: key }))?.value as T | undefined;
    const known = await read();
    if (known) return known;
    try {
      await this.meta.insertOne({ _id: key, value: await decide(), at: new Date() });
    } catch (error) {
      // Another process of this relay decided first: its value is the one.
      if (!isDuplicateKey(error)) throw error;
    }
    return (await read())!;
  }

  /** Whether a relay has served this database already: it holds a teammate or a thread. */
  async servedBefore(): Promise<boolean> {
    const [agent, thread] = await Promise.all([
      this.agents.findOne({}, { projection: { _id: 1 } }),
      this.threads.findOne({}, { projection: { _id: 1 } }),
    ]);
    return agent !== null || thread !== null;
  }

  /** The thread's current version. */
  readThread(id: string): Promise<ThreadDoc | null> {
    return this.writer.read(id);
  }

  /**
   * Inserts a new thread, its first event's jobs pending (outbox-ledger.ts), and returns it as stored (a duplicate
   * `_id` rejects with the server's duplicate-key error). The jobs of its first event start from the document
   * inserted here instead of reading it back (readThreadFrom).
   */
  async insertThread(doc: ThreadDoc): Promise<ThreadDoc> {
    const stored = withClaimable(this.outbox.marked(null, doc, new Date()));
    await this.inserts.threads.insert(stored);
    this.remember(stored);
    return stored;
  }

  /** Stores a new message (a duplicate `_id`, its number taken, rejects with the server's duplicate-key error). */
  async insertMessage(doc: MessageDoc): Promise<void> {
    await this.inserts.messages.insert(doc);
    this.recentBodies.set(`${doc.thread_id}:${doc.id}`, doc.body);
  }

  /** A message's body: as this process stored it moments ago when it did (its event's words need it), else one read. */
  async messageBody(threadId: string, messageId: string): Promise<string | null> {
    const recent = this.recentBodies.get(`${threadId}:${messageId}`);
    if (recent !== undefined) return recent;
    const doc = await this.messages.findOne({ thread_id: threadId, id: messageId }, { projection: { body: 1 } });
    return doc?.body ?? null;
  }

  /** The bodies of the threads' messages, each thread's in order (the words of threads written before their search). */
  async messageBodies(threadIds: readonly string[]): Promise<Map<string, string[]>> {
    const bodies = new Map<string, string[]>();
    const messages = this.messages
      .find({ thread_id: { $in: [...threadIds] } }, { projection: { thread_id: 1, body: 1 } })
      .sort({ thread_id: 1, sequence_no: 1 });
    for await (const m of messages) bodies.set(m.thread_id, [...(bodies.get(m.thread_id) ?? []), m.body]);
    return bodies;
  }

  /** Keeps `doc` as the newest version of its thread this process knows (readThreadFrom), when it is small. */
  private remember(doc: ThreadDoc): void {
    if (BSON.calculateObjectSize(doc) <= RECENT_THREAD_BYTES) this.recentThreads.set(doc._id, doc);
    else this.recentThreads.delete(doc._id);
  }

  /**
   * The thread at `version` or later, for a reader that needs no more than that (a job of an event: its timer arm,
   * its Slack sync). When this process created or wrote that version moments ago, the document as it wrote it: the
   * job of the event it just published reads nothing. Else the read above. A newer version written since (by
   * another process) is no loss: every write from what this returns is versioned, and the job of that write's
   * event reads it.
   */
  async readThreadFrom(id: string, version: number | undefined): Promise<ThreadDoc | null> {
    if (version === undefined) return this.readThread(id);
    const recent = this.recentThreads.get(id);
    if (recent && (recent.version ?? 0) >= version) return recent;
    return this.readThread(id);
  }

  /**
   * Applies `change` to the current thread as one write that no concurrent write can interleave with (see
   * thread-writes.ts). `change` is a pure function of the current document: it returns the
   * next one, or undefined when its precondition no longer holds (then `after` is null and `before` says why).
   * `from`: this store's own recent read or write of the thread, to start from instead of reading it again.
   */
  async writeThread(id: string, change: Change<ThreadDoc>, from?: ThreadDoc): Promise<ThreadWrite> {
    // Every write bounds the thread's events (outbox-cap.ts), marks the jobs of the events it adds pending (the
    // outbox: outbox-ledger.ts) and arms the thread's next timer step (settleThread), all in the one document.
    const stored = (current: ThreadDoc): ThreadDoc | undefined => {
      const next = change(current);
      return (
        next && withClaimable(this.settleThread(current, cappedOutbox(this.outbox.marked(current, next, new Date()))))
      );
    };
    return this.queuedThreadWrite(id, stored, from);
  }

  /**
   * Writes the thread's armed timer step (`change` sets only that) on the version it read, without moving the
   * version: the thread's own writes meanwhile neither conflict with it nor undo it (they write only what they
   * change), and one that moved the version first makes this read again.
   */
  writeThreadTimer(id: string, change: Change<ThreadDoc>, from?: ThreadDoc): Promise<ThreadWrite> {
    return this.queuedThreadWrite(id, change, from, { keepVersion: true });
  }

  /** This process's writes of one thread go one after the other (20 concurrent appends: no retries among them). */
  private async queuedThreadWrite(
    id: string,
    change: Change<ThreadDoc>,
    from?: ThreadDoc,
    opts?: WriteOptions,
  ): Promise<ThreadWrite> {
    const written = await this.threadWriteQueue.run(id, () => this.writer.write(id, change, from, opts));
    if (written.after) this.remember(written.after);
    return written;
  }

  /** Sets what every thread write does last to the document it stores (the relay's timers: HandoffTimers.settle). */
  settleThreadsWith(settle: (before: ThreadDoc, next: ThreadDoc) => ThreadDoc): void {
    this.settleThread = settle;
  }

  /**
   * The same write for a teammate's document: its endpoint is verified by a worker while its owner may change
   * the card or rotate the secret, and a plain update of one would undo the other.
   */
  async writeAgent(handle: string, change: Change<AgentDoc>): Promise<VersionedWrite<AgentDoc>> {
    const written = await this.agentWriter.write(handle, change);
    if (written.after) await this.agentWritten();
    return written;
  }

  /** Inserts a new teammate's card. */
  async insertAgent(doc: AgentDoc): Promise<void> {
    await this.agents.insertOne(doc);
    await this.agentWritten();
  }

  /** Runs `listener` after every teammate write (the webhook fan-out's copy of who has an endpoint). */
  afterAgentWrites(listener: () => Promise<void>): void {
    this.agentListeners.push(listener);
  }

  private async agentWritten(): Promise<void> {
    await Promise.all(this.agentListeners.map((listener) => listener()));
  }

  /** Those of `handles` that are active and have a webhook endpoint that is not disabled. */
  withWebhookEndpoint(handles: readonly string[]): Promise<string[]> {
    return this.cards.withWebhookEndpoint(handles);
  }

  /**
   * A thread's messages with these sequence numbers (counted ones: at most `thread.message_seq`), in ascending
   * order: one query on the `thread_order` index.
   */
  async messagesOf(thread: ThreadDoc, sequenceNos: readonly number[]): Promise<MessageDoc[]> {
    if (sequenceNos.length === 0) return [];
    const sorted = [...new Set(sequenceNos)].sort((a, b) => a - b);
    return this.messages
      .find({ thread_id: thread._id, sequence_no: { $in: sorted } })
      .sort({ sequence_no: 1 })
      .toArray();
  }

  async close(): Promise<void> {
    await this.outbox.flush();
    await this.client.close();
  }
}
