// The web inbox's text search, as MongoDB serves one: a document per thread in `thread_text` holding what the thread
// says (summary, question, proposed action, what was done) and its messages' bodies, under a text index, read with
// `$text` and the caller's side of the thread, newest first, with the lists' cursor. Written in the request that
// wrote each event (service/thread-search-index.ts).
import type { Collection, Db, Filter } from 'mongodb';
import type { ThreadDoc } from '../domain/documents';
import { RelayError } from '../domain/errors';
import { searchableText, searchTerms } from '../domain/search-terms';
import type { Intent, ThreadStatus } from '../domain/schemas';
import { ensureIndexes } from './indexes';
import { isDuplicateKey } from './thread-writes';
import { cursorAfter, cursorPosition, LISTED_FIELDS, type ListedThread, type Party } from './thread-lists';

export interface ThreadTextDoc {
  /** The thread's. */
  _id: string;
  from: string;
  /** The recipient now (a role, skill or owner target until claimed). */
  to: string;
  /** The thread's: results come newest thread first, and pages resume where the last ended, as the lists do. */
  created_at: Date;
  /** What the thread says, then its messages' bodies, once each. */
  words: string[];
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

/** Matches read per round; their threads are read (and narrowed) in one query. */
const ROUND = 100;
/** Matches one page reads at most: past it the page ends short, with a cursor to read on. */
export const SEARCH_SCAN_LIMIT = 1_000;

/** What a thread says itself, in the order a reader meets it. */
export function threadWords(
  doc: Pick<ThreadDoc, 'summary' | 'question' | 'proposed_action' | 'completed_summary'>,
): string[] {
  const action = doc.proposed_action;
  return [doc.summary, doc.question, action?.description, action?.rationale, doc.completed_summary].filter(
    (text): text is string => !!text,
  );
}

export class ThreadText {
  readonly docs: Collection<ThreadTextDoc>;

  constructor(
    db: Db,
    private readonly threads: Collection<ThreadDoc>,
  ) {
    this.docs = db.collection<ThreadTextDoc>('thread_text');
  }

  async ensureIndexes(): Promise<void> {
    // `none`: words as written (no stemming, no stop words), case and accents ignored, on every engine.
    await this.docs.createIndex({ words: 'text' }, { name: 'by_words', default_language: 'none' });
    await ensureIndexes([
      // Newest first, ties by _id: the whole sort read from the index.
      [this.docs, { from: 1, created_at: -1, _id: -1 }, { name: 'sent' }],
      [this.docs, { to: 1, created_at: -1, _id: -1 }, { name: 'received' }],
    ]);
  }

  /** The thread's own words (and its messages' bodies), for its sender and recipient now; one already there stays. */
  async addThread(doc: ThreadDoc, messages: readonly string[] = []): Promise<void> {
    await this.addThreads([{ doc, messages }]);
  }

  /** addThread for each, in one insert. */
  async addThreads(threads: ReadonlyArray<{ doc: ThreadDoc; messages: readonly string[] }>): Promise<void> {
    const docs = threads.map(({ doc, messages }) => ({
      _id: doc._id,
      from: doc.from,
      to: doc.to,
      created_at: doc.created_at,
      words: [...new Set([...threadWords(doc), ...messages].map(searchableText))],
    }));
    try {
      await this.docs.insertMany(docs, { ordered: false });
    } catch (error) {
      // A thread already there (a retry, an earlier try of the migration) keeps its document; the others go in.
      if (!onlyDuplicates(error)) throw error;
    }
  }

  /** The thread's recipient now (a claim, a reassignment); false when the thread has no words yet. */
  async readdress(doc: Pick<ThreadDoc, '_id' | 'to'>): Promise<boolean> {
    return (await this.docs.updateOne({ _id: doc._id }, { $set: { to: doc.to } })).matchedCount === 1;
  }

  /** Adds a text (a message's body, what was done) to the thread's words; adding it again adds nothing. */
  async addText(threadId: string, text: string): Promise<void> {
    await this.docs.updateOne({ _id: threadId }, { $addToSet: { words: searchableText(text) } });
  }

  /** Removes the thread's words (a purge). */
  async forget(threadId: string): Promise<void> {
    await this.docs.deleteOne({ _id: threadId });
  }

  /**
   * The caller's threads that hold every word, newest first: the text index's matches on the caller's side, a
   * round at a time, each round's threads read (visible to the caller, narrowed by status, intent, teammate) in one
   * query. A page reads at most SEARCH_SCAN_LIMIT matches and ends short past that, with a cursor.
   */
  async search(query: SearchQuery): Promise<{ threads: ListedThread[]; next_cursor: string | null }> {
    if (query.terms.length === 0) throw new RelayError('invalid_params', 'search: no word to search for');
    const after = query.cursor ? cursorPosition(query.cursor) : undefined;
    if (query.cursor && !after)
      throw new RelayError('invalid_params', 'params.page.cursor: not a cursor this relay issued');
    const terms = [...new Set(query.terms)];
    // Each word a phrase: a thread matches when it has all of them. (FerretDB 2 takes phrases as alternatives: with
    // more than one word, each match's words are checked here too.)
    const text = { $search: terms.map((term) => `"${term}"`).join(' ') };
    const hasAll = (doc: Pick<ThreadTextDoc, 'words'>) => {
      const words = new Set(searchTerms(doc.words.join('\n')));
      return terms.every((term) => words.has(term));
    };
    const sides: Filter<ThreadTextDoc>[] = [];
    if (query.party !== 'to') sides.push({ from: query.handle });
    if (query.party !== 'from') sides.push({ to: query.handle });
    const found: ListedThread[] = [];
    let position = after;
    let scanned = 0;
    for (;;) {
      const matches = await this.docs
        .find(
          {
            $text: text,
            ...(sides.length === 1 ? sides[0] : { $or: sides }),
            ...(position
              ? {
                  created_at: { $lte: position.after },
                  $nor: [{ created_at: position.after, _id: { $gte: position.id } }],
                }
              : {}),
          },
          { projection: { _id: 1, created_at: 1, ...(terms.length > 1 ? { words: 1 } : {}) } },
        )
        .sort({ created_at: -1, _id: -1 })
        .limit(ROUND)
        .toArray();
      scanned += matches.length;
      const hits = terms.length > 1 ? matches.filter(hasAll) : matches;
      const docs =
        hits.length === 0
          ? []
          : await this.threads
              .find(
                this.visible(
                  query,
                  hits.map((m) => m._id),
                ),
                { projection: LISTED_FIELDS },
              )
              .toArray();
      const byId = new Map(docs.map((d) => [d._id, d]));
      for (const match of hits) {
        const doc = byId.get(match._id);
        if (!doc) continue;
        if (found.length === query.limit) return { threads: found, next_cursor: cursorAfter(found[found.length - 1]!) };
        found.push(doc);
      }
      const last = matches[matches.length - 1];
      if (matches.length < ROUND || !last) return { threads: found, next_cursor: null };
      position = { after: last.created_at, id: last._id };
      // Read enough for one request: the page ends here, and its cursor reads on from the last match read.
      if (scanned >= SEARCH_SCAN_LIMIT) return { threads: found, next_cursor: cursorAfter(last) };
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
}

function onlyDuplicates(error: unknown): boolean {
  const writeErrors = (error as { writeErrors?: unknown }).writeErrors;
  const list = Array.isArray(writeErrors) ? writeErrors : writeErrors ? [writeErrors] : [];
  return isDuplicateKey(error) || (list.length > 0 && list.every((e: { code?: number }) => e.code === 11000));
}
