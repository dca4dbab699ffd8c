// The thread store's contract on the server the tests use (FerretDB here, MongoDB anywhere MONGODB_URL points to
// one): versioned writes under contention and writer failure, and list pages while threads are created and change.
import { randomUUID } from 'node:crypto';
import type { CommandStartedEvent } from 'mongodb';
import type { ThreadDoc } from '../../relay-core/domain/documents';
import type { ThreadStatus } from '../../relay-core/domain/schemas';
import { MongoStore } from '../../relay-core/store/mongo-store';
import type { ThreadLists } from '../../relay-core/store/thread-lists';
import { testMongoUrl, uniqueName } from '../helpers/test-env';
import { readsIndexOn } from '../helpers/query-plans';
import { threadDocAt } from '../helpers/thread-docs';

let store: MongoStore;
const commands: CommandStartedEvent[] = [];

beforeAll(async () => {
  store = await MongoStore.connect(testMongoUrl(), uniqueName('thread_contract'), { monitorCommands: true });
  store.db.client.on('commandStarted', (event) => commands.push(event));
  await store.ensureIndexes();
});

afterAll(async () => {
  await store?.db.dropDatabase();
  await store?.close();
});

let clock = Date.UTC(2026, 0, 1);

/** A new thread as the relay creates it. */
async function newThread(from: string, to: string, status: ThreadStatus = 'pending'): Promise<ThreadDoc> {
  const doc = threadDocAt(from, to, status, new Date((clock += 1_000)));
  await store.threads.insertOne(doc);
  return doc;
}

const setStatus = (id: string, status: ThreadStatus) => store.writeThread(id, (doc) => ({ ...doc, status }));

