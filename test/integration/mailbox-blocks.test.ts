// tasks/list pages on FerretDB read a box's entries a block at a time, and skip the threads its blocks know to be
// finished when a status filter cannot match them: the first page of an inbox whose history is mostly finished
// costs a bounded number of commands however long that history is, and lists exactly what the index-served query
// lists. A position that stays empty gets no block over it, and one filled late is listed all the same.
import { randomUUID } from 'node:crypto';
import type { CommandStartedEvent } from 'mongodb';
import type { MailboxEntryDoc, ThreadDoc } from '../../relay-core/domain/documents';
import type { ThreadStatus } from '../../relay-core/domain/schemas';
import type { InsertBatcher } from '../../relay-core/store/insert-batcher';
import { blockId, boxName, entryId, MailboxLog } from '../../relay-core/store/mailbox-log';
import { placeInMailboxes } from '../../relay-core/store/migrate';
import { MongoStore } from '../../relay-core/store/mongo-store';
import { IndexedThreadLists, type ListedThread, type ListQuery, type ThreadLists } from '../../relay-core/store/thread-lists';
import { testMongoUrl, uniqueName } from '../helpers/test-env';
import { threadDocAt } from '../helpers/thread-docs';

let store: MongoStore;

beforeAll(async () => {
  store = await MongoStore.connect(testMongoUrl(), uniqueName('list_blocks'), { monitorCommands: true });
  await store.ensureIndexes();
});

afterAll(async () => {
  await store?.db.dropDatabase();
  await store?.close();
});

const INBOX: ThreadStatus[] = ['unclaimed', 'pending', 'accepted'];
const FINISHED: ThreadStatus[] = ['completed', 'declined', 'cancelled', 'expired', 'completed', 'rejected', 'completed'];
let clock = Date.UTC(2026, 0, 1);

const threadDoc = (from: string, to: string, status: ThreadStatus) => threadDocAt(from, to, status, new Date((clock += 1_000)));

/** A thread created as the relay creates one (its places in the logs first), pending; then moved to `status`. */
async function newThread(from: string, to: string, status: ThreadStatus = 'pending'): Promise<ThreadDoc> {
  const doc = threadDoc(from, to, 'pending');
  doc.mailbox = await store.placeNewThread(doc);
  await store.threads.insertOne(doc);
  if (status !== 'pending') await store.writeThread(doc._id, (current) => ({ ...current, status }));
  return { ...doc, status };
}

/** A history of `n` threads to `reader`: one in eight pending, one in eight accepted, the rest finished. */
async function history(reader: string, n: number, make: (from: string, status: ThreadStatus) => Promise<ThreadDoc>): Promise<ThreadDoc[]> {
  const made: ThreadDoc[] = [];
  for (let i = 0; i < n; i += 1) {
    const status = i % 8 === 3 ? 'pending' : i % 8 === 6 ? 'accepted' : FINISHED[i % FINISHED.length]!;
    made.push(await make(`s${i % 3}@acme`, status));
  }
  return made;
}

/** Every command `on`'s client sends while `work` runs, by command and collection ("find mailbox_blocks"). */
async function commands<T>(work: () => Promise<T>, on: MongoStore = store): Promise<{ result: T; count: number; by: Record<string, number> }> {
  const client = on.db.client;
  const by: Record<string, number> = {};
  let count = 0;
  const started = (event: CommandStartedEvent) => {
    const key = `${event.commandName} ${String(event.command[event.commandName])}`;
    by[key] = (by[key] ?? 0) + 1;
    count += 1;
  };
  client.on('commandStarted', started);
  try {
    return { result: await work(), count, by };
  } finally {
    client.off('commandStarted', started);
  }
}

/** All pages of a query, following the cursors. */
async function walk(lists: ThreadLists, query: Omit<ListQuery, 'cursor'>, between: (page: number) => Promise<void> = async () => {}): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 500; page += 1) {
    const got = await lists.page({ ...query, ...(cursor ? { cursor } : {}) });
    ids.push(...got.threads.map((t) => t._id));
    if (!got.next_cursor) return ids;
    cursor = got.next_cursor;
    await between(page);
  }
  throw new Error('more than 500 pages');
}

const indexed = () => new IndexedThreadLists(store.threads);

