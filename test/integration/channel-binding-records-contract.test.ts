// The channel bindings port's contract on MongoChannelBindings and the server the tests use (the fast tier runs it on
// the fake).
import { MongoChannelBindings } from '../../relay-core/store/channel-binding-records';
import { channelBindingRecordsContract } from '../contracts/channel-binding-records-contract';
import { contractStore } from '../helpers/contract-store';

const store = contractStore('channel_bindings_contract');

channelBindingRecordsContract('MongoChannelBindings', async () => {
  await store().channelBindings.deleteMany({});
  return new MongoChannelBindings(store().channelBindings);
});
