// The due steps' contract on IndexedTimerDue (the threads' `due` index) and the server the tests use (the fast tier
// runs it on the fake).
import { MongoStore } from '../../relay-core/store/mongo-store';
import { timerDueFor } from '../../relay-core/store/timer-due';
import { timerDueContract } from '../contracts/timer-due-contract';
import { testMongoUrl, uniqueName } from '../helpers/test-env';

let store: MongoStore;

beforeAll(async () => {
  store = await MongoStore.connect(testMongoUrl(), uniqueName('timer_due_contract'));
  await store.ensureIndexes();
});

afterAll(async () => {
  await store?.db.dropDatabase();
  await store?.close();
});

timerDueContract('IndexedTimerDue', () => ({
  due: timerDueFor(store),
  insert: async (doc) => void (await store.threads.insertOne(doc)),
}));
