// The push configs port's contract on PushConfigStore and the server the tests use (the fast tier runs it on the fake).
import { MongoStore } from '../../relay-core/store/mongo-store';
import { pushConfigRecordsContract } from '../contracts/push-config-records-contract';
import { testMongoUrl, uniqueName } from '../helpers/test-env';

let store: MongoStore;

beforeAll(async () => {
  store = await MongoStore.connect(testMongoUrl(), uniqueName('push_configs_contract'));
  await store.ensureIndexes();
});

afterAll(async () => {
  await store?.db.dropDatabase();
  await store?.close();
});

pushConfigRecordsContract('PushConfigStore', () => store.pushConfigs);
