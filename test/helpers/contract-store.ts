// The store a contract suite's real-adapter run uses (test/integration/*-contract.test.ts): a database of its own on
// the server the tests use, indexed as the relay indexes it, dropped after the file.
import { MongoStore } from '../../relay-core/store/mongo-store';
import { testMongoUrl, uniqueName } from './test-env';

/** Registers the file's hooks; the store, once they have run. */
export function contractStore(name: string): () => MongoStore {
  let store: MongoStore | undefined;
  beforeAll(async () => {
    store = await MongoStore.connect(testMongoUrl(), uniqueName(name));
    await store.ensureIndexes();
  });
  afterAll(async () => {
    await store?.db.dropDatabase();
    await store?.close();
  });
  return () => {
    if (!store) throw new Error('the contract store is there only once its beforeAll has run');
    return store;
  };
}
