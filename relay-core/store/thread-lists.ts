// tasks/list pages, served by the threads' `inbox`, `sent` and `by_status` indexes on every engine.
import type { Collection, Filter } from 'mongodb';
import type { ThreadDoc } from '../domain/documents';
import { RelayError } from '../domain/errors';
import type { ThreadStatus } from '../domain/schemas';

/** Whose list: the threads a teammate received (`to`) or sent (`from`). */
export type Party = 'to' | 'from';

export interface ListQuery {
  party: Party;
  handle: string;
  statuses?: readonly ThreadStatus[];
  since?: Date;
  limit: number;
  cursor?: string;
}

export type ListedThread = Pick<ThreadDoc, '_id' | 'from' | 'to' | 'summary' | 'intent' | 'status' | 'message_counts' | 'created_at' | 'updated_at' | 'hidden_from_recipient'>;

export const LISTED_FIELDS = { _id: 1, from: 1, to: 1, summary: 1, intent: 1, status: 1, message_counts: 1, created_at: 1, updated_at: 1, hidden_from_recipient: 1 } as const;

/** Port: one page of a teammate's received or sent threads, newest first; walking the cursors returns every matching thread exactly once. */
export interface ThreadLists {
  page(query: ListQuery): Promise<{ threads: ListedThread[]; next_cursor: string | null }>;
}

const badCursor = () => new RelayError('invalid_params', 'params.page.cursor: not a cursor this relay issued');

function encode(value: unknown[]): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

function decode(cursor: string): unknown[] {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(value)) return value;
  } catch {
    // fall through
  }
  throw badCursor();
}

/**
 * The `inbox` / `sent` indexes serve equality on the party, newest first, status within; the received list also
 * holds the unclaimed handoffs the caller is a candidate for, read through the `by_status` index (unclaimed handoffs
 * are few at any time) and merged in. Each is one query that returns at most a page and one more.
 */
export class IndexedThreadLists implements ThreadLists {
  constructor(private readonly threads: Collection<ThreadDoc>) {}

  async page(query: ListQuery): Promise<{ threads: ListedThread[]; next_cursor: string | null }> {
    const range: Filter<ThreadDoc> = {};
    const createdAt: Record<string, Date> = {};
    if (query.since) createdAt.$gte = query.since;
    if (query.cursor) {
      const [ms, id] = decode(query.cursor);
      if (typeof ms !== 'number' || !Number.isFinite(new Date(ms).getTime()) || typeof id !== 'string' || id.length > 64) throw badCursor();
      const after = new Date(ms);
      createdAt.$lte = after;
      range.$or = [{ created_at: { $lt: after } }, { created_at: after, _id: { $lt: id } }];
    }
    if (Object.keys(createdAt).length) range.created_at = createdAt;
    const statuses = query.statuses?.length ? [...query.statuses] : undefined;
    const own: Filter<ThreadDoc> = { [query.party]: query.handle, ...(statuses ? { status: { $in: statuses } } : {}), ...range };
    const pages = [this.newest(own, query.limit + 1)];
    if (query.party === 'to' && (!statuses || statuses.includes('unclaimed'))) {
      pages.push(this.newest({ status: 'unclaimed', candidates: query.handle, ...range }, query.limit + 1));
    }
    // A thread in both (addressed to the caller and unclaimed with them among its candidates) is listed once.
    const unique = new Map((await Promise.all(pages)).flat().map((doc) => [doc._id, doc]));
    const docs = [...unique.values()].sort(newestFirst).slice(0, query.limit + 1);
    const threads = docs.slice(0, query.limit);
    const last = threads[threads.length - 1];
    return { threads, next_cursor: docs.length > query.limit && last ? encode([last.created_at.getTime(), last._id]) : null };
  }

  private newest(filter: Filter<ThreadDoc>, limit: number): Promise<ListedThread[]> {
    return this.threads.find(filter, { projection: LISTED_FIELDS }).sort({ created_at: -1, _id: -1 }).limit(limit).toArray();
  }
}

function newestFirst(a: ListedThread, b: ListedThread): number {
  return b.created_at.getTime() - a.created_at.getTime() || (a._id < b._id ? 1 : a._id > b._id ? -1 : 0);
}
