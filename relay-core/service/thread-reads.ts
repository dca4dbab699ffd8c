// Reading threads: one thread as a participant sees it, a page of the caller's threads, the A2A task list, and the
// thread behind a signed inbox link. Only threadViewFor writes (the caller's read marker).
import type { AgentDoc, ThreadDoc } from '../domain/documents';
import { RelayError } from '../domain/errors';
import { isCandidate } from '../domain/claim';
import { assertParticipant } from '../domain/thread-lifecycle';
import type { MongoStore } from '../store/mongo-store';
import type { ReadMarks } from '../store/read-marks';
import { cursorAfter, cursorPosition, type ThreadLists, type VisibleQuery } from '../store/thread-lists';
import type { DraftDoc, DraftQuery } from '../store/a2a-drafts';
import { LRUCache } from 'lru-cache';
import type { Intent, ThreadStatus } from '../domain/schemas';
import type { HandoffTokens } from './handoff-tokens';
import type { InboxLinks } from './inbox-links';
import { isEscalationLead } from '../domain/timer-schedule';
import type { Teammates } from './teammates';
import { listThreads, type ListRequest, type ThreadPage } from './thread-list';
import type { SearchRequest } from './thread-search';
import { messageView, threadView, type ThreadView } from './wire-views';

/** A task in a ListTasks page: a thread, or an A2A task still waiting for its recipient. */
export type VisibleTask = { view: ThreadView } | { draft: DraftDoc };

/** Messages a thread read returns at most (newest kept); the thread itself tells how many there are. */
const MESSAGES_PER_READ = 500;

export interface ThreadReadsDeps {
  /** The threads, their messages, the list pages and the A2A tasks still waiting for a recipient. */
  store: Pick<MongoStore, 'readThread' | 'messagesOf'> & {
    lists: ThreadLists;
    drafts: Pick<MongoStore['drafts'], 'page'>;
  };
  /** What each participant has read of a thread. */
  marks: ReadMarks;
  /** The web inbox's text search (thread-search.ts). */
  search: (caller: AgentDoc, request: SearchRequest) => Promise<ThreadPage>;
  teammates: Pick<Teammates, 'get'>;
  links: InboxLinks;
  tokens: HandoffTokens;
}

export class ThreadReads {
  /**
   * The read markers this process wrote lately (`thread:viewer` → messages seen): a re-read with nothing new writes
   * none. Short-lived, so a marker another process wrote over with an older count heals within a minute.
   */
  private readonly readMarks = new LRUCache<string, number>({ max: 10_000, ttl: 60_000 });

  constructor(private readonly deps: ThreadReadsDeps) {}

  /** The thread as a participant sees it; anyone else gets not_a_participant. */
  async readThread(caller: AgentDoc, threadId: string): Promise<ThreadDoc> {
    const doc = await this.deps.store.readThread(threadId);
    if (!doc) throw new RelayError('thread_not_found', `No thread ${threadId}`);
    assertParticipant(caller, doc);
    return doc;
  }

  /** The whole thread for a participant (or a candidate of an unclaimed one); reading it marks the other side's messages as read. */
  async threadViewFor(caller: AgentDoc, threadId: string): Promise<ThreadView> {
    const doc = await this.deps.store.readThread(threadId);
    if (!doc) throw new RelayError('thread_not_found', `No thread ${threadId}`);
    if (!isCandidate(caller.handle, doc)) assertParticipant(caller, doc);
    const view: ThreadView = await this.view(doc, caller.handle);
    if (doc.to === caller.handle && doc.handoff_token) {
      view.handoff_token = this.deps.tokens.derive(doc._id, doc.handoff_token.nonce);
      view.handoff_token_expires_at = doc.handoff_token.expires_at.toISOString();
    }
    const seen = doc.message_counts[doc.from === caller.handle ? 'to' : 'from'];
    const readId = `${threadId}:${caller.handle}`;
    // Message counts only grow, so a marker this process wrote with the same count is still the newest one.
    if (this.readMarks.get(readId) !== seen) {
      await this.deps.marks.mark(threadId, caller.handle, seen);
      this.readMarks.set(readId, seen);
    }
    return view;
  }

