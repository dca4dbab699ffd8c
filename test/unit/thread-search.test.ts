// The web inbox's search (relay-core/service/thread-search.ts) and what writes its words (thread-search-index.ts), on
// the in-memory threads, read marks and search (each passes its contract suite with the real adapter): a search is
// the words typed, every one of them in a thread, answered as list items with unread counts; a handoff is found by
// what it says, by its messages and by what was done, by whoever holds it now — its words written once per event,
// and in full for a thread whose create never wrote them. Through the web page and a real text index:
// test/integration/web-inbox-search.test.ts.
import type { AgentDoc, MessageDoc, ThreadDoc } from '../../relay-core/domain/documents';
import { MAX_QUERY_TERMS } from '../../relay-core/domain/search-terms';
import type { EventType } from '../../relay-core/domain/schemas';
import { searchThreads, type SearchRequest } from '../../relay-core/service/thread-search';
import { threadSearchIndexer } from '../../relay-core/service/thread-search-index';
import { InMemoryReadMarks } from '../fakes/in-memory-read-marks';
import { InMemoryThreadText } from '../fakes/in-memory-thread-text';
import { InMemoryThreads } from '../fakes/in-memory-threads';
import { agent, NOW, teammatesOf } from '../fakes/use-case-ports';
import { threadDocAt } from '../helpers/thread-docs';

const sam = { ...agent('sam@acme'), name: 'Sam' };
const rita = { ...agent('rita@acme'), name: 'Rita' };
const bo = agent('bo@acme');

function setup() {
  const threads = new InMemoryThreads();
  const text = new InMemoryThreadText(threads);
  const readMarks = new InMemoryReadMarks(threads);
  const indexer = threadSearchIndexer({
    readThreadFrom: (id) => threads.readThreadFrom(id),
    messageBody: (threadId, messageId) => threads.messageBody(threadId, messageId),
    messageBodies: (ids) => threads.messageBodies(ids),
    text,
  });
  const deps = { text, readMarks, teammates: teammatesOf([sam, rita, bo]) };
  let minute = 0;
  /** A handoff stored and its create's words indexed, as the relay does. */
  const handoff = async (from: AgentDoc, to: string, summary: string, over: Partial<ThreadDoc> = {}) => {
    const doc = {
      ...threadDocAt(from.handle, to, 'pending', new Date(NOW.getTime() + (minute += 1) * 60_000)),
      summary,
      ...over,
    };
    await threads.insert(doc);
    await index('thread.created', doc._id);
    return doc;
  };
  const index = (type: EventType, threadId: string, messageId?: string) =>
    indexer.index({ type, thread_id: threadId, ...(messageId ? { message_id: messageId } : {}) });
  const message = async (doc: ThreadDoc, n: number, body: string, from = doc.from) => {
    const m: MessageDoc = {
      _id: `${doc._id}:${n}`,
      id: `m${n}`,
      thread_id: doc._id,
      sequence_no: n,
      from,
      body,
      payload: {},
      artifacts: [],
      via: 'api',
      created_at: NOW,
    };
    await threads.insertMessage(m);
    await threads.writeThread(doc._id, (d) => ({
      ...d,
      message_seq: n,
      message_counts: {
        from: d.message_counts.from + (from === d.from ? 1 : 0),
        to: d.message_counts.to + (from === d.from ? 0 : 1),
      },
    }));
    return m;
  };
  const search = (caller: AgentDoc, typed: string, over: Partial<SearchRequest> = {}) =>
    searchThreads(deps, caller, { text: typed, limit: 10, ...over });
  const ids = async (caller: AgentDoc, typed: string, over: Partial<SearchRequest> = {}) =>
    (await search(caller, typed, over)).items.map((item) => item.thread_id);
  return { threads, text, readMarks, handoff, index, message, search, ids };
}

