// The inbox's text search (relay-core/store/thread-text.ts ThreadText) over the threads of an InMemoryThreads, for the
// fast tests of the search and its indexer: a thread matches when its words hold every term, newest first, only on
// the caller's side of threads they may see, as the contract suite asks (test/contracts/thread-text-contract.ts, run
// against this and against ThreadText on the real server).
import type { ThreadDoc } from '../../relay-core/domain/documents';
import { RelayError } from '../../relay-core/domain/errors';
import { searchableText, searchTerms } from '../../relay-core/domain/search-terms';
import { cursorAfter, cursorPosition, type ListedThread } from '../../relay-core/store/thread-lists';
import { threadWords, type SearchQuery, type ThreadText } from '../../relay-core/store/thread-text';
import type { InMemoryThreads } from './in-memory-threads';

interface TextDoc {
  to: string;
  words: string[];
}

export class InMemoryThreadText implements Pick<ThreadText, 'addThread' | 'addText' | 'readdress' | 'search'> {
  private readonly docs = new Map<string, TextDoc>();

  constructor(private readonly threads: Pick<InMemoryThreads, 'all'>) {}

  async addThread(doc: ThreadDoc, messages: readonly string[] = []): Promise<void> {
    if (this.docs.has(doc._id)) return;
    this.docs.set(doc._id, {
      to: doc.to,
      words: [...new Set([...threadWords(doc), ...messages].map(searchableText))],
    });
  }

  async readdress(doc: Pick<ThreadDoc, '_id' | 'to'>): Promise<boolean> {
    const text = this.docs.get(doc._id);
    if (text) text.to = doc.to;
    return text !== undefined;
  }

  async addText(threadId: string, text: string): Promise<void> {
    const doc = this.docs.get(threadId);
    const words = searchableText(text);
    if (doc && !doc.words.includes(words)) doc.words.push(words);
  }

  /** The words kept for a thread, as the text index is given them (undefined: none yet). */
  wordsOf(threadId: string): string[] | undefined {
    return this.docs.get(threadId)?.words.slice();
  }

  async search(query: SearchQuery): Promise<{ threads: ListedThread[]; next_cursor: string | null }> {
    if (query.terms.length === 0) throw new RelayError('invalid_params', 'search: no word to search for');
    const at = query.cursor ? cursorPosition(query.cursor) : undefined;
    if (query.cursor && !at)
      throw new RelayError('invalid_params', 'params.page.cursor: not a cursor this relay issued');
    const h = query.handle;
    const matches = this.threads
      .all()
      .filter((doc) => {
        const text = this.docs.get(doc._id);
        if (!text) return false;
        const words = new Set(searchTerms(text.words.join('\n')));
        const sent = query.party !== 'to' && doc.from === h;
        const received = query.party !== 'from' && text.to === h && doc.to === h && !doc.hidden_from_recipient;
        const other = query.other && query.party ? doc[query.party === 'to' ? 'from' : 'to'] === query.other : true;
        return (
          query.terms.every((term) => words.has(term)) &&
          (sent || received) &&
          other &&
          (!query.statuses?.length || query.statuses.includes(doc.status)) &&
          (!query.intent || doc.intent === query.intent) &&
          (!at || doc.created_at < at.after || (doc.created_at.getTime() === at.after.getTime() && doc._id < at.id))
        );
      })
      .sort((a, b) => b.created_at.getTime() - a.created_at.getTime() || (a._id < b._id ? 1 : -1));
    const threads = matches.slice(0, query.limit);
    const last = threads[threads.length - 1];
    return { threads, next_cursor: matches.length > query.limit && last ? cursorAfter(last) : null };
  }
}