  /** The thread's wire view with its newest messages, its inbox link signed for `viewer` when given. */
  async view(doc: ThreadDoc, viewer?: string): Promise<ThreadView> {
    const newest = Array.from({ length: Math.min(doc.message_seq, MESSAGES_PER_READ) }, (_, i) => doc.message_seq - i);
    const [from, to, messages] = await Promise.all([
      this.deps.teammates.get(doc.from),
      this.deps.teammates.get(doc.to),
      this.deps.store.messagesOf(doc, newest),
    ]);
    return threadView(doc, { from, to }, messages.map(messageView), this.deps.links.url(doc._id, viewer));
  }

  /** The thread as stored, whoever asks (the surfaces' own checks decide what they show). */
  async threadById(threadId: string): Promise<ThreadDoc | null> {
    return this.deps.store.readThread(threadId);
  }

  /** A page of the caller's threads, newest first (thread-list.ts). */
  async listThreads(caller: AgentDoc, request: ListRequest): Promise<ThreadPage> {
    return listThreads({ lists: this.deps.store.lists, teammates: this.deps.teammates }, caller, request);
  }

  /** The caller's threads that hold every word of `request.text`, newest first (thread-search.ts). */
  async searchThreads(caller: AgentDoc, request: SearchRequest): Promise<ThreadPage> {
    return this.deps.search(caller, request);
  }

  /**
   * How many threads the caller received (`to`) or sent (`from`) have one of `statuses` (and the web inbox's filter,
   * if any), counting no further than `upTo` (the web inbox shows "99+" past it): one indexed query, the same cost
   * whatever the inbox holds.
   */
  async countThreads(
    caller: AgentDoc,
    party: 'to' | 'from',
    statuses: readonly ThreadStatus[] | undefined,
    upTo: number,
    filters: { intent?: Intent; other?: string } = {},
  ): Promise<number> {
    return this.deps.store.lists.count({ party, handle: caller.handle, statuses, ...filters }, upTo);
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
      threadsWanted
        ? this.deps.store.lists.visiblePage({ ...query, handle: caller.handle })
        : { threads: [], next_cursor: null, total: 0 },
      draftStatuses.length
        ? this.deps.store.drafts.page({
            from: caller.handle,
            statuses: draftStatuses,
            since: query.statusSince,
            id: query.threadId,
            after,
            limit: query.limit + 1,
          })
        : { drafts: [], total: 0 },
    ]);
    const merged = [
      ...threads.threads.map((doc) => ({ doc, draft: false })),
      ...drafts.drafts.map((doc) => ({ doc, draft: true })),
    ].sort(
      (a, b) =>
        b.doc.created_at.getTime() - a.doc.created_at.getTime() ||
        (a.doc._id < b.doc._id ? 1 : a.doc._id > b.doc._id ? -1 : 0),
    );
    const page = merged.slice(0, query.limit);
    const last = page[page.length - 1];
    const more = merged.length > query.limit || threads.next_cursor !== null;
    const items = await Promise.all(
      page.map(async ({ doc, draft }): Promise<VisibleTask> =>
        draft ? { draft: doc as DraftDoc } : { view: await this.view(doc as ThreadDoc, caller.handle) },
      ),
    );
    return { items, next_cursor: more && last ? cursorAfter(last.doc) : null, total: threads.total + drafts.total };
  }

  /**
   * The thread behind a signed inbox link, for that participant (or the lead it was escalated to, whose escalation DM
   * links it); null when the link is not genuine.
   */
  async threadForInboxLink(
    threadId: string,
    viewer: string,
    signature: string,
  ): Promise<{ view: ThreadView; viewer: string } | null> {
    if (!this.deps.links.isGenuine(threadId, viewer, signature)) return null;
    const doc = await this.deps.store.readThread(threadId);
    if (!doc || (doc.from !== viewer && doc.to !== viewer && !isEscalationLead(doc, viewer))) return null;
    if (doc.hidden_from_recipient && doc.from !== viewer) return null;
    return { view: await this.view(doc, viewer), viewer };
  }
}