describe('an inbox whose history is mostly finished', () => {
  const readers: Record<number, { handle: string; made: ThreadDoc[] }> = {};

  beforeAll(async () => {
    expect(store.capabilities.kind).toBe('ferretdb');
    for (const n of [200, 800]) {
      const handle = `reader${n}-${randomUUID().slice(0, 6)}@acme`;
      readers[n] = { handle, made: await history(handle, n, (from, status) => newThread(from, handle, status)) };
    }
  }, 300_000);

  test.each([200, 800])('with %i threads, both first pages list what the index-served query lists, and every page walk lists each match once', async (n) => {
    const { handle, made } = readers[n]!;
    const newestFirst = made.map((t) => t._id).reverse();
    for (const statuses of [INBOX, undefined]) {
      const query = { party: 'to' as const, handle, limit: 20, ...(statuses ? { statuses } : {}) };
      const expected = newestFirst.filter((id) => !statuses || statuses.includes(made.find((t) => t._id === id)!.status));
      const first = await store.lists.page(query);
      expect(first.threads.map((t) => t._id)).toEqual(expected.slice(0, 20));
      expect(first.threads).toEqual((await indexed().page(query)).threads.map(({ mailbox: _m, ...doc }: ListedThread & Pick<ThreadDoc, 'mailbox'>) => doc));
      expect(first.next_cursor).not.toBeNull();
      const all = await walk(store.lists, query);
      expect(all).toEqual(expected);
      expect(all).toEqual(await walk(indexed(), query));
    }
  });

  test('the first page costs a bounded number of commands, the same with 200 or 800 threads of history', async () => {
    // Another relay process on the same database: it knows nothing of these boxes but what their blocks say.
    const other = await MongoStore.connect(testMongoUrl(), store.db.databaseName, { monitorCommands: true });
    try {
      const cost: Record<number, { status: number; plain: number }> = {};
      for (const n of [200, 800]) {
        const { handle } = readers[n]!;
        // The pages read before (the test above) taught the blocks which threads are finished.
        const status = await commands(() => other.lists.page({ party: 'to', handle, limit: 20, statuses: INBOX }), other);
        const plain = await commands(() => other.lists.page({ party: 'to', handle, limit: 20 }), other);
        cost[n] = { status: status.count, plain: plain.count };
        // The head (its hint and 8 probes), at most 15 newest entries one by one (no block holds them yet), a block
        // per 16 entries further down, and the threads of the entries that can match (21: the page and the one after)
        // and of the newest ones. Before blocks: 9 + 2 per examined entry, 51 unfiltered and 173 with the filter.
        expect(status.count).toBeLessThanOrEqual(9 + 15 + 12 + 21 + 15);
        expect(plain.count).toBeLessThanOrEqual(9 + 15 + 2 + 21);
        // Nothing left to write: a page of an unchanged inbox is all reads.
        expect(Object.keys(status.by).filter((key) => !key.startsWith('find '))).toEqual([]);
        expect(Object.keys(plain.by).filter((key) => !key.startsWith('find '))).toEqual([]);
        // The process that read the newest threads before remembers which are finished: it reads only those it lists.
        const again = await commands(() => store.lists.page({ party: 'to', handle, limit: 20, statuses: INBOX }));
        expect(again.by['find threads']).toBe(21);
      }
      // 200 ≡ 8 and 800 ≡ 0 (mod 16): the newest partial block accounts for at most 15 entries (and threads) more or fewer.
      expect(Math.abs(cost[800]!.status - cost[200]!.status)).toBeLessThanOrEqual(2 * 15);
      expect(Math.abs(cost[800]!.plain - cost[200]!.plain)).toBeLessThanOrEqual(15);
    } finally {
      await other.close();
    }
  });

  test('a history placed by the migration (statuses known at placement) is cheap from its very first page', async () => {
    const handle = `migrated-${randomUUID().slice(0, 6)}@acme`;
    const made = await history(handle, 400, async (from, status) => threadDoc(from, handle, status));
    for (const [doc, place] of await placeInMailboxes(store, made).then((places) => made.map((d) => [d, places.get(d._id)!] as const))) doc.mailbox = place;
    await store.threads.insertMany(made);
    const first = await commands(() => store.lists.page({ party: 'to', handle, limit: 20, statuses: INBOX }));
    expect(first.result.threads.map((t) => t._id)).toEqual(made.filter((t) => INBOX.includes(t.status)).map((t) => t._id).reverse().slice(0, 20));
    expect(first.count).toBeLessThanOrEqual(9 + 15 + 12 + 21 + 15);
    expect(await walk(store.lists, { party: 'to', handle, limit: 20, statuses: INBOX })).toEqual(await walk(indexed(), { party: 'to', handle, limit: 20, statuses: INBOX }));
  });
});

