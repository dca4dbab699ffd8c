// A database whose indexes an earlier version made is brought to this version's by the start's ensureIndexes: an
// index of the same name with other keys is built again, one renamed is replaced, and a second run changes nothing.
import { MongoStore } from '../../relay-core/store/mongo-store';
import { WebhookDeliveries } from '../../relay-core/webhooks/deliveries';
import { testMongoUrl, uniqueName } from '../helpers/test-env';

let store: MongoStore;

beforeAll(async () => {
  store = await MongoStore.connect(testMongoUrl(), uniqueName('store_indexes'));
});

afterAll(async () => {
  await store?.db.dropDatabase();
  await store?.close();
});

async function keysOf(collection: string): Promise<Record<string, unknown>> {
  const indexes = await store.db.collection(collection).listIndexes().toArray();
  return Object.fromEntries(indexes.filter((i) => i.name !== '_id_').map((i) => [i.name, i.key]));
}

test("a database with the previous version's indexes starts: lists' indexes gain _id, the account log's is renamed, twice", async () => {
  // As d42416b made them.
  const previous: Array<[string, Record<string, 1 | -1>, string]> = [
    ['threads', { to: 1, created_at: -1, status: 1, intent: 1, from: 1 }, 'inbox'],
    ['threads', { from: 1, created_at: -1, status: 1, intent: 1, to: 1 }, 'sent'],
    ['threads', { claimable: 1, created_at: -1 }, 'claimable'],
    ['account_log', { handle: 1, _id: 1 }, 'by_handle'],
    ['thread_text', { to: 1, created_at: -1 }, 'received'],
    ['webhook_deliveries', { status: 1, updated_at: -1 }, 'status_time'],
  ];
  for (const [collection, key, name] of previous) await store.db.collection(collection).createIndex(key, { name });
  await store.db
    .collection('account_log')
    .insertOne({ _id: 'bob@acme|2026-12-01T00:00:00.000Z|1', handle: 'bob@acme' } as never);

  for (let run = 0; run < 2; run++) {
    await store.ensureIndexes();
    await new WebhookDeliveries(store).ensureIndexes();
  }

  expect(await keysOf('threads')).toMatchObject({
    inbox: { to: 1, created_at: -1, _id: -1, status: 1, intent: 1, from: 1 },
    sent: { from: 1, created_at: -1, _id: -1, status: 1, intent: 1, to: 1 },
    claimable: { claimable: 1, created_at: -1, _id: -1 },
  });
  expect(await keysOf('account_log')).toEqual({ by_handle_id: { handle: 1, _id: 1 } });
  expect(await keysOf('thread_text')).toMatchObject({ received: { to: 1, created_at: -1, _id: -1 } });
  expect(await keysOf('webhook_deliveries')).toMatchObject({ status_time: { status: 1, updated_at: -1, _id: 1 } });
  expect(await store.accountLog.newest('bob@acme', null, 5)).toHaveLength(1);
});
