// The web inbox's text search: one entry per word per participant per thread (`thread_terms`), written by the worker
// that takes each thread event (service/thread-search-index.ts), read one indexed range of the caller's own entries a
// word, newest first, with the lists' cursor.
import type { Collection, Db, Filter } from 'mongodb';
import type { MessageDoc, ThreadDoc } from '../domain/documents';
import { messageTerms, threadTerms } from '../domain/search-terms';
import { RelayError } from '../domain/errors';
import type { Intent, ThreadStatus } from '../domain/schemas';
import { cursorAfter, cursorPosition, LISTED_FIELDS, type ListedThread, type Party } from './thread-lists';

export interface ThreadTermDoc {
  /** `${thread_id}|${handle}|${term}`: a retried write adds nothing, and a thread's entries are one `_id` range. */
  _id: string;
  handle: string;
  term: string;
  /** The thread's: results come newest thread first, and pages resume where the last ended, as the lists do. */
  created_at: Date;
  thread_id: string;
}

export interface SearchQuery {
  handle: string;
  /** Normalized words (domain/search-terms.ts), at least one: a thread matches when it has every one. */
  terms: readonly string[];
  limit: number;
  cursor?: string;
  /** Only the threads the caller received (`to`) or sent (`from`); both without. */
  party?: Party;
  statuses?: readonly ThreadStatus[];
  intent?: Intent;
  /** Only threads with this teammate on the other side (needs `party`). */
  other?: string;
}

/** Entries of the first word read per round; the other words are one `_id` lookup each per round. */
const ROUND = 100;
/** Entries of the first word one page reads at most: past it the page ends short, with a cursor to read on. */
export const SEARCH_SCAN_LIMIT = 1_000;
/** Each other word's entries counted up to this to pick the rarest word to walk. */
const RAREST_PROBE = 200;

export function termId(threadId: string, handle: string, term: string): string {
  return `${threadId}|${handle}|${term}`;
}

export class ThreadTerms {
  readonly docs: Collection<ThreadTermDoc>;

  constructor(
    db: Db,
    private readonly threads: Collection<ThreadDoc>,
    private readonly messages: Collection<MessageDoc>,
  ) {
    this.docs = db.collection<ThreadTermDoc>('thread_terms');
  }

  async ensureIndexes(): Promise<void> {
    await this.docs.createIndex({ handle: 1, term: 1, created_at: -1, thread_id: -1 }, { name: 'by_term' });
  }

  /** Adds `terms` of the thread for each of `handles`; entries already there stay as they are (a retry writes none twice). */
  async add(
    thread: Pick<ThreadDoc, '_id' | 'created_at'>,
    handles: readonly string[],
    terms: readonly string[],
  ): Promise<void> {
    const docs = [...new Set(handles)].flatMap((handle) =>
      terms.map((term) => ({
        _id: termId(thread._id, handle, term),
        handle,
        term,
        created_at: thread.created_at,
        thread_id: thread._id,
      })),
    );
    if (docs.length === 0) return;
    // One unordered insert: an entry already there (this job's earlier try, an earlier event's word) is refused by its
    // `_id` and the others go in.
    for (let i = 0; i < docs.length; i += 1_000) {
      try {
        await this.docs.insertMany(docs.slice(i, i + 1_000), { ordered: false });
      } catch (error) {
        if (!onlyDuplicates(error)) throw error;
      }
    }
  }

  /** A recipient that is a person (not a role, skill or owner target waiting to be claimed). */
  static participants(doc: Pick<ThreadDoc, 'from' | 'to'>): string[] {
    return [doc.from, ...(doc.to.includes(':') ? [] : [doc.to])];
  }

  /** Everyone the thread was ever addressed to, and its sender. */
  static everyone(doc: Pick<ThreadDoc, 'from' | 'to' | 'reassigned_from'>): string[] {
    return [...new Set([...ThreadTerms.participants(doc), ...(doc.reassigned_from ?? []).map((r) => r.handle)])];
  }

  /** Every word of the thread and of its messages, for its participants now (a new recipient gets the whole thread). */
  async addThread(doc: ThreadDoc): Promise<void> {
    await this.add(doc, ThreadTerms.participants(doc), await this.wordsOf(doc));
  }

  /**
   * Removes the thread's entries (a purge), for everyone it ever was addressed to: their `_id`s are worked out from
   * the thread and its messages and deleted by `_id` (the embedded engine serves an `_id` list by index, not an `_id`
   * range), so it costs the thread's size. An entry left behind (a word rule changed since it was written) finds
   * nothing: search reads the thread of every match and drops one that is gone.
   */
  async forget(doc: ThreadDoc): Promise<number> {
    const words = await this.wordsOf(doc);
    const ids = ThreadTerms.everyone(doc).flatMap((handle) => words.map((term) => termId(doc._id, handle, term)));
    let deleted = 0;
    for (let i = 0; i < ids.length; i += 1_000)
      deleted += (await this.docs.deleteMany({ _id: { $in: ids.slice(i, i + 1_000) } })).deletedCount;
    return deleted;
  }

