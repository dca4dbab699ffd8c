// What the store's one design needs from its database engine, checked on the server the tests use (the embedded
// FerretDB build, or whatever MONGODB_URL points to): conditional updates that are atomic across connections, an
// `_id` lookup served by the `_id` index when the filter also holds other conditions, and a command of hundreds of
// statements answered. Each of these failed on a stock FerretDB 1.24 (scripts/local-services/ferretdb-build.ts and
// ferretdb-patches/ beside it hold what makes the embedded one pass).
import {
  Binary,
  BSON,
  BSONRegExp,
  Int32,
  Long,
  MongoClient,
  ObjectId,
  Timestamp,
  type Collection,
  type Document,
} from 'mongodb';
import { readsIndexOn } from '../helpers/query-plans';
import { testMongoUrl, uniqueName } from '../helpers/test-env';

interface Counter {
  _id: string;
  n: number;
  version?: number;
}

const dbName = uniqueName('store_engine');
let clients: MongoClient[] = [];

/** The same collection through each of four connections, so the server sees concurrent commands. */
function through(name: string): Array<Collection<Counter>> {
  return clients.map((client) => client.db(dbName).collection<Counter>(name));
}

beforeAll(async () => {
  clients = await Promise.all(Array.from({ length: 4 }, () => MongoClient.connect(testMongoUrl(), { maxPoolSize: 4 })));
});

afterAll(async () => {
  await clients[0]?.db(dbName).dropDatabase();
  await Promise.all(clients.map((client) => client.close()));
});

test('findOneAndUpdate with $inc from four connections: every caller gets its own count and none is lost', async () => {
  const [first, ...others] = through('counters');
  await first!.insertOne({ _id: 'c', n: 0 });
  const calls = [first!, ...others].flatMap((docs) =>
    Array.from({ length: 50 }, () =>
      docs.findOneAndUpdate({ _id: 'c' }, { $inc: { n: 1 } }, { returnDocument: 'after' }),
    ),
  );
  const counts = (await Promise.all(calls)).map((doc) => doc!.n);
  expect(new Set(counts).size).toBe(200);
  expect((await first!.findOne({ _id: 'c' }))!.n).toBe(200);
});

test.each([
  [
    'findOneAndReplace',
    (docs: Collection<Counter>) => docs.findOneAndReplace({ _id: 'v', version: 1 }, { n: 1, version: 2 }).then(Boolean),
  ],
  [
    'updateOne',
    (docs: Collection<Counter>) =>
      docs.updateOne({ _id: 'v', version: 1 }, { $set: { version: 2 } }).then((r) => r.modifiedCount === 1),
  ],
])('20 racing %s calls conditional on version 1: exactly one wins', async (_name, write) => {
  const collections = through(`race_${_name}`);
  await collections[0]!.insertOne({ _id: 'v', n: 0, version: 1 });
  const wins = await Promise.all(collections.flatMap((docs) => Array.from({ length: 5 }, () => write(docs))));
  expect(wins.filter(Boolean)).toHaveLength(1);
  expect((await collections[0]!.findOne({ _id: 'v' }))!.version).toBe(2);
});

test('a delete conditional on version 1 racing an update to version 2 never deletes version 2', async () => {
  const [docs, other] = through('delete_race');
  for (let round = 0; round < 20; round += 1) {
    const id = `d${round}`;
    await docs!.insertOne({ _id: id, n: 0, version: 1 });
    const [deleted, updated] = await Promise.all([
      other!.deleteOne({ _id: id, version: 1 }),
      docs!.updateOne({ _id: id, version: 1 }, { $set: { version: 2 } }),
    ]);
    // Exactly one of them saw version 1; if the update won, version 2 is still there.
    expect(deleted.deletedCount + updated.modifiedCount).toBe(1);
    expect(await docs!.countDocuments({ _id: id })).toBe(updated.modifiedCount);
  }
});

/** Whether an explain's plan (SQLite's, MongoDB's or PostgreSQL's words for it) reads through an index. */
function indexServed(explain: Document): boolean {
  const plan = JSON.stringify(explain.queryPlanner ?? explain);
  return /USING (COVERING )?INDEX|IXSCAN|IDHACK|EXPRESS_|Index Scan|Bitmap Index Scan/i.test(plan);
}

test.each([
  ['{ _id, version }', { _id: 'id5', version: 1 }],
  ['{ _id: { $in } }', { _id: { $in: ['id5', 'id6'] } }],
  ['{ _id: { $in }, version }', { _id: { $in: ['id5', 'id6'] }, version: 1 }],
])('a find by %s is served by the _id index, and finds what it should', async (_name, filter) => {
  const [docs] = through('lookups');
  if ((await docs!.estimatedDocumentCount()) === 0) {
    await docs!.insertMany(Array.from({ length: 500 }, (_, i) => ({ _id: `id${i}`, n: i, version: i === 6 ? 2 : 1 })));
  }
  expect(indexServed(await docs!.find(filter as never).explain())).toBe(true);
  const found = (await docs!.find(filter as never).toArray()).map((doc) => doc._id).sort();
  expect(found).toEqual('version' in filter ? ['id5'] : ['id5', 'id6']);
});

