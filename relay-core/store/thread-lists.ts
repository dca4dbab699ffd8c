// tasks/list and A2A ListTasks pages, served by the threads' `inbox`, `sent` and `claimable` indexes on every engine;
// the web inbox's filters by intent and by teammate (each or both) by the same `inbox` and `sent` indexes, whose later
// keys they are.
import type { Collection, Filter } from 'mongodb';
import type { ThreadDoc } from '../domain/documents';
import { RelayError } from '../domain/errors';
import type { Intent, ThreadStatus } from '../domain/schemas';

/**
 * The thread as stored: `claimable: 1` while it is unclaimed, and no such field otherwise. The unclaimed handoffs are
 * read through an index on that field rather than on `status`: an engine without statistics (SQLite) would read a
 * party's one-status list (`{ to, status }`) through an index led by `status`, walking every thread of that status in
 * the relay, instead of through the party's own `inbox` or `sent`.
 */
export function withClaimable<T extends Pick<ThreadDoc, 'status' | 'claimable'>>(doc: T): T {
  const { claimable: _, ...rest } = doc;
  return (doc.status === 'unclaimed' ? { ...rest, claimable: 1 } : rest) as T;
}

/** Whose list: the threads a teammate received (`to`) or sent (`from`). */
export type Party = 'to' | 'from';

export interface ListQuery {
  party: Party;
  handle: string;
  statuses?: readonly ThreadStatus[];
  since?: Date;
  limit: number;
  cursor?: string;
  /** Oldest first (the web inbox's "Waiting for me"): the same index, walked the other way. */
  oldestFirst?: boolean;
  /** Only this intent (a key of the `inbox` / `sent` index, checked on its entries). */
  intent?: Intent;
  /** Only threads with this teammate on the other side (the sender of a received one, the recipient of a sent one): a key of the same index. */
  other?: string;
}

/**
 * The equality a list narrows by besides its party: intent, the other party, or both. Both are keys of the same
 * `inbox` / `sent` index entries, so both together are checked on the entries of the caller's own list as one is.
 */
function narrowing(query: Pick<ListQuery, 'party' | 'intent' | 'other'>): Filter<ThreadDoc> {
  return {
    ...(query.intent ? { intent: query.intent } : {}),
    ...(query.other ? { [query.party === 'to' ? 'from' : 'to']: query.other } : {}),
  };
}

export type ListedThread = Pick<
  ThreadDoc,
  | '_id'
  | 'from'
  | 'to'
  | 'summary'
  | 'intent'
  | 'status'
  | 'message_counts'
  | 'created_at'
  | 'updated_at'
  | 'hidden_from_recipient'
  | 'reads'
>;

export const LISTED_FIELDS = {
  _id: 1,
  from: 1,
  to: 1,
  summary: 1,
  intent: 1,
  status: 1,
  message_counts: 1,
  created_at: 1,
  updated_at: 1,
  hidden_from_recipient: 1,
  answered_at: 1,
  reads: 1,
} as const;

/** Every thread a teammate can see (A2A ListTasks), narrowed by status, last status change and thread id. */
export interface VisibleQuery {
  handle: string;
  statuses?: readonly ThreadStatus[];
  /** Only threads whose status last changed at or after this instant. */
  statusSince?: Date;
  threadId?: string;
  limit: number;
  cursor?: string;
}

/** Port: pages of a teammate's threads, newest first; walking the cursors returns every matching thread exactly once. */
export interface ThreadLists {
  /** The received or sent threads (tasks/list). */
  page(query: ListQuery): Promise<{ threads: ListedThread[]; next_cursor: string | null }>;
  /** Sent, received and unclaimed-with-them-a-candidate together, as whole documents, and how many match in all. */
  visiblePage(query: VisibleQuery): Promise<{ threads: ThreadDoc[]; next_cursor: string | null; total: number }>;
  /**
   * How many received or sent threads have one of `statuses` (and the filter, if any), counting no further than
   * `upTo`: one query over the `inbox` or `sent` index (or the filter's own) that reads at most `upTo` ids, so a count
   * costs the same however many threads match.
   */
  count(query: Pick<ListQuery, 'party' | 'handle' | 'statuses' | 'intent' | 'other'>, upTo: number): Promise<number>;
}

const badCursor = () => new RelayError('invalid_params', 'params.page.cursor: not a cursor this relay issued');

/** Where a cursor resumes: after the thread created at `after` with id `id`; undefined when it is no cursor this relay issued. */
export function cursorPosition(cursor: string): { after: Date; id: string } | undefined {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (!Array.isArray(value)) return undefined;
  const [ms, id] = value as unknown[];
  if (typeof ms !== 'number' || !Number.isFinite(new Date(ms).getTime()) || typeof id !== 'string' || id.length > 64)
    return undefined;
  return { after: new Date(ms), id };
}

function encode(value: unknown[]): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/** The cursor that resumes after the document created at `created_at` with id `_id` (what cursorPosition reads). */
export function cursorAfter(doc: { created_at: Date; _id: string }): string {
  return encode([doc.created_at.getTime(), doc._id]);
}

/**
 * The `inbox` / `sent` indexes serve equality on the party, newest first, status within; the received list also
 * holds the unclaimed handoffs the caller is a candidate for, read through the `claimable` index (unclaimed handoffs
 * are few at any time) and merged in. Each is one query that returns at most a page and one more.
 */
export class IndexedThreadLists implements ThreadLists {
  constructor(private readonly threads: Collection<ThreadDoc>) {}

