// The list pages port's contract on IndexedThreadLists and the server the tests use (the fast tier runs it on the
// fake).
import { MongoStore } from '../../relay-core/store/mongo-store';
import { threadListsContract } from '../contracts/thread-lists-contract';
import { testMongoUrl, uniqueName } from '../helpers/test-env';

let store: MongoStore;

beforeAll(async () => {
  store = await MongoStore.connect(testMongoUrl(), uniqueName('thread_lists_contract'));
  await store.ensureIndexes();
});

afterAll(async () => {
  await store?.db.dropDatabase();
  await store?.close();
});

threadListsContract('IndexedThreadLists', () => ({
  lists: store.lists,
  insert: async (doc) => void (await store.threads.insertOne(doc)),
}));