describe('secondary indexes', () => {
  interface Row {
    _id: string;
    to: string;
    status: string;
    created_at: Date;
  }
  const statuses = ['pending', 'accepted', 'completed'];
  const base = Date.UTC(2026, 0, 1);
  const rows: Row[] = Array.from({ length: 3000 }, (_, i) => ({
    _id: `t${String(i).padStart(5, '0')}`,
    to: `u${i % 10}`,
    status: statuses[i % 3]!,
    // Three rows share each second, so pages cut through ties broken by _id.
    created_at: new Date(base + Math.floor(i / 3) * 1000),
  }));
  const newestFirst = (a: Row, b: Row) => b.created_at.getTime() - a.created_at.getTime() || (a._id < b._id ? 1 : -1);
  let threads: Collection<Row>;

  beforeAll(async () => {
    threads = clients[0]!.db(dbName).collection<Row>('inbox');
    await threads.createIndex({ to: 1, created_at: -1, _id: -1, status: 1 }, { name: 'inbox' });
    await threads.insertMany(rows);
  });

  test('a page (equality, $in, sort and limit) is served by the compound index and is the page MongoDB would return', async () => {
    const filter = { to: 'u3', status: { $in: ['pending', 'completed'] } };
    expect(indexServed(await threads.find(filter).sort({ created_at: -1, _id: -1 }).limit(21).explain())).toBe(true);
    const page = await threads.find(filter).sort({ created_at: -1, _id: -1 }).limit(21).toArray();
    const expected = rows
      .filter((r) => r.to === 'u3' && r.status !== 'accepted')
      .sort(newestFirst)
      .slice(0, 21);
    expect(page.map((r) => r._id)).toEqual(expected.map((r) => r._id));
  });

  test('oldest first (the web inbox’s Waiting for me: the same index walked the other way) is served by it, and counts right', async () => {
    const filter = { to: 'u4', status: { $in: ['pending', 'accepted'] } };
    const sorted = threads.find(filter).sort({ created_at: 1, _id: 1 }).limit(21);
    expect(indexServed(await sorted.explain())).toBe(true);
    const expected = rows
      .filter((r) => r.to === 'u4' && r.status !== 'completed')
      .sort((a, b) => -newestFirst(a, b))
      .slice(0, 21);
    expect((await threads.find(filter).sort({ created_at: 1, _id: 1 }).limit(21).toArray()).map((r) => r._id)).toEqual(
      expected.map((r) => r._id),
    );
    expect(await threads.countDocuments(filter)).toBe(
      rows.filter((r) => r.to === 'u4' && r.status !== 'completed').length,
    );
  });

  test('the next page after a cursor ($and, $or on the sort keys, a range) is served by the index and starts where the first ended', async () => {
    const all = rows.filter((r) => r.to === 'u7').sort(newestFirst);
    const last = all[39]!;
    const filter = {
      $and: [
        { to: 'u7' },
        { $or: [{ created_at: { $lt: last.created_at } }, { created_at: last.created_at, _id: { $lt: last._id } }] },
      ],
      created_at: { $lte: last.created_at },
    };
    expect(indexServed(await threads.find(filter).sort({ created_at: -1, _id: -1 }).limit(20).explain())).toBe(true);
    const page = await threads.find(filter).sort({ created_at: -1, _id: -1 }).limit(20).toArray();
    expect(page.map((r) => r._id)).toEqual(all.slice(40, 60).map((r) => r._id));
  });

  test('the web inbox’s filters (teammate, intent, both) are served by the lists’ own indexes, whose later keys they are', async () => {
    type Filtered = Row & { from: string; intent: string };
    const filtered = clients[0]!.db(dbName).collection<Filtered>('filtered');
    // The threads' indexes as ensureIndexes makes them (store/mongo-store.ts).
    await filtered.createIndex({ to: 1, created_at: -1, _id: -1, status: 1, intent: 1, from: 1 }, { name: 'inbox' });
    await filtered.createIndex({ from: 1, created_at: -1, _id: -1, status: 1, intent: 1, to: 1 }, { name: 'sent' });
    const intents = ['inform', 'ask_question', 'propose_action'];
    const all = rows.map((r, i) => ({ ...r, from: `s${i % 7}`, intent: intents[i % 3]! }));
    await filtered.insertMany(all);
    for (const [filter, index, expected] of [
      [{ to: 'u3', from: 's5' }, 'inbox', all.filter((r) => r.to === 'u3' && r.from === 's5')],
      [{ to: 'u3', intent: 'ask_question' }, 'inbox', all.filter((r) => r.to === 'u3' && r.intent === 'ask_question')],
      [
        { to: 'u3', intent: 'ask_question', from: 's5' },
        'inbox',
        all.filter((r) => r.to === 'u3' && r.intent === 'ask_question' && r.from === 's5'),
      ],
    ] as const) {
      const find = () => filtered.find(filter).sort({ created_at: -1, _id: -1 }).limit(21);
      const plan = JSON.stringify((await find().explain()).queryPlanner ?? (await find().explain()));
      expect(indexServed(await find().explain())).toBe(true);
      // The plan names the index it reads (SQLite: USING INDEX <collection>_<hash>_<name>; MongoDB: indexName).
      // (A pair of people is one walk of either's list: the engine may pick `sent` for the other side.)
      expect([filter, readsIndexOn(plan, index, 'to') || ('from' in filter && plan.includes('sent'))]).toEqual([
        filter,
        true,
      ]);
      expect((await find().toArray()).map((r) => r._id)).toEqual(
        [...expected]
          .sort(newestFirst)
          .slice(0, 21)
          .map((r) => r._id),
      );
    }
  });

  test('a text index: $text finds a word in a string or an array of strings whatever its case, beside an $or of the sides, sorted and limited; several words find at least the documents holding all; writes, updates and deletes keep it', async () => {
    interface Text {
      _id: string;
      from: string;
      to: string;
      created_at: Date;
      words: string[];
    }
    const text = clients[0]!.db(dbName).collection<Text>('thread_text');
    const vocabulary = ['cursor', 'invoice', 'deploy', 'gateway'];
    const docs: Text[] = rows.map((r, i) => ({
      _id: r._id,
      from: `u${(i * 7) % 10}`,
      to: r.to,
      created_at: r.created_at,
      words: [`Fix the ${vocabulary[i % 4]} page`, `Also the ${vocabulary[(i + 1) % 4]!.toUpperCase()}, then`],
    }));
    // Half before the index (it is built from them), half after (its triggers add them).
    await text.insertMany(docs.slice(0, 600));
    // As ThreadText.ensureIndexes makes it (store/thread-text.ts).
    await text.createIndex({ words: 'text' }, { name: 'by_words', default_language: 'none' });
    await text.insertMany(docs.slice(600));
    const having = (...words: string[]) =>
      docs.filter((d) => words.every((w) => d.words.join(' ').toLowerCase().includes(w))).map((d) => d._id);
    const page = (search: string, party: object) =>
      text
        .find({ $text: { $search: search }, ...party })
        .sort({ created_at: -1, _id: -1 })
        .limit(21)
        .toArray();
    const mine = (d: Text) => d.from === 'u3' || d.to === 'u3';
    // "INVOICE" was written in capitals in half of them, "invoice" is searched.
    expect((await page('"invoice"', { $or: [{ from: 'u3' }, { to: 'u3' }] })).map((d) => d._id)).toEqual(
      docs
        .filter((d) => mine(d) && having('invoice').includes(d._id))
        .sort((a, b) => b.created_at.getTime() - a.created_at.getTime() || (a._id < b._id ? 1 : -1))
        .slice(0, 21)
        .map((d) => d._id),
    );
    const both = (await text.find({ $text: { $search: '"invoice" "deploy"' }, to: 'u3' }).toArray()).map((d) => d._id);
    expect(both).toEqual(
      expect.arrayContaining(having('invoice', 'deploy').filter((id) => docs.find((d) => d._id === id)!.to === 'u3')),
    );
    // An update is searched as it stands now; a deleted document is found no more.
    const [first] = await page('"gateway"', { to: 'u3' });
    await text.updateOne({ _id: first!._id }, { $addToSet: { words: 'zeppelin arrives' } });
    expect((await page('"zeppelin"', {})).map((d) => d._id)).toEqual([first!._id]);
    await text.updateOne({ _id: first!._id }, { $set: { to: 'u4' } });
    expect(await page('"zeppelin"', { to: 'u3' })).toEqual([]);
    await text.deleteOne({ _id: first!._id });
    expect(await page('"zeppelin"', {})).toEqual([]);
    // A word in no document finds none.
    expect(await page('"walrus"', {})).toEqual([]);
  });

  test('a date range sorted on its field is served by the index', async () => {
    const due = clients[0]!.db(dbName).collection<{ _id: string; due_at: Date }>('due');
    await due.createIndex({ due_at: 1 }, { name: 'due' });
    await due.insertMany(
      Array.from({ length: 500 }, (_, i) => ({ _id: `r${i}`, due_at: new Date(base + (500 - i) * 60_000) })),
    );
    const filter = { due_at: { $lte: new Date(base + 5 * 60_000) } };
    expect(indexServed(await due.find(filter).sort({ due_at: 1 }).limit(100).explain())).toBe(true);
    expect((await due.find(filter).sort({ due_at: 1 }).limit(100).toArray()).map((r) => r._id)).toEqual([
      'r499',
      'r498',
      'r497',
      'r496',
      'r495',
    ]);
  });

  test('a range of _id within a key, newest first (the account log), is served by the index and in its order', async () => {
    const log = clients[0]!.db(dbName).collection<{ _id: string; handle: string }>('account_log');
    await log.createIndex({ handle: 1, _id: 1 }, { name: 'by_handle_id' });
    await log.insertMany(
      Array.from({ length: 600 }, (_, i) => ({ _id: `h${i % 3}|${String(i).padStart(4, '0')}`, handle: `h${i % 3}` })),
    );
    const find = () =>
      log
        .find({ handle: 'h1', _id: { $gt: 'h1|', $lt: 'h1|0400' } })
        .sort({ _id: -1 })
        .limit(5);
    expect(indexServed(await find().explain())).toBe(true);
    expect((await find().toArray()).map((d) => d._id)).toEqual(['h1|0397', 'h1|0394', 'h1|0391', 'h1|0388', 'h1|0385']);
  });

  test('an indexed field that holds an array still matches each element, whether the array came before or after the index or with an update', async () => {
    const after = clients[0]!.db(dbName).collection<{ _id: string; skills: string | string[] }>('skills_after');
    await after.createIndex({ skills: 1 }, { name: 'skills' });
    await after.insertMany([
      { _id: 'scalar', skills: 'go' },
      { _id: 'array', skills: ['ts', 'go'] },
      { _id: 'other', skills: ['ts'] },
    ]);
    expect((await after.find({ skills: 'go' }).sort({ _id: 1 }).limit(5).toArray()).map((d) => d._id)).toEqual([
      'array',
      'scalar',
    ]);
    const before = clients[0]!.db(dbName).collection<{ _id: string; role: string | string[] }>('skills_before');
    await before.insertMany([
      { _id: 'scalar', role: 'ops' },
      { _id: 'array', role: ['dev', 'ops'] },
    ]);
    await before.createIndex({ role: 1 }, { name: 'role' });
    expect((await before.find({ role: 'ops' }).sort({ _id: 1 }).limit(5).toArray()).map((d) => d._id)).toEqual([
      'array',
      'scalar',
    ]);
    // An update that makes the field an array, in a document with other arrays beside it.
    const updated = clients[0]!
      .db(dbName)
      .collection<{ _id: string; team: string | string[]; tags: string[] }>('team_updated');
    await updated.createIndex({ team: 1 }, { name: 'team' });
    await updated.insertMany([
      { _id: 'a', team: 'x', tags: ['t'] },
      { _id: 'b', team: 'y', tags: [] },
    ]);
    await updated.updateOne({ _id: 'a' }, { $set: { team: ['x', 'y'] } });
    expect((await updated.find({ team: 'y' }).sort({ _id: 1 }).limit(5).toArray()).map((d) => d._id)).toEqual([
      'a',
      'b',
    ]);
  });
});

