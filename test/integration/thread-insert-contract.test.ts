// A create's thread insert, its contract on MongoStore and the server the tests use (the fast tier runs it on the fake).
import { MongoStore } from '../../relay-core/store/mongo-store';
import { threadInsertContract } from '../contracts/thread-insert-contract';
import { testMongoUrl, uniqueName } from '../helpers/test-env';

let store: MongoStore;

beforeAll(async () => {
  store = await MongoStore.connect(testMongoUrl(), uniqueName('thread_insert_contract'));
  await store.ensureIndexes();
});

afterAll(async () => {
  await store?.db.dropDatabase();
  await store?.close();
});

threadInsertContract('MongoStore', () => ({
  store,
  insertMessage: async (message) => void (await store.messages.insertOne(message)),
}));
