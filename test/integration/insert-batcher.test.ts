// InsertBatcher against the real server: concurrent inserts share commands, and each caller still gets exactly
// what insertOne would have given it (a duplicate `_id` is that caller's 11000, nobody else's).
import { MongoClient, type CommandStartedEvent } from 'mongodb';
import { InsertBatcher } from '../../relay-core/store/insert-batcher';
import { isDuplicateKey } from '../../relay-core/store/thread-writes';
import { testMongoUrl, uniqueName } from '../helpers/test-env';

interface Doc {
  _id: string;
  n: number;
}

describe('InsertBatcher on the MongoDB-compatible server', () => {
  let client: MongoClient;
  const inserts: CommandStartedEvent[] = [];

  beforeAll(async () => {
    client = await MongoClient.connect(testMongoUrl(), { monitorCommands: true });
    client.on('commandStarted', (event) => {
      if (event.commandName === 'insert') inserts.push(event);
    });
  });
  afterAll(async () => {
    await client.close();
  });
  beforeEach(() => {
    inserts.length = 0;
  });

  const collection = () => client.db(uniqueName('batcher')).collection<Doc>('docs');

  it('sends fifty concurrent inserts in far fewer commands, and every document is stored once', async () => {
    const docs = collection();
    const batcher = new InsertBatcher(docs, 1);
    await Promise.all(Array.from({ length: 50 }, (_, n) => batcher.insert({ _id: `d${n}`, n })));
    expect(await docs.countDocuments({})).toBe(50);
    expect(inserts.length).toBeLessThanOrEqual(3);
    expect(inserts.length).toBeGreaterThanOrEqual(1);
  });

  it('gives a duplicate _id to its own caller as code 11000 and inserts the rest of the batch', async () => {
    const docs = collection();
    await docs.insertOne({ _id: 'taken', n: 0 });
    inserts.length = 0;
    const batcher = new InsertBatcher(docs, 1);
    const results = await Promise.allSettled([
      batcher.insert({ _id: 'a', n: 1 }),
      batcher.insert({ _id: 'taken', n: 2 }),
      batcher.insert({ _id: 'b', n: 3 }),
      batcher.insert({ _id: 'a', n: 4 }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'rejected']);
    for (const r of results) if (r.status === 'rejected') expect(isDuplicateKey(r.reason)).toBe(true);
    expect((await docs.find({}).sort({ _id: 1 }).toArray()).map((d) => [d._id, d.n])).toEqual([
      ['a', 1],
      ['b', 3],
      ['taken', 0],
    ]);
    expect(inserts).toHaveLength(1);
  });

  it('a lone insert is a plain insertOne, and its duplicate is the same 11000', async () => {
    const docs = collection();
    const batcher = new InsertBatcher(docs, 1);
    await batcher.insert({ _id: 'x', n: 1 });
    await expect(batcher.insert({ _id: 'x', n: 2 })).rejects.toMatchObject({ code: 11000 });
    expect(inserts.map((e) => (e.command.documents as unknown[]).length)).toEqual([1, 1]);
    expect((await docs.findOne({ _id: 'x' }))?.n).toBe(1);
  });

  it('keeps at most maxInFlight commands in flight and sends what arrived meanwhile as the next batch', async () => {
    const docs = collection();
    const batcher = new InsertBatcher(docs, 1);
    const first = batcher.insert({ _id: 'first', n: 0 });
    await new Promise((resolve) => setImmediate(resolve));
    // The first command is on its way: these wait for it and go together.
    const rest = Array.from({ length: 10 }, (_, n) => batcher.insert({ _id: `later${n}`, n }));
    await Promise.all([first, ...rest]);
    expect(inserts.map((e) => (e.command.documents as unknown[]).length)).toEqual([1, 10]);
  });

  it('a failure of the whole command (the server gone) fails every caller in the batch', async () => {
    const gone = await MongoClient.connect(testMongoUrl());
    const batcher = new InsertBatcher(gone.db(uniqueName('batcher')).collection<Doc>('docs'), 1);
    await gone.close();
    const results = await Promise.allSettled([batcher.insert({ _id: 'p', n: 1 }), batcher.insert({ _id: 'q', n: 2 })]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
  });
});