describe("a multikey index (a teammate card's skills and owned repos)", () => {
  interface Card {
    _id: string;
    status: string;
    skills?: string | string[] | number[];
    repos_owned: string[];
  }
  const skills = ['go', 'ts', 'rust', 'sql'];
  const cards: Card[] = Array.from({ length: 600 }, (_, i) => ({
    _id: `c${String(i).padStart(4, '0')}`,
    status: i % 7 === 0 ? 'inactive' : 'active',
    // Arrays of one to three skills, a skill alone, none at all, and an array of numbers beside them.
    ...(i % 11 === 0
      ? {}
      : i % 13 === 0
        ? { skills: skills[i % 4]! }
        : i % 17 === 0
          ? { skills: [i, i + 1] }
          : { skills: skills.filter((_, k) => (i >> k) % 3 === 0).concat(i % 5 === 0 ? [] : [skills[i % 4]!]) }),
    repos_owned: [`acme/${['web', 'api', 'ops'][i % 3]}/${i % 4}`, ...(i % 2 ? [`zeta/${i % 3}`] : [])],
  }));
  /** MongoDB's match of a field against one value: the value itself, or an element of an array. */
  const holds = (value: Card['skills'] | string[], meets: (v: unknown) => boolean) =>
    Array.isArray(value) ? (value as unknown[]).some(meets) : value !== undefined && meets(value);
  const ids = (docs: Array<{ _id: string }>) => docs.map((d) => d._id);
  let coll: Collection<Card>;

  beforeAll(async () => {
    coll = clients[0]!.db(dbName).collection<Card>('cards');
    // The skills index is made before the arrays arrive, the repos index after.
    await coll.createIndex({ skills: 1 }, { name: 'by_skill' });
    await coll.insertMany(cards);
    await coll.createIndex({ repos_owned: 1 }, { name: 'by_repo' });
  });

  test('a find by one element is served by the index and finds every document holding it, alone or in an array', async () => {
    const find = () => coll.find({ status: 'active', skills: 'go' }).sort({ _id: 1 }).limit(500);
    expect(readsIndexOn(JSON.stringify((await find().explain()).queryPlanner), 'by_skill', 'skills')).toBe(true);
    const want = cards.filter((c) => c.status === 'active' && holds(c.skills, (v) => v === 'go'));
    expect(want.length).toBeGreaterThan(100);
    expect(ids(await find().toArray())).toEqual(ids(want).slice(0, 500));
    expect(await coll.countDocuments({ skills: { $in: ['rust', 'sql'] } })).toBe(
      cards.filter((c) => holds(c.skills, (v) => v === 'rust' || v === 'sql')).length,
    );
    expect(ids(await coll.find({ skills: 2 }).sort({ _id: 1 }).toArray())).toEqual(
      ids(cards.filter((c) => holds(c.skills, (v) => v === 2))),
    );
    expect(
      ((await coll.distinct('skills', { status: 'active' })) as unknown[]).filter((v) => typeof v === 'string'),
    ).toEqual(['go', 'rust', 'sql', 'ts']);
  });

  test('a range of elements (the repos below a folder) is served by the index and matches as MongoDB does', async () => {
    const [lo, hi] = ['acme/web/', 'acme/web/\uffff'];
    const find = () => coll.find({ repos_owned: { $gte: lo, $lt: hi } }).sort({ _id: 1 });
    expect(readsIndexOn(JSON.stringify((await find().explain()).queryPlanner), 'by_repo', 'repos_owned')).toBe(true);
    // Any element may meet either bound: zeta/… meets $gte and acme/api/… meets $lt.
    const want = cards.filter(
      (c) => holds(c.repos_owned, (v) => (v as string) >= lo) && holds(c.repos_owned, (v) => (v as string) < hi),
    );
    expect(want.length).toBeGreaterThan(cards.filter((c) => c.repos_owned.some((r) => r.startsWith(lo))).length);
    expect(ids(await find().toArray())).toEqual(ids(want));
  });

  test('updates, deletes, an index dropped and made again, and a collection dropped and made again keep it right', async () => {
    await coll.updateOne({ _id: 'c0001' }, { $set: { skills: ['cobol'] } });
    await coll.updateOne({ _id: 'c0002' }, { $unset: { skills: '' } });
    await coll.insertOne({ _id: 'c9999', status: 'active', skills: ['cobol', 'go'], repos_owned: [] });
    await coll.deleteOne({ _id: 'c0003' });
    expect(ids(await coll.find({ skills: 'cobol' }).sort({ _id: 1 }).toArray())).toEqual(['c0001', 'c9999']);
    expect(await coll.countDocuments({ _id: { $in: ['c0001', 'c0002', 'c0003'] }, skills: 'ts' })).toBe(0);

    // A second index of the same field serves alone once the first is dropped.
    await coll.createIndex({ skills: -1 }, { name: 'skills_down' });
    await coll.dropIndex('by_skill');
    const cobol = coll.find({ skills: 'cobol' }).sort({ _id: 1 });
    expect(readsIndexOn(JSON.stringify((await cobol.explain()).queryPlanner), 'skills_down', 'skills')).toBe(true);
    expect(ids(await cobol.toArray())).toEqual(['c0001', 'c9999']);
    await coll.dropIndex('skills_down');
    expect(ids(await coll.find({ skills: 'cobol' }).sort({ _id: 1 }).toArray())).toEqual(['c0001', 'c9999']);
    await coll.createIndex({ skills: 1 }, { name: 'by_skill' });
    expect(ids(await coll.find({ skills: 'cobol' }).sort({ _id: 1 }).toArray())).toEqual(['c0001', 'c9999']);

    // A collection made again under the same name holds none of the old one's elements.
    await coll.drop();
    await coll.createIndex({ skills: 1 }, { name: 'by_skill' });
    await coll.insertMany([
      { _id: 'n1', status: 'active', skills: ['ada'], repos_owned: [] },
      { _id: 'n2', status: 'active', skills: ['go', 'ada'], repos_owned: [] },
    ]);
    expect(ids(await coll.find({ skills: 'go' }).toArray())).toEqual(['n2']);
    expect(ids(await coll.find({ skills: 'ada' }).sort({ _id: 1 }).toArray())).toEqual(['n1', 'n2']);
  });
});