describe(`versioned writes (${process.env.MONGODB_URL ? 'MONGODB_URL' : 'FerretDB'})`, () => {
  test('concurrent writes of different fields lose none of them, and each bumps the version once', async () => {
    const thread = await newThread('a@acme', 'b@acme');
    await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        store.writeThread(thread._id, (doc) => ({ ...doc, metadata: { ...doc.metadata, [`k${i}`]: i } })),
      ),
    );
    const after = await store.readThread(thread._id);
    expect(Object.keys(after!.metadata).sort()).toEqual(Array.from({ length: 12 }, (_, i) => `k${i}`).sort());
    expect(after!.version).toBe(13);
    // Once every writer is done, the stored document itself is the newest version, whatever order the writes landed in.
    expect((await store.threads.findOne({ _id: thread._id }))!.version).toBe(13);
  });

  test('20 concurrent transitions from pending: exactly one wins, the others see it', async () => {
    const thread = await newThread('a@acme', 'b@acme');
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        store.writeThread(thread._id, (doc) =>
          doc.status === 'pending' ? { ...doc, status: 'accepted', decline_reason: `winner ${i}` } : undefined,
        ),
      ),
    );
    const winners = results.filter((r) => r.after !== null);
    expect(winners).toHaveLength(1);
    for (const lost of results.filter((r) => r.after === null)) expect(lost.before?.status).toBe('accepted');
    const after = await store.readThread(thread._id);
    expect(after).toMatchObject({ status: 'accepted', version: 2, decline_reason: winners[0]!.after!.decline_reason });
  });

  test('a write from the thread as read moments ago does not read it again; from one another write has passed since, it loses nothing', async () => {
    const thread = await newThread('a@acme', 'b@acme');
    const read = (await store.readThread(thread._id))!;
    const seen = commands.length;
    const first = await store.writeThread(thread._id, (doc) => ({ ...doc, metadata: { ...doc.metadata, a: 1 } }), read);
    expect(first.after).toMatchObject({ version: (read.version ?? 0) + 1, metadata: { a: 1 } });
    expect(commands.slice(seen).filter((c) => c.commandName === 'find' && c.command.find === 'threads')).toHaveLength(
      0,
    );

    // `read` is a version behind now: the write lands on the newest version, keeping the one before.
    const second = await store.writeThread(
      thread._id,
      (doc) => ({ ...doc, metadata: { ...doc.metadata, b: 2 } }),
      read,
    );
    expect(second.after).toMatchObject({ version: (read.version ?? 0) + 2, metadata: { a: 1, b: 2 } });
    expect(await store.readThread(thread._id)).toMatchObject({
      version: (read.version ?? 0) + 2,
      metadata: { a: 1, b: 2 },
    });
  });

  test("the job of an event this process just wrote reads nothing; another process's newer version is read, and a write from the older loses nothing", async () => {
    const doc = threadDocAt('a@acme', 'b@acme', 'pending', new Date((clock += 1_000)));
    await store.insertThread(doc);
    const threadReads = (since: number) =>
      commands.slice(since).filter((c) => c.commandName === 'find' && c.command.find === 'threads');
    let seen = commands.length;
    const created = (await store.readThreadFrom(doc._id, doc.version))!;
    expect(created).toMatchObject({ _id: doc._id, version: doc.version, status: 'pending' });
    expect(threadReads(seen)).toHaveLength(0);
    // A write from it starts from it (no read of the thread first), and its result is what the next job gets.
    seen = commands.length;
    const written = await store.writeThread(
      doc._id,
      (current) => ({ ...current, metadata: { ...current.metadata, here: 1 } }),
      created,
    );
    expect(written.after).toMatchObject({ version: doc.version! + 1, metadata: { here: 1 } });
    expect(commands.slice(seen).filter((c) => c.commandName === 'find' && c.command.find === 'threads')).toHaveLength(
      0,
    );
    seen = commands.length;
    expect(await store.readThreadFrom(doc._id, doc.version! + 1)).toBe(written.after);
    expect(threadReads(seen)).toHaveLength(0);

    // Another relay process (its own store) writes the next version: a job of that event reads it from the server.
    const other = await MongoStore.connect(testMongoUrl(), store.db.databaseName);
    try {
      await other.writeThread(doc._id, (current) => ({ ...current, metadata: { ...current.metadata, there: 2 } }));
    } finally {
      await other.close();
    }
    seen = commands.length;
    expect(await store.readThreadFrom(doc._id, doc.version! + 2)).toMatchObject({
      version: doc.version! + 2,
      metadata: { here: 1, there: 2 },
    });
    // The stored document alone: it is at that version (a newer claim would be a later event's).
    expect(threadReads(seen).map((c) => `${c.command.find} ${c.command.filter._id}`)).toEqual([`threads ${doc._id}`]);
    // A write from this process's older version lands on the newest one.
    const stale = (await store.readThreadFrom(doc._id, doc.version! + 1))!;
    const next = await store.writeThread(doc._id, (current) => ({ ...current, status: 'accepted' }), stale);
    expect(next.after).toMatchObject({
      version: doc.version! + 3,
      status: 'accepted',
      metadata: { here: 1, there: 2 },
    });
    expect(await store.readThread(doc._id)).toMatchObject({
      version: doc.version! + 3,
      status: 'accepted',
      metadata: { here: 1, there: 2 },
    });
  });

  test('a large thread (over 16 KiB) is not kept in memory: the job of its event reads it back', async () => {
    const doc = {
      ...threadDocAt('a@acme', 'b@acme', 'pending', new Date((clock += 1_000))),
      metadata: { notes: 'x'.repeat(20_000) },
    };
    await store.insertThread(doc);
    const seen = commands.length;
    expect(await store.readThreadFrom(doc._id, doc.version)).toMatchObject({
      _id: doc._id,
      metadata: { notes: doc.metadata.notes },
    });
    expect(commands.slice(seen).filter((c) => c.commandName === 'find' && c.command.find === 'threads')).toHaveLength(
      1,
    );
  });

  test('a version conflict is retried on the newer version, never applied to the older one', async () => {
    const thread = await newThread('a@acme', 'b@acme');
    let calls = 0;
    const seen: number[] = [];
    const slow = store.writeThread(thread._id, (doc) => {
      calls += 1;
      seen.push(doc.version);
      return { ...doc, summary: `${doc.summary} + slow` };
    });
    const fast = store.writeThread(thread._id, (doc) => ({ ...doc, question: 'fast' }));
    await Promise.all([slow, fast]);
    const after = await store.readThread(thread._id);
    expect(after).toMatchObject({ version: 3, question: 'fast', summary: 'from a@acme + slow' });
    expect(calls).toBeGreaterThanOrEqual(1);
  });

  test('writes of one thread from two processes (two stores, two connection pools) lose none of them', async () => {
    const thread = await newThread('a@acme', 'b@acme');
    const other = await MongoStore.connect(testMongoUrl(), store.db.databaseName);
    try {
      await Promise.all(
        Array.from({ length: 16 }, (_, i) =>
          (i % 2 ? other : store).writeThread(thread._id, (doc) => ({
            ...doc,
            metadata: { ...doc.metadata, [`p${i}`]: i },
          })),
        ),
      );
    } finally {
      await other.close();
    }
    const after = await store.readThread(thread._id);
    expect(Object.keys(after!.metadata).filter((k) => k.startsWith('p'))).toHaveLength(16);
    expect(after!.version).toBe(17);
  });
});

