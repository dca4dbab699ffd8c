// The runs port's contract on RunStore and the server the tests use (the fast tier runs it on the fake).
import { MongoStore } from '../../relay-core/store/mongo-store';
import { runRecordsContract } from '../contracts/run-records-contract';
import { testMongoUrl, uniqueName } from '../helpers/test-env';

let store: MongoStore;

beforeAll(async () => {
  store = await MongoStore.connect(testMongoUrl(), uniqueName('run_records_contract'));
  await store.ensureIndexes();
});

afterAll(async () => {
  await store?.db.dropDatabase();
  await store?.close();
});

runRecordsContract('RunStore', () => store.runs);