test('a document of every BSON type the engine stores reads back as written, whole and projected', async () => {
  const [docs] = through('every_type');
  const doc = {
    _id: 'every',
    text: '<a href="x">&amp;</a>\n\t\r\\ / \u2028 é 日本 🎉 \u0001\b\f',
    doubles: [0.1, 1e300, 5e-324, 123456789, -2.5e-10, 2 ** 53],
    int32s: [new Int32(-(2 ** 31)), new Int32(2 ** 31 - 1)],
    longs: [Long.MIN_VALUE, Long.MAX_VALUE, Long.fromNumber(-1)],
    dates: [new Date(-1234567), new Date(Date.UTC(2026, 11, 5, 10, 0, 0, 123))],
    ts: new Timestamp({ t: 4294967295, i: 4294967295 }),
    bins: [new Binary(Buffer.from([0, 1, 2, 255, 254]), 0x80), new Binary(Buffer.alloc(0), 0)],
    re: new BSONRegExp('^a\\.b/c$', 'im'),
    oid: new ObjectId('0102030405060708090a0bff'),
    flags: [true, false, null],
    nested: { a: 'x', empty: {}, arr: [], deep: { l1: [{ l2: ['v', 1, { l3: null }] }] } },
    kéy: 'odd key',
  };
  await docs!.insertOne(doc as never);
  const raw = { promoteLongs: false, promoteValues: false, promoteBuffers: false } as const;
  expect(await docs!.findOne({ _id: 'every' } as never, raw)).toEqual(roundTrip(doc));
  expect(
    await docs!.findOne({ _id: 'every' } as never, { ...raw, projection: { text: 1, nested: 1, missing: 1 } }),
  ).toEqual(roundTrip({ _id: doc._id, text: doc.text, nested: doc.nested }));
});