async function walk(
  lists: ThreadLists,
  party: 'to' | 'from',
  handle: string,
  statuses: ThreadStatus[] | undefined,
  between: (page: number) => Promise<void>,
) {
  const ids: string[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 100; page += 1) {
    const got = await lists.page({
      party,
      handle,
      limit: 7,
      ...(statuses ? { statuses } : {}),
      ...(cursor ? { cursor } : {}),
    });
    ids.push(...got.threads.map((t) => t._id));
    if (!got.next_cursor) return ids;
    cursor = got.next_cursor;
    await between(page);
  }
  throw new Error('more than 100 pages');
}

describe('tasks/list pages', () => {
  const lists = (): ThreadLists => store.lists;
  test('every thread exactly once, newest first, while threads are created and change status between pages', async () => {
    const reader = `reader-${randomUUID().slice(0, 8)}@acme`;
    const initial: ThreadDoc[] = [];
    for (let i = 0; i < 30; i += 1)
      initial.push(await newThread(`s${i % 3}@acme`, reader, i % 4 === 0 ? 'accepted' : 'pending'));
    const open = new Set(initial.map((t) => t._id));
    const ids = await walk(lists(), 'to', reader, ['pending', 'accepted'], async (page) => {
      await newThread('late@acme', reader);
      // A thread not yet reached changes between open states; one already listed leaves the filter.
      const notReached = initial[page]!;
      await setStatus(notReached._id, notReached.status === 'pending' ? 'accepted' : 'pending');
      const listed = initial[initial.length - 1 - page]!;
      await setStatus(listed._id, 'completed');
    });
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of open) expect(ids).toContain(id);
    expect(ids.slice(0, 30)).toEqual(
      initial
        .map((t) => t._id)
        .reverse()
        .slice(0, 30),
    );
  });

  test('oldest first (the web inbox’s Waiting for me): every open thread once, in creation order, with a count', async () => {
    const reader = `reader-${randomUUID().slice(0, 8)}@acme`;
    const made: ThreadDoc[] = [];
    for (let i = 0; i < 17; i += 1) made.push(await newThread('s@acme', reader, i % 5 === 0 ? 'completed' : 'pending'));
    const ids: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 10; page += 1) {
      const got = await lists().page({
        party: 'to',
        handle: reader,
        limit: 4,
        statuses: ['pending', 'accepted'],
        oldestFirst: true,
        ...(cursor ? { cursor } : {}),
      });
      ids.push(...got.threads.map((t) => t._id));
      if (!got.next_cursor) break;
      cursor = got.next_cursor;
      // One created meanwhile is newer than every cursor: it comes last.
      if (page === 0) made.push(await newThread('late@acme', reader));
    }
    const open = made.filter((t) => t.status === 'pending').map((t) => t._id);
    expect(ids).toEqual(open);
    expect(await lists().count({ party: 'to', handle: reader, statuses: ['pending', 'accepted'] }, 100)).toBe(
      open.length,
    );
    expect(await lists().count({ party: 'to', handle: reader, statuses: ['completed'] }, 100)).toBe(4);
    // Counting stops at `upTo`, however many match.
    expect(await lists().count({ party: 'to', handle: reader, statuses: ['completed'] }, 3)).toBe(3);
    expect(await lists().count({ party: 'to', handle: reader }, 2)).toBe(2);
  });

  test('a one-status page and count of a party read through that party’s own index, whatever the other threads hold', async () => {
    const reader = `reader-${randomUUID().slice(0, 8)}@acme`;
    // Many pending threads of others, few of the reader's: an index led by status would walk the others' too.
    for (let i = 0; i < 60; i += 1) await newThread('s@acme', `other${i % 7}@acme`);
    const mine = [await newThread('s@acme', reader), await newThread('s@acme', reader, 'accepted')];
    const seen = commands.length;
    const page = await lists().page({ party: 'to', handle: reader, limit: 20, statuses: ['pending'] });
    expect(page.threads.map((t) => t._id)).toEqual([mine[0]!._id]);
    expect(await lists().count({ party: 'from', handle: 's@acme', statuses: ['accepted'] }, 100)).toBeGreaterThan(0);
    // The unclaimed handoffs offered to the reader: a page without a status filter reads them through `claimable`.
    expect((await lists().page({ party: 'to', handle: reader, limit: 1 })).threads).toHaveLength(1);
    const finds = commands.slice(seen).filter((c) => c.commandName === 'find' && c.command.find === 'threads');
    expect(finds.length).toBeGreaterThanOrEqual(2);
    for (const { command } of finds) {
      const { find, filter, sort, limit, projection } = command;
      // The driver hands the sort over as a Map.
      const asked = { find, filter, limit, projection, ...(sort ? { sort: Object.fromEntries(sort) } : {}) };
      const plan = JSON.stringify(await store.db.command({ explain: asked }));
      const [party, field] =
        'to' in filter ? ['inbox', 'to'] : 'from' in filter ? ['sent', 'from'] : ['claimable', 'claimable'];
      expect([filter, readsIndexOn(plan, party, field)]).toEqual([filter, true]);
    }
  });

  test('without a status filter, a page holds every status; a cursor gives the same page twice; a forged one is invalid_params', async () => {
    const reader = `reader-${randomUUID().slice(0, 8)}@acme`;
    const made: ThreadDoc[] = [];
    for (const status of [
      'pending',
      'completed',
      'declined',
      'accepted',
      'cancelled',
      'pending',
      'completed',
      'pending',
      'completed',
    ] as ThreadStatus[]) {
      made.push(await newThread('s@acme', reader, status));
    }
    const first = await lists().page({ party: 'to', handle: reader, limit: 4 });
    expect(first.threads.map((t) => t._id)).toEqual(
      made
        .map((t) => t._id)
        .reverse()
        .slice(0, 4),
    );
    const second = await lists().page({ party: 'to', handle: reader, limit: 4, cursor: first.next_cursor! });
    const again = await lists().page({ party: 'to', handle: reader, limit: 4, cursor: first.next_cursor! });
    expect(again).toEqual(second);
    expect(second.threads.map((t) => t._id)).toEqual(
      made
        .map((t) => t._id)
        .reverse()
        .slice(4, 8),
    );
    const sent = await lists().page({ party: 'from', handle: 's@acme', limit: 3 });
    expect(sent.threads.map((t) => t._id)).toEqual(
      made
        .map((t) => t._id)
        .reverse()
        .slice(0, 3),
    );
    await expect(
      lists().page({ party: 'to', handle: reader, limit: 4, cursor: 'bm90LWEtY3Vyc29y' }),
    ).rejects.toMatchObject({ code: 'invalid_params' });
  });
});

