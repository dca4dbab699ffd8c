// The channel bindings port's contract on MongoChannelBindings and the server the tests use (the fast tier runs it on
// the fake).
import { MongoChannelBindings } from '../../relay-core/store/channel-binding-records';
import { MongoStore } from '../../relay-core/store/mongo-store';
import { channelBindingRecordsContract } from '../contracts/channel-binding-records-contract';
import { testMongoUrl, uniqueName } from '../helpers/test-env';

let store: MongoStore;

beforeAll(async () => {
  store = await MongoStore.connect(testMongoUrl(), uniqueName('channel_bindings_contract'));
  await store.ensureIndexes();
});

afterAll(async () => {
  await store?.db.dropDatabase();
  await store?.close();
});

channelBindingRecordsContract('MongoChannelBindings', async () => {
  await store.channelBindings.deleteMany({});
  return new MongoChannelBindings(store.channelBindings);
});