// A find without a projection answers with the documents as the embedded engine read them (ferretdb-build.ts, the whole
// documents patch): `_id` first all the same, as a projection would put it, and every other field where it was written.
test('a find answers each document with `_id` first and its other fields in their written order, however it was inserted', async () => {
  const [docs] = through('field_order');
  await docs!.insertMany([
    { _id: 'a-first', b: 1, a: 2, nested: { z: 1, y: 2 } },
    { b: 1, _id: 'b-later', a: 2, nested: { z: 1, y: 2 } },
  ] as never[]);
  const keys = (doc: Document | null) => [
    Object.keys(doc ?? {}),
    Object.keys((doc?.nested as object | undefined) ?? {}),
  ];
  const all = await docs!.find({}).sort({ _id: 1 }).toArray();
  expect(all.map(keys)).toEqual([
    [
      ['_id', 'b', 'a', 'nested'],
      ['z', 'y'],
    ],
    [
      ['_id', 'b', 'a', 'nested'],
      ['z', 'y'],
    ],
  ]);
  expect(keys(await docs!.findOne({ _id: 'b-later' } as never))).toEqual([
    ['_id', 'b', 'a', 'nested'],
    ['z', 'y'],
  ]);
  expect(Object.keys((await docs!.findOne({ _id: 'b-later' } as never, { projection: { a: 1 } }))!)).toEqual([
    '_id',
    'a',
  ]);
});