describe('ListTasks pages (every thread a teammate can see)', () => {
  const lists = (): ThreadLists => store.lists;
  /** A thread with its status history as the relay writes it: one change at `at`. */
  async function visibleThread(
    from: string,
    to: string,
    status: ThreadStatus,
    extra: Partial<ThreadDoc> = {},
  ): Promise<ThreadDoc> {
    const at = new Date((clock += 1_000));
    const doc = {
      ...threadDocAt(from, to, status, at),
      status_history: [{ status, by: from, at, via: 'a2a' as const }],
      ...extra,
    };
    await store.threads.insertOne(doc);
    return doc;
  }

  async function walkVisible(
    handle: string,
    narrow: { statuses?: ThreadStatus[]; statusSince?: Date; threadId?: string } = {},
  ) {
    const ids: string[] = [];
    const totals: number[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 100; page += 1) {
      const got = await lists().visiblePage({ handle, limit: 3, ...narrow, ...(cursor ? { cursor } : {}) });
      ids.push(...got.threads.map((t) => t._id));
      totals.push(got.total);
      if (!got.next_cursor) return { ids, totals };
      cursor = got.next_cursor;
    }
    throw new Error('more than 100 pages');
  }

  test('sent, received and offered-unclaimed threads, each exactly once, newest first, with the total of them all', async () => {
    const me = `me-${randomUUID().slice(0, 8)}@acme`;
    const mine: ThreadDoc[] = [];
    mine.push(await visibleThread(me, 'b@acme', 'pending'));
    mine.push(await visibleThread('a@acme', me, 'accepted'));
    await visibleThread('a@acme', 'b@acme', 'pending'); // someone else's
    mine.push(await visibleThread('a@acme', 'role:backend', 'unclaimed', { candidates: [me, 'c@acme'] }));
    await visibleThread('a@acme', me, 'awaiting_approval', { hidden_from_recipient: true }); // held from me until approved
    mine.push(await visibleThread(me, 'c@acme', 'awaiting_approval', { hidden_from_recipient: true })); // but the sender sees it
    mine.push(await visibleThread('a@acme', me, 'unclaimed', { candidates: [me] })); // addressed to me and offered to me: once
    mine.push(await visibleThread(me, 'a@acme', 'completed'));
    mine.push(await visibleThread('c@acme', me, 'declined'));

    const { ids, totals } = await walkVisible(me);
    expect(ids).toEqual(mine.map((t) => t._id).reverse());
    expect(new Set(totals)).toEqual(new Set([mine.length]));
  });

  test('narrowed by status, by last status change and by thread id, with totals to match; a forged cursor is invalid_params', async () => {
    const me = `me-${randomUUID().slice(0, 8)}@acme`;
    const pending = await visibleThread(me, 'b@acme', 'pending');
    const unclaimed = await visibleThread('a@acme', 'role:web', 'unclaimed', { candidates: [me] });
    const old = await visibleThread('a@acme', me, 'completed');
    // A thread created before the instant whose status changed after it counts; one whose last change is before does not.
    const since = new Date((clock += 1_000));
    const changed = await visibleThread('a@acme', me, 'accepted');
    const late = new Date(since.getTime() + 500);
    await store.threads.updateOne(
      { _id: pending._id },
      { $push: { status_history: { status: 'pending', by: me, at: late, via: 'a2a' } } },
    );

    expect((await walkVisible(me, { statuses: ['pending', 'unclaimed'] })).ids).toEqual([unclaimed._id, pending._id]);
    expect((await walkVisible(me, { statuses: ['pending'] })).ids).toEqual([pending._id]);
    const recent = await walkVisible(me, { statusSince: since });
    expect(recent.ids).toEqual([changed._id, pending._id]);
    expect(recent.totals).toEqual([2]);
    expect((await walkVisible(me, { threadId: old._id })).ids).toEqual([old._id]);
    const notMine = await visibleThread('a@acme', 'b@acme', 'pending');
    expect(await lists().visiblePage({ handle: me, limit: 5, threadId: notMine._id })).toEqual({
      threads: [],
      next_cursor: null,
      total: 0,
    });
    await expect(lists().visiblePage({ handle: me, limit: 5, cursor: 'bm90LWEtY3Vyc29y' })).rejects.toMatchObject({
      code: 'invalid_params',
    });
  });
});
