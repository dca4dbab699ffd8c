// MailboxLog against the real server: the bulk append (the migration's and the bench's seeding path) and the
// one-by-one append of the relay share boxes; whatever order they run in, every thread gets a position of its own,
// and a process that knows nothing of the box finds its head and appends right after it.
import { MongoClient } from 'mongodb';
import type { MailboxEntryDoc, MailboxHeadDoc } from '../../relay-core/domain/documents';
import { InsertBatcher } from '../../relay-core/store/insert-batcher';
import { MailboxLog } from '../../relay-core/store/mailbox-log';
import { testMongoUrl, uniqueName } from '../helpers/test-env';

let client: MongoClient;

beforeAll(async () => {
  client = await MongoClient.connect(testMongoUrl());
});
afterAll(async () => {
  await client.close();
});

/** A process's view of one database's mailbox logs (each process remembers the heads it saw). */
function processOn(dbName: string) {
  const db = client.db(dbName);
  const entries = db.collection<MailboxEntryDoc>('mailbox_entries');
  return { log: new MailboxLog(entries, db.collection<MailboxHeadDoc>('mailbox_heads'), new InsertBatcher(entries, 1)), entries };
}

const items = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => ({ thread_id: `${prefix}-${i}`, created_at: new Date(1_700_000_000_000 + i) }));

test('a bulk append of more than one FerretDB insert chunk, racing appends of another process, gives each thread its own position', async () => {
  const dbName = uniqueName('mailbox');
  const bulk = processOn(dbName);
  const relay = processOn(dbName);
  const box = 'to:reader@acme';

  // The bulk writer learns the head (its own first batch), then another process appends behind its back.
  const firstBatch = await bulk.log.appendMany(box, items('seed', 10));
  expect(firstBatch).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
  const appended: number[] = [];
  for (let i = 0; i < 20; i += 1) appended.push(await relay.log.append(box, `live-${i}`, new Date()));
  expect(appended[0]).toBe(11);

  // 300 items: FerretDB inserts an ordered batch in chunks of 100 and goes on after a chunk's duplicate.
  const batch = items('bulk', 300);
  const positions = await bulk.log.appendMany(box, batch);
  expect(positions).toHaveLength(300);
  expect(new Set(positions).size).toBe(300);
  for (const p of positions) expect(appended).not.toContain(p);
  const stored = await bulk.log.at(box, positions);
  expect(stored.map((entry) => entry?.thread_id)).toEqual(batch.map((item) => item.thread_id));

  // A process that knows nothing of the box finds the head after the batch and appends right after it.
  const fresh = processOn(dbName);
  const last = positions[positions.length - 1]!;
  expect(await fresh.log.head(box)).toBe(last);
  expect(await fresh.log.append(box, 'after', new Date())).toBe(last + 1);
  // And so does the relay process, which remembered an older head (no hole below the head for it to fall into).
  expect(await relay.log.append(box, 'relay-after', new Date())).toBe(last + 2);
  expect(await bulk.entries.countDocuments({})).toBe(last + 2);
});