  private async wordsOf(doc: ThreadDoc): Promise<string[]> {
    // A thread without messages yet (a new one) needs no read of them.
    if (!doc.message_seq) return threadTerms(doc);
    const messages = await this.messages
      .find({ thread_id: doc._id }, { projection: { body: 1 } })
      .sort({ sequence_no: 1 })
      .toArray();
    return [...new Set([...threadTerms(doc), ...messages.flatMap(messageTerms)])];
  }

  /**
   * The caller's threads that hold every word, newest first: the rarest word's range of the caller's entries is
   * walked a round at a time, each round's threads checked against the other words by `_id` and read (visible to the
   * caller, narrowed by party, status, intent, teammate) in one query. A page reads at most SEARCH_SCAN_LIMIT entries
   * of its word and ends short past that, with a cursor: its cost grows with how often the rarest word occurs in the
   * caller's own threads, never with the relay's history.
   */
  async search(query: SearchQuery): Promise<{ threads: ListedThread[]; next_cursor: string | null }> {
    const terms = [...new Set(query.terms)];
    if (terms.length === 0) throw new RelayError('invalid_params', 'search: no word to search for');
    const after = query.cursor ? cursorPosition(query.cursor) : undefined;
    if (query.cursor && !after)
      throw new RelayError('invalid_params', 'params.page.cursor: not a cursor this relay issued');
    const [first, ...others] = await this.rarestFirst(query.handle, terms);
    const found: ListedThread[] = [];
    let position = after;
    let scanned = 0;
    for (;;) {
      const entries = await this.docs
        .find(
          {
            handle: query.handle,
            term: first!,
            ...(position
              ? {
                  created_at: { $lte: position.after },
                  $or: [
                    { created_at: { $lt: position.after } },
                    { created_at: position.after, thread_id: { $lt: position.id } },
                  ],
                }
              : {}),
          },
          { projection: { thread_id: 1, created_at: 1 } },
        )
        .sort({ created_at: -1, thread_id: -1 })
        .limit(ROUND)
        .toArray();
      scanned += entries.length;
      let ids = entries.map((e) => e.thread_id);
      for (const term of others) {
        if (ids.length === 0) break;
        const having = await this.docs
          .find({ _id: { $in: ids.map((id) => termId(id, query.handle, term)) } }, { projection: { thread_id: 1 } })
          .toArray();
        const has = new Set(having.map((d) => d.thread_id));
        ids = ids.filter((id) => has.has(id));
      }
      const docs =
        ids.length === 0
          ? []
          : await this.threads.find(this.visible(query, ids), { projection: LISTED_FIELDS }).toArray();
      const byId = new Map(docs.map((d) => [d._id, d]));
      for (const entry of entries) {
        const doc = byId.get(entry.thread_id);
        if (!doc) continue;
        if (found.length === query.limit) return { threads: found, next_cursor: cursorAfter(found[found.length - 1]!) };
        found.push(doc);
      }
      const last = entries[entries.length - 1];
      if (entries.length < ROUND || !last) return { threads: found, next_cursor: null };
      position = { after: last.created_at, id: last.thread_id };
      // Read enough for one request: the page ends here, and its cursor reads on from the last entry read.
      if (scanned >= SEARCH_SCAN_LIMIT)
        return { threads: found, next_cursor: cursorAfter({ created_at: last.created_at, _id: last.thread_id }) };
    }
  }

  /** The threads among `ids` the caller may see and the query narrows to. */
  private visible(query: SearchQuery, ids: string[]): Filter<ThreadDoc> {
    const h = query.handle;
    const other = query.other && query.party ? { [query.party === 'to' ? 'from' : 'to']: query.other } : {};
    const sides: Filter<ThreadDoc>[] = [];
    if (query.party !== 'to') sides.push({ from: h });
    // A create held for approval is not its recipient's yet (as in the lists).
    if (query.party !== 'from') sides.push({ to: h, hidden_from_recipient: { $ne: true } });
    return {
      _id: { $in: ids },
      $or: sides,
      ...other,
      ...(query.statuses?.length ? { status: { $in: [...query.statuses] } } : {}),
      ...(query.intent ? { intent: query.intent } : {}),
    };
  }

  /** The words, the one with the fewest of the caller's entries (counted up to RAREST_PROBE) first. */
  private async rarestFirst(handle: string, terms: string[]): Promise<string[]> {
    if (terms.length === 1) return terms;
    const counts = await Promise.all(
      terms.map(
        async (term) =>
          (
            await this.docs
              .find({ handle, term }, { projection: { _id: 1 } })
              .limit(RAREST_PROBE)
              .toArray()
          ).length,
      ),
    );
    return terms
      .map((term, i) => ({ term, n: counts[i]! }))
      .sort((a, b) => a.n - b.n)
      .map((t) => t.term);
  }
}

function onlyDuplicates(error: unknown): boolean {
  const writeErrors = (error as { writeErrors?: unknown }).writeErrors;
  const list = Array.isArray(writeErrors) ? writeErrors : writeErrors ? [writeErrors] : [];
  return (
    (error as { code?: number }).code === 11000 ||
    (list.length > 0 && list.every((e: { code?: number }) => e.code === 11000))
  );
}