test('a position that stays empty gets no block over it, lists skip it, and once filled late it is listed and its block written', async () => {
  const reader = `holes-${randomUUID().slice(0, 6)}@acme`;
  const box = boxName('to', reader);
  // Another relay process whose insert of one position fails after it took the position (it died there).
  let failNext = false;
  const flaky = {
    insert: async (doc: MailboxEntryDoc) => {
      if (!failNext) return void (await store.mailboxEntries.insertOne(doc));
      failNext = false;
      throw new Error('process died');
    },
  } as unknown as InsertBatcher<MailboxEntryDoc>;
  const other = new MailboxLog(store.mailboxEntries, store.mailboxHeads, flaky, store.mailboxBlocks);
  const made: ThreadDoc[] = [];
  let lost: ThreadDoc | null = null;
  for (let position = 1; position <= 40; position += 1) {
    const doc = threadDoc('s@acme', reader, position % 3 === 0 ? 'pending' : 'completed');
    if (position === 6) {
      failNext = true;
      await expect(other.append(box, doc._id, doc.created_at)).rejects.toThrow('process died');
      lost = doc;
      continue;
    }
    expect(await other.append(box, doc._id, doc.created_at)).toBe(position);
    doc.mailbox = { to: position, from: 0 };
    made.push(doc);
  }
  await store.threads.insertMany(made);
  const blocks = async () => (await store.mailboxBlocks.find({ _id: { $in: [0, 1, 2].map((k) => blockId(box, k)) } }).toArray()).map((b) => b._id);
  // The append that filled position 16 found 6 empty; the one that filled 32 wrote its block.
  expect(await blocks()).toEqual([blockId(box, 1)]);

  const byStatus = (statuses?: ThreadStatus[]) => ({ party: 'to' as const, handle: reader, limit: 4, ...(statuses ? { statuses } : {}) });
  for (const statuses of [undefined, INBOX]) {
    const expected = made.filter((t) => !statuses || statuses.includes(t.status)).map((t) => t._id).reverse();
    expect(await walk(store.lists, byStatus(statuses))).toEqual(expected);
  }
  // The pages read block 0 position by position, and wrote nothing over the hole.
  expect(await blocks()).toEqual([blockId(box, 1)]);

  // A process with a stale memory of the box fills position 6 late: its thread is listed in its place.
  lost!.mailbox = { to: 6, from: 0 };
  await store.mailboxEntries.insertOne({ _id: entryId(box, 6), thread_id: lost!._id, created_at: lost!.created_at });
  await store.threads.insertOne(lost!);
  const all = [...made, lost!].sort((a, b) => a.mailbox!.to - b.mailbox!.to);
  for (const statuses of [undefined, INBOX]) {
    const expected = all.filter((t) => !statuses || statuses.includes(t.status)).map((t) => t._id).reverse();
    expect(await walk(store.lists, byStatus(statuses))).toEqual(expected);
  }
  // Now full, block 0 was written by the page that read it, with the entries as they are.
  expect((await blocks()).sort()).toEqual([blockId(box, 0), blockId(box, 1)]);
  const block = (await store.mailboxBlocks.findOne({ _id: blockId(box, 0) }))!;
  expect(block.entries.map((e) => e.thread_id)).toEqual(all.slice(0, 16).map((t) => t._id));
});

test.each([
  ['with the inbox filter', INBOX],
  ['without a filter', undefined],
])('threads created and changing status between pages, %s: each listed once, newest first, every match throughout listed', async (_name, statuses) => {
  const reader = `moving-${randomUUID().slice(0, 6)}@acme`;
  const initial = await history(reader, 120, (from, status) => newThread(from, reader, status));
  const query = { party: 'to' as const, handle: reader, limit: 7, ...(statuses ? { statuses } : {}) };
  // A first look teaches the blocks which threads are finished.
  await walk(store.lists, query);
  const open = initial.filter((t) => INBOX.includes(t.status));
  const finished = new Set<string>();
  const ids = await walk(store.lists, query, async (page) => {
    await newThread('late@acme', reader);
    // One not reached yet moves between open states; the newest open ones finish (listed by now, when filtered);
    // now and then an old open one finishes before the walk gets to it.
    const notReached = open[page % open.length]!;
    await store.writeThread(notReached._id, (doc) => (INBOX.includes(doc.status) ? { ...doc, status: doc.status === 'pending' ? 'accepted' : 'pending' } : undefined));
    const newest = open[open.length - 1 - page];
    if (newest) await store.writeThread(newest._id, (doc) => ({ ...doc, status: 'completed' }));
    if (newest) finished.add(newest._id);
    const old = open[page + 3];
    if (old && page % 4 === 0) await store.writeThread(old._id, (doc) => ({ ...doc, status: 'declined' }));
    if (old && page % 4 === 0) finished.add(old._id);
  });
  expect(new Set(ids).size).toBe(ids.length);
  // Only threads from before the walk's first page, newest first.
  const position = new Map(initial.map((t) => [t._id, t.mailbox!.to]));
  expect(ids.every((id) => position.has(id))).toBe(true);
  expect(ids).toEqual([...ids].sort((a, b) => position.get(b)! - position.get(a)!));
  if (statuses) {
    // Every thread that matched throughout is listed; none that never matched is.
    expect(ids.filter((id) => !open.some((t) => t._id === id))).toEqual([]);
    for (const t of open) if (!finished.has(t._id)) expect(ids).toContain(t._id);
  } else {
    expect(ids).toEqual(initial.map((t) => t._id).reverse());
  }
}, 120_000);