  async page(query: ListQuery): Promise<{ threads: ListedThread[]; next_cursor: string | null }> {
    const range: Filter<ThreadDoc> = {};
    const createdAt: Record<string, Date> = {};
    if (query.since) createdAt.$gte = query.since;
    if (query.cursor) {
      const position = cursorPosition(query.cursor);
      if (!position) throw badCursor();
      const { after, id } = position;
      if (query.oldestFirst) {
        createdAt.$gte = after;
        range.$or = [{ created_at: { $gt: after } }, { created_at: after, _id: { $gt: id } }];
      } else {
        createdAt.$lte = after;
        range.$or = [{ created_at: { $lt: after } }, { created_at: after, _id: { $lt: id } }];
      }
    }
    if (Object.keys(createdAt).length) range.created_at = createdAt;
    const statuses = query.statuses?.length ? [...query.statuses] : undefined;
    const narrow = narrowing(query);
    const own: Filter<ThreadDoc> = {
      [query.party]: query.handle,
      ...narrow,
      ...(statuses ? { status: { $in: statuses } } : {}),
      ...range,
    };
    const order = query.oldestFirst ? 1 : -1;
    const pages = [this.newest(own, query.limit + 1, order)];
    if (query.party === 'to' && (!statuses || statuses.includes('unclaimed'))) {
      pages.push(this.newest({ claimable: 1, candidates: query.handle, ...narrow, ...range }, query.limit + 1, order));
    }
    // A thread in both (addressed to the caller and unclaimed with them among its candidates) is listed once.
    const unique = new Map((await Promise.all(pages)).flat().map((doc) => [doc._id, doc]));
    return onePage([...unique.values()], query.limit, order);
  }

  async count(
    query: Pick<ListQuery, 'party' | 'handle' | 'statuses' | 'intent' | 'other'>,
    upTo: number,
  ): Promise<number> {
    const statuses = query.statuses?.length ? [...query.statuses] : undefined;
    // Not countDocuments: an aggregation's count reads and decodes every matching document whole (seconds for an
    // inbox of thousands on the embedded FerretDB); a find of ids stops at `upTo` and decodes the fields it filters.
    const filter: Filter<ThreadDoc> = {
      [query.party]: query.handle,
      ...narrowing(query),
      ...(statuses ? { status: { $in: statuses } } : {}),
      // A create held for approval is not in its recipient's inbox (thread-list.ts filters the page the same way).
      ...(query.party === 'to' ? { hidden_from_recipient: { $ne: true } } : {}),
    };
    return (
      await this.threads
        .find(filter, { projection: { _id: 1 } })
        .limit(upTo)
        .toArray()
    ).length;
  }

  /**
   * Three disjoint sets, each read through its own index and merged: the threads the teammate sent (`sent`), those
   * someone else sent them and did not hold from them for approval (`inbox`), and the unclaimed handoffs someone else
   * offered them as a candidate (`claimable`). Each page query returns at most a page and one more; each count is
   * one count over the same index.
   */
  async visiblePage(query: VisibleQuery): Promise<{ threads: ThreadDoc[]; next_cursor: string | null; total: number }> {
    const h = query.handle;
    const statuses = query.statuses ? [...query.statuses] : undefined;
    const narrow: Filter<ThreadDoc> = {
      ...(statuses ? { status: { $in: statuses } } : {}),
      // Status changes are appended in time order: one at or after the instant means the last one is.
      ...(query.statusSince ? { 'status_history.at': { $gte: query.statusSince } } : {}),
      ...(query.threadId !== undefined ? { _id: query.threadId } : {}),
    };
    const sets: Filter<ThreadDoc>[] = [
      { from: h, ...narrow },
      { to: h, ...narrow, from: { $ne: h }, hidden_from_recipient: { $ne: true } },
    ];
    if (!statuses || statuses.includes('unclaimed'))
      sets.push({ ...narrow, claimable: 1, candidates: h, from: { $ne: h }, to: { $ne: h } });
    const range: Filter<ThreadDoc> = {};
    if (query.cursor) {
      const position = cursorPosition(query.cursor);
      if (!position) throw badCursor();
      range.$or = [{ created_at: { $lt: position.after } }, { created_at: position.after, _id: { $lt: position.id } }];
    }
    const [pages, counts] = await Promise.all([
      Promise.all(
        sets.map((set) =>
          this.threads
            .find({ ...set, ...range })
            .sort({ created_at: -1, _id: -1 })
            .limit(query.limit + 1)
            .toArray(),
        ),
      ),
      // Not countDocuments: the embedded engine's aggregation reads and decodes every matching thread whole (0.8 s
      // for an inbox of 2,900); their ids, read through the same index, decode only the fields the set filters.
      Promise.all(sets.map(async (set) => (await this.threads.find(set, { projection: { _id: 1 } }).toArray()).length)),
    ]);
    return { ...onePage(pages.flat(), query.limit), total: counts.reduce((a, b) => a + b, 0) };
  }

  private newest(filter: Filter<ThreadDoc>, limit: number, order: 1 | -1 = -1): Promise<ListedThread[]> {
    return this.threads
      .find(filter, { projection: LISTED_FIELDS })
      .sort({ created_at: order, _id: order })
      .limit(limit)
      .toArray();
  }
}

/** The newest (or, order 1, oldest) `limit` of `docs`, and the cursor after them when more matched. */
function onePage<T extends ListedThread>(
  docs: T[],
  limit: number,
  order: 1 | -1 = -1,
): { threads: T[]; next_cursor: string | null } {
  const sorted = docs.sort((a, b) => order * -newestFirst(a, b)).slice(0, limit + 1);
  const threads = sorted.slice(0, limit);
  const last = threads[threads.length - 1];
  return { threads, next_cursor: sorted.length > limit && last ? encode([last.created_at.getTime(), last._id]) : null };
}

function newestFirst(a: ListedThread, b: ListedThread): number {
  return b.created_at.getTime() - a.created_at.getTime() || (a._id < b._id ? 1 : a._id > b._id ? -1 : 0);
}
