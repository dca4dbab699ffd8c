// The thread-write port's contract on MongoStore and the server the tests use (the fast tier runs it on the fake).
import { MongoStore } from '../../relay-core/store/mongo-store';
import { threadWriterContract } from '../contracts/thread-writer-contract';
import { testMongoUrl, uniqueName } from '../helpers/test-env';

let store: MongoStore;

beforeAll(async () => {
  store = await MongoStore.connect(testMongoUrl(), uniqueName('thread_writer_contract'));
  await store.ensureIndexes();
});

afterAll(async () => {
  await store?.db.dropDatabase();
  await store?.close();
});

threadWriterContract('MongoStore', () => ({
  writer: store,
  insert: async (doc) => void (await store.threads.insertOne(doc)),
}));
