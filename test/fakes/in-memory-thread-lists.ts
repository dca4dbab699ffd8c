// The list pages port (relay-core/store/thread-lists.ts ThreadLists) over the threads of an InMemoryThreads, for the
// fast tests of thread reads and lists: newest first (or oldest first), each thread once across the cursors, as the
// contract suite asks (test/contracts/thread-lists-contract.ts, run against this and against IndexedThreadLists).
import type { ThreadDoc } from '../../relay-core/domain/documents';
import { RelayError } from '../../relay-core/domain/errors';
import {
  cursorAfter,
  cursorPosition,
  type ListedThread,
  type ListQuery,
  type ThreadLists,
  type VisibleQuery,
} from '../../relay-core/store/thread-lists';
import type { InMemoryThreads } from './in-memory-threads';

type Position = { after: Date; id: string };

/** Newest first: by creation, then by id. */
const newestFirst = (a: ThreadDoc, b: ThreadDoc) =>
  b.created_at.getTime() - a.created_at.getTime() || (a._id < b._id ? 1 : a._id > b._id ? -1 : 0);

/** Whether `doc` comes after the cursor's thread in a list walked newest (order -1) or oldest (1) first. */
const pastCursor = (doc: ThreadDoc, at: Position | undefined, order: 1 | -1) =>
  !at || order * newestFirst({ created_at: at.after, _id: at.id } as ThreadDoc, doc) > 0;

function position(cursor: string | undefined): Position | undefined {
  if (cursor === undefined) return undefined;
  const at = cursorPosition(cursor);
  if (!at) throw new RelayError('invalid_params', 'params.page.cursor: not a cursor this relay issued');
  return at;
}

function onePage(docs: ThreadDoc[], limit: number, order: 1 | -1 = -1) {
  const sorted = docs.sort((a, b) => -order * newestFirst(a, b));
  const threads = sorted.slice(0, limit);
  const last = threads[threads.length - 1];
  return { threads, next_cursor: sorted.length > limit && last ? cursorAfter(last) : null };
}

export class InMemoryThreadLists implements ThreadLists {
  constructor(private readonly threads: Pick<InMemoryThreads, 'all'>) {}

  async page(query: ListQuery): Promise<{ threads: ListedThread[]; next_cursor: string | null }> {
    const at = position(query.cursor);
    const order = query.oldestFirst ? 1 : -1;
    const listed = this.threads.all().filter((doc) => {
      const own = doc[query.party] === query.handle && this.narrowed(doc, query);
      const offered =
        query.party === 'to' &&
        doc.status === 'unclaimed' &&
        (doc.candidates ?? []).includes(query.handle) &&
        this.narrowed(doc, query);
      return (own || offered) && (!query.since || doc.created_at >= query.since) && pastCursor(doc, at, order);
    });
    return onePage(listed, query.limit, order);
  }

  async count(
    query: Pick<ListQuery, 'party' | 'handle' | 'statuses' | 'intent' | 'other'>,
    upTo: number,
  ): Promise<number> {
    const counted = this.threads
      .all()
      .filter(
        (doc) =>
          doc[query.party] === query.handle &&
          this.narrowed(doc, query) &&
          !(query.party === 'to' && doc.hidden_from_recipient),
      );
    return Math.min(counted.length, upTo);
  }

  async visiblePage(query: VisibleQuery): Promise<{ threads: ThreadDoc[]; next_cursor: string | null; total: number }> {
    const at = position(query.cursor);
    const h = query.handle;
    const visible = this.threads.all().filter((doc) => {
      const sent = doc.from === h;
      const received = doc.to === h && !doc.hidden_from_recipient;
      const offered = doc.status === 'unclaimed' && (doc.candidates ?? []).includes(h) && doc.to !== h;
      return (
        (sent || received || offered) &&
        (!query.statuses || query.statuses.includes(doc.status)) &&
        (!query.statusSince || doc.status_history.some((s) => s.at >= query.statusSince!)) &&
        (query.threadId === undefined || doc._id === query.threadId)
      );
    });
    const page = onePage(
      visible.filter((doc) => pastCursor(doc, at, -1)),
      query.limit,
    );
    return { ...page, total: visible.length };
  }

  /** The list's own narrowing: status, intent, the teammate on the other side. */
  private narrowed(doc: ThreadDoc, query: Pick<ListQuery, 'party' | 'statuses' | 'intent' | 'other'>): boolean {
    const otherSide = query.party === 'to' ? doc.from : doc.to;
    return (
      (!query.statuses?.length || query.statuses.includes(doc.status)) &&
      (!query.intent || doc.intent === query.intent) &&
      (!query.other || otherSide === query.other)
    );
  }
}
