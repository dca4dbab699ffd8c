// What the store's one design needs from its database engine, checked on the server the tests use (the embedded
// FerretDB build, or whatever MONGODB_URL points to): conditional updates that are atomic across connections, and
// an `_id` lookup served by the `_id` index when the filter also holds other conditions. Each of these failed on a
// stock FerretDB 1.24 (scripts/local-services/ferretdb-patches/ holds what makes the embedded one pass).
import { MongoClient, type Collection, type Document } from 'mongodb';
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
    Array.from({ length: 50 }, () => docs.findOneAndUpdate({ _id: 'c' }, { $inc: { n: 1 } }, { returnDocument: 'after' })),
  );
  const counts = (await Promise.all(calls)).map((doc) => doc!.n);
  expect(new Set(counts).size).toBe(200);
  expect((await first!.findOne({ _id: 'c' }))!.n).toBe(200);
});

test.each([
  ['findOneAndReplace', (docs: Collection<Counter>) => docs.findOneAndReplace({ _id: 'v', version: 1 }, { n: 1, version: 2 }).then(Boolean)],
  ['updateOne', (docs: Collection<Counter>) => docs.updateOne({ _id: 'v', version: 1 }, { $set: { version: 2 } }).then((r) => r.modifiedCount === 1)],
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