// The embedded engine parses a stored document's schema (each field's type, an array's item by item) once per shape
// of document, not once per read (ferretdb-patches/sjson_schema_cache.go), and decodes fields in the schema's order as
// it meets them (sjson_decode.go): documents that differ only in a type, in the order of their keys or in an array's
// length, or whose keys hold a quote or a backslash, each read as written, together in one answer, through four
// connections at once, after a rewrite, and past the text the cache holds.
test('documents of many shapes, sharing field names but not types, order or lengths, read back as written, through many connections and rewrites', async () => {
  const collections = through('shapes');
  const shapes: Document[] = [
    { _id: 's-int', v: new Int32(1), w: 'x' },
    { _id: 's-str', v: 'one', w: 'x' },
    { _id: 's-double', v: 1.5, w: 'x' },
    { _id: 's-long', v: Long.fromNumber(2 ** 40), w: 'x' },
    { _id: 's-doc', v: { x: new Int32(1), y: 'y' }, w: 'x' },
    { _id: 's-doc-swapped', v: { y: 'y', x: new Int32(1) }, w: 'x' },
    { _id: 's-swapped', w: 'x', v: new Int32(1) },
    { _id: 's-array', v: [new Int32(1), 'a', null], w: 'x' },
    { _id: 's-array-other', v: ['a', new Int32(1), null], w: 'x' },
    { _id: 's-null', v: null, w: 'x' },
    { _id: 's-date', v: new Date(Date.UTC(2026, 11, 6)), w: ['x'] },
    // Keys with an escape in their stored text, at the top and nested, which the decoder finds by key instead of in order.
    { _id: 's-escaped', 'v"q\\b': new Int32(1), w: { 'x"\\y': 'z', n: new Int32(2) } },
  ];
  // Arrays from 1 to 400 items, ints and strings alternating: each its own schema, about 1.1 MB of schema text in all.
  const long = Array.from({ length: 400 }, (_, n) => ({
    _id: `long-${String(n).padStart(3, '0')}`,
    v: Array.from({ length: n + 1 }, (_, i) => (i % 2 ? `s${i}` : new Int32(i))),
  }));
  await collections[0]!.insertMany([...shapes, ...long] as never[]);
  const raw = { promoteLongs: false, promoteValues: false, promoteBuffers: false } as const;
  const expected = [...shapes, ...long]
    .map(roundTrip)
    .sort((a, b) => ((a as Document)._id < (b as Document)._id ? -1 : 1));

  // Twice over from each connection at once (the second read of every shape is the cache's), whole and projected.
  for (let round = 0; round < 2; round += 1) {
    const reads = await Promise.all(collections.map((c) => c.find({}, raw).sort({ _id: 1 }).toArray()));
    for (const read of reads) expect(read).toEqual(expected);
    for (const shape of shapes) {
      const one = await collections[round]!.findOne({ _id: shape._id } as never, { ...raw, projection: { v: 1 } });
      expect(one).toEqual(roundTrip({ _id: shape._id, v: shape.v }));
    }
  }

  // A document rewritten to another shape reads as its new shape; one rewritten to a shape read before, as that one.
  await collections[1]!.updateOne({ _id: 's-int' } as never, { $set: { v: 'now a string' } });
  await collections[2]!.updateOne({ _id: 's-str' } as never, { $set: { v: new Int32(7) } });
  expect(await collections[3]!.findOne({ _id: 's-int' } as never, raw)).toEqual(
    roundTrip({ _id: 's-int', v: 'now a string', w: 'x' }),
  );
  expect(await collections[0]!.findOne({ _id: 's-str' } as never, raw)).toEqual(
    roundTrip({ _id: 's-str', v: new Int32(7), w: 'x' }),
  );
});

/** `value` as the driver gives it back when it decodes exactly what it sent (the same BSON read without promotion). */
function roundTrip(value: object): unknown {
  return BSON.deserialize(BSON.serialize(value), { promoteLongs: false, promoteValues: false, promoteBuffers: false });
}

// The embedded engine's SQLite copies and compares with functions of ours (ferretdb-patches/libc_mem.go) and allocates
// from regions it keeps once emptied (ferretdb-build.ts, the allocator patch): what goes through them comes out as it went in.
test('strings order and match byte by byte through an index, and documents from empty to 300 KB read back exact through many rewrites', async () => {
  interface Keyed {
    _id: string;
    key: string;
    body: string;
    n: number;
  }
  const docs = clients[0]!.db(dbName).collection<Keyed>('bytes');
  await docs.createIndex({ key: 1 }, { name: 'by_key' });
  // Long keys that differ only after 6,000 equal bytes, and bytes above ASCII (é, 日本, 🎉 are 2, 3 and 4 in UTF-8).
  const long = 'p'.repeat(6_000);
  const keys = [
    '',
    'a',
    'ab',
    'b',
    'A',
    'z',
    '\u007f',
    'é',
    '日本',
    '🎉',
    long,
    `${long}a`,
    `${long}b`,
    `${long}é`,
    `${long}🎉`,
  ];
  const sizes = [0, 5_000, 40_000, 300_000];
  await docs.insertMany(keys.map((key, i) => ({ _id: `k${i}`, key, body: '', n: 0 })));

  // MongoDB's order of strings: their UTF-8 bytes, compared one by one.
  const byBytes = [...keys].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  expect(
    indexServed(
      await docs
        .find({ key: { $gte: '' } })
        .sort({ key: 1 })
        .explain(),
    ),
  ).toBe(true);
  expect(
    (
      await docs
        .find({ key: { $gte: '' } })
        .sort({ key: 1 })
        .toArray()
    ).map((d) => d.key),
  ).toEqual(byBytes);
  for (const key of keys) expect((await docs.find({ key }).toArray()).map((d) => d.key)).toEqual([key]);
  expect(
    (
      await docs
        .find({ key: { $gt: long } })
        .sort({ key: -1 })
        .toArray()
    ).map((d) => d.key),
  ).toEqual(byBytes.filter((key) => Buffer.compare(Buffer.from(key), Buffer.from(long)) > 0).reverse());

  // Each size of body rewritten ten times, each time with other bytes, and read back after each write.
  for (const [i, size] of sizes.entries()) {
    for (let round = 0; round < 10; round += 1) {
      const body = Array.from({ length: size }, (_, at) =>
        String.fromCharCode(33 + ((at * 7 + round * 13 + i) % 90)),
      ).join('');
      await docs.updateOne({ _id: `k${i}` }, { $set: { body }, $inc: { n: 1 } });
      const read = await docs.findOne({ _id: `k${i}` });
      expect(read?.n).toBe(round + 1);
      expect(read?.body.length).toBe(size);
      expect(read?.body === body).toBe(true);
    }
  }
});