describe('searching', () => {
  test('answers list items, newest first, with the other side’s unread messages and both parties named', async () => {
    const { handoff, message, search, readMarks } = setup();
    const older = await handoff(sam, rita.handle, 'Rotate the staging keys');
    const newer = await handoff(rita, sam.handle, 'Staging is down again');
    await message(older, 1, 'Done on eu-west', rita.handle);
    await message(older, 2, 'And us-east', rita.handle);
    await readMarks.mark(older._id, sam.handle, 1);
    const page = await search(sam, 'staging');
    expect(page.next_cursor).toBeNull();
    expect(page.items).toEqual([
      expect.objectContaining({
        thread_id: newer._id,
        sender: expect.objectContaining({ handle: 'rita@acme', name: 'Rita' }),
        unread_messages: 0,
      }),
      expect.objectContaining({
        thread_id: older._id,
        summary_preview: 'Rotate the staging keys',
        recipient: expect.objectContaining({ handle: 'rita@acme', name: 'Rita' }),
        unread_messages: 1,
      }),
    ]);
  });

  test('what is typed must hold a word; too many words are refused; both say so and read nothing', async () => {
    const { search } = setup();
    await expect(search(sam, ' ?! a ')).rejects.toMatchObject({
      code: 'invalid_params',
      message: 'search: type a word of at least 2 letters or digits (punctuation alone finds nothing)',
    });
    const words = Array.from({ length: MAX_QUERY_TERMS + 1 }, (_, i) => `word${i}`).join(' ');
    await expect(search(sam, words)).rejects.toMatchObject({
      code: 'invalid_params',
      message: `search: at most ${MAX_QUERY_TERMS} words at once`,
    });
  });

  test('the filters of the inbox narrow it: side, status, intent, the other teammate', async () => {
    const { handoff, ids } = setup();
    const sent = await handoff(sam, rita.handle, 'Flaky login test');
    const received = await handoff(bo, sam.handle, 'Flaky login test', { status: 'accepted' });
    expect(await ids(sam, 'flaky login')).toEqual([received._id, sent._id]);
    expect(await ids(sam, 'flaky', { party: 'from' })).toEqual([sent._id]);
    expect(await ids(sam, 'flaky', { party: 'to', other: bo.handle })).toEqual([received._id]);
    expect(await ids(sam, 'flaky', { status: ['pending'] })).toEqual([sent._id]);
    expect(await ids(sam, 'flaky', { intent: 'ask_question' })).toEqual([]);
  });
});

describe('indexing', () => {
  test('a handoff is found by its question, its messages and what was done, by both parties, each word once', async () => {
    const { handoff, message, index, threads, text, ids } = setup();
    const doc = await handoff(sam, rita.handle, 'Checkout', {
      intent: 'ask_question',
      question: 'Which Redis version?',
    });
    expect(await ids(rita, 'redis')).toEqual([doc._id]);
    const m = await message(doc, 1, 'Seven, with the ACL file');
    await index('thread.message', doc._id, m.id);
    await index('thread.message', doc._id, m.id);
    await threads.writeThread(doc._id, (d) => ({ ...d, status: 'completed', completed_summary: 'Pinned redis 7.2' }));
    await index('thread.completed', doc._id);
    expect(await ids(sam, 'acl file')).toEqual([doc._id]);
    expect(await ids(rita, 'pinned')).toEqual([doc._id]);
    expect(text.wordsOf(doc._id)).toEqual([
      'Checkout',
      'Which Redis version?',
      'Seven, with the ACL file',
      'Pinned redis 7.2',
    ]);
  });

  test('a claimed handoff is found by who claimed it; one whose create never wrote its words gets them all', async () => {
    const { handoff, message, index, threads, text, ids } = setup();
    const claimed = await handoff(sam, 'role:frontend', 'Navbar overlaps the logo');
    await threads.writeThread(claimed._id, (d) => ({ ...d, to: rita.handle, status: 'accepted' }));
    await index('thread.claimed', claimed._id);
    expect(await ids(rita, 'navbar')).toEqual([claimed._id]);

    // The process that created it died before writing its words: the claim writes the thread's, messages too.
    const lost = threadDocAt(sam.handle, 'role:frontend', 'pending', NOW);
    await threads.insert({ ...lost, summary: 'Footer links are dead' });
    await message(lost, 1, 'Also the privacy page');
    expect(text.wordsOf(lost._id)).toBeUndefined();
    await threads.writeThread(lost._id, (d) => ({ ...d, to: rita.handle, status: 'accepted' }));
    await index('thread.reassigned', lost._id);
    expect(text.wordsOf(lost._id)).toEqual(['Footer links are dead', 'Also the privacy page']);
    expect(await ids(rita, 'privacy')).toEqual([lost._id]);
  });

  test('events that add no words write none; an event of a thread that is gone is no error', async () => {
    const { handoff, index, text } = setup();
    const doc = await handoff(sam, rita.handle, 'Release notes');
    await index('thread.accepted', doc._id);
    await index('thread.message', doc._id);
    await index('thread.created', 'no-such-thread');
    await index('thread.completed', doc._id);
    expect(text.wordsOf(doc._id)).toEqual(['Release notes']);
    expect(text.wordsOf('no-such-thread')).toBeUndefined();
  });
});
