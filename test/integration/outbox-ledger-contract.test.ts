// The outbox ledger's contract on OutboxLedger and the server the tests use (the fast tier runs it on the fake).
import { MongoStore } from '../../relay-core/store/mongo-store';
import { outboxLedgerContract } from '../contracts/outbox-ledger-contract';
import { testMongoUrl, uniqueName } from '../helpers/test-env';

let store: MongoStore;

beforeAll(async () => {
  store = await MongoStore.connect(testMongoUrl(), uniqueName('outbox_ledger_contract'));
  await store.ensureIndexes();
});

afterAll(async () => {
  await store?.db.dropDatabase();
  await store?.close();
});

outboxLedgerContract('OutboxLedger', () => ({
  ledger: store.outbox,
  insert: async (doc) => void (await store.threads.insertOne(doc)),
  read: (id) => store.threads.findOne({ _id: id }),
}));