describe('a find that returns a few fields of large documents', () => {
  interface Big {
    _id: string;
    to: string;
    status: string;
    n: number;
    created_at: Date;
    hidden?: boolean;
    meta?: { kind: string; nested: { deep: number[] } } | null;
    body: Array<{ text: string; at: Date }>;
  }
  const base = Date.UTC(2026, 0, 1);
  const docs: Big[] = Array.from({ length: 60 }, (_, i) => ({
    _id: `b${String(i).padStart(3, '0')}`,
    to: `u${i % 3}`,
    status: i % 2 ? 'open' : 'done',
    n: i,
    created_at: new Date(base + i * 1000),
    ...(i % 5 === 0 ? { hidden: true } : {}),
    ...(i % 4 === 0 ? { meta: i % 8 === 0 ? null : { kind: `k${i % 3}`, nested: { deep: [i, i + 1] } } } : {}),
    body: Array.from({ length: 20 }, (_, j) => ({
      text: `line ${j} of document ${i}: ${'x'.repeat(100)}`,
      at: new Date(base + j),
    })),
  }));
  let big: Collection<Big>;

  beforeAll(async () => {
    big = clients[0]!.db(dbName).collection<Big>('big');
    await big.createIndex({ to: 1, created_at: -1 }, { name: 'inbox' });
    await big.insertMany(docs);
  });

  /** What MongoDB answers: the documents of `keep`, newest first, with only `fields` (and `_id`) of each, absent ones absent. */
  const expected = (keep: (d: Big) => boolean, fields: Array<keyof Big>, limit: number) =>
    docs
      .filter(keep)
      .sort((a, b) => b.created_at.getTime() - a.created_at.getTime())
      .slice(0, limit)
      .map((d) =>
        Object.fromEntries(Object.entries(d).filter(([k]) => k === '_id' || fields.includes(k as keyof Big))),
      );

  test('it answers just those fields, filtered and sorted on fields it does not return (through $or, $ne and a dotted path)', async () => {
    const filter = {
      to: 'u1',
      $or: [{ status: 'open' }, { n: { $lt: 10 } }],
      hidden: { $ne: true },
      'meta.kind': { $ne: 'k2' },
    };
    const page = await big
      .find(filter as never, { projection: { n: 1, meta: 1 } })
      .sort({ created_at: -1 })
      .limit(7)
      .toArray();
    const keep = (d: Big) =>
      d.to === 'u1' && (d.status === 'open' || d.n < 10) && d.hidden !== true && d.meta?.kind !== 'k2';
    expect(page).toEqual(expected(keep, ['n', 'meta'], 7));
    // A null field is returned as null, an absent one left out.
    expect(
      await big
        .find({ _id: { $in: ['b007', 'b008'] } }, { projection: { meta: 1 } })
        .sort({ _id: 1 })
        .toArray(),
    ).toEqual([{ _id: 'b007' }, { _id: 'b008', meta: null }]);
  });

  test('an exclusion, `_id: 0` beside inclusions and `_id: 0` alone answer as MongoDB does', async () => {
    const excluded = await big
      .find({ to: 'u2' }, { projection: { body: 0, meta: 0 } })
      .sort({ created_at: -1 })
      .limit(2)
      .toArray();
    expect(excluded).toEqual(expected((d) => d.to === 'u2', ['to', 'status', 'n', 'created_at', 'hidden'], 2));
    const noId = await big
      .find({ to: 'u2' }, { projection: { _id: 0, n: 1 } })
      .sort({ created_at: -1 })
      .limit(2)
      .toArray();
    expect(noId).toEqual(expected((d) => d.to === 'u2', ['n'], 2).map(({ _id: _unused, ...rest }) => rest));
    const onlyNoId = await big
      .find({ to: 'u2' }, { projection: { _id: 0 } })
      .sort({ created_at: -1 })
      .limit(2)
      .toArray();
    expect(onlyNoId).toEqual(
      docs
        .filter((d) => d.to === 'u2')
        .reverse()
        .slice(0, 2)
        .map(({ _id: _unused, ...rest }) => rest),
    );
  });

  test('the engine does not decode whole documents for a find that returns a few fields (explain)', async () => {
    const explain = await big
      .find({ to: 'u1', hidden: { $ne: true } }, { projection: { n: 1, status: 1 } })
      .sort({ created_at: -1 })
      .limit(7)
      .explain();
    expect(decodesWholeDocuments(explain)).toBe(false);
  });
});

/**
 * Whether an explain says the find decodes whole documents before projecting them: FerretDB 1.x reports what it
 * pushes down (`filterPushdown`, …) and, with the embedded build's patch, `projectionPushdown`; a FerretDB 1.x that
 * reports pushdowns but not that one decodes whole documents. MongoDB and FerretDB 2 apply a projection in the scan.
 */
function decodesWholeDocuments(explain: Document): boolean {
  return explain.projectionPushdown === false || ('filterPushdown' in explain && !('projectionPushdown' in explain));
}

test('a limited find on a dotted path (which the embedded engine does not push down) still finds its document', async () => {
  const [docs] = through('dotted');
  await docs!.insertMany([{ _id: 'a', n: 1 }, { _id: 'b', n: 2, result: { id: 'x' } } as Counter]);
  expect((await docs!.findOne({ 'result.id': 'x' } as never))?._id).toBe('b');
  expect(
    (
      await docs!
        .find({ 'result.id': 'x' } as never)
        .sort({ _id: 1 })
        .limit(1)
        .toArray()
    ).map((d) => d._id),
  ).toEqual(['b']);
});

describe('a command of many statements', () => {
  // Its own database and client: a command the engine never answers holds that database's connections, not dbName's.
  const manyName = uniqueName('store_engine_many');
  /** What a command that never answers fails in: 50 times what this test's commands take on the 2-core box. */
  const ANSWER_MS = 10_000;
  let client: MongoClient;
  let docs: Collection<Counter>;

  beforeAll(async () => {
    client = await MongoClient.connect(testMongoUrl(), {
      serverSelectionTimeoutMS: ANSWER_MS,
      socketTimeoutMS: ANSWER_MS,
    });
    docs = client.db(manyName).collection<Counter>('many');
  });

  afterAll(async () => {
    await client.db(manyName).dropDatabase();
    await client.close();
  });

  /** The command's answer, or an error that says which command got none (instead of the driver's socket timeout). */
  async function answered<T>(what: string, command: Promise<T>): Promise<T> {
    try {
      return await command;
    } catch (err) {
      throw new Error(`${what}: no answer within ${ANSWER_MS / 1000} s (${(err as Error).message})`, { cause: err });
    }
  }

  test('one bulk write of 250 updates and 250 deletes (one update command and one delete command) completes, and the server answers afterwards', async () => {
    const ids = Array.from({ length: 500 }, (_, i) => `m${String(i).padStart(3, '0')}`);
    await docs.insertMany(ids.map((_id) => ({ _id, n: 0, version: 1 })));

    const result = await answered(
      'a bulkWrite of 250 updateOne then 250 deleteOne',
      docs.bulkWrite([
        ...ids.slice(0, 250).map((_id) => ({
          updateOne: { filter: { _id, version: 1 }, update: { $set: { version: 2 }, $inc: { n: 1 } } },
        })),
        ...ids.slice(250).map((_id) => ({ deleteOne: { filter: { _id, version: 1 } } })),
      ]),
    );
    expect([result.matchedCount, result.modifiedCount, result.deletedCount]).toEqual([250, 250, 250]);

    // Every kind of command still answers on the same database and collection: a read, a conditional write, a delete.
    const left = await answered('a find after the bulk write', docs.find({}).sort({ _id: 1 }).toArray());
    expect(left).toEqual(ids.slice(0, 250).map((_id) => ({ _id, n: 1, version: 2 })));
    expect(
      (
        await answered(
          'an updateOne after the bulk write',
          docs.updateOne({ _id: 'm000', version: 2 }, { $set: { version: 3 } }),
        )
      ).modifiedCount,
    ).toBe(1);
    expect((await answered('a deleteMany after the bulk write', docs.deleteMany({ version: 2 }))).deletedCount).toBe(
      249,
    );
  });
});

describe('index names and key fields are names, whatever they hold', () => {
  interface Odd {
    _id: string;
    n: number;
    [field: string]: unknown;
  }
  // A double quote ended the identifier on the embedded engine before its build 15 (which quotes them as SQL does):
  // an index on a field holding one failed, and a crafted name or field ran the rest as SQL.
  const quoted = 'a"b';
  const crafted = 'x\\") ; CREATE TABLE crafted (a) ; --';
  const fields = [quoted, crafted, 'back\\slash', "it's", 'tab\there'];

  test.each(fields)(
    'an index on %j is created under a name holding SQL, lists that name, serves its finds and drops',
    async (field) => {
      const docs = clients[0]!.db(dbName).collection<Odd>(uniqueName('odd'));
      await docs.insertMany(
        Array.from({ length: 40 }, (_, n) => ({ _id: `d${String(n).padStart(2, '0')}`, n, [field]: n % 4 })),
      );
      const name = `by "${field}" ON "odd" (n); --`;

      expect(await docs.createIndex({ [field]: 1, n: -1 }, { name })).toBe(name);
      expect((await docs.listIndexes().toArray()).map((index) => index.name)).toContain(name);
      const found = await docs
        .find({ [field]: 3 })
        .sort({ [field]: 1, n: -1 })
        .limit(5)
        .toArray();
      expect(found.map((doc) => doc.n)).toEqual([39, 35, 31, 27, 23]);
      expect(await docs.countDocuments({ [field]: { $in: [1, 2] } })).toBe(20);

      await docs.dropIndex(name);
      expect((await docs.listIndexes().toArray()).map((index) => index.name)).not.toContain(name);
      expect(await docs.countDocuments({})).toBe(40);
    },
  );
});
