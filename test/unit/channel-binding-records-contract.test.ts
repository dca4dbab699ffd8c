// The channel bindings port's contract on the in-memory fake the fast test of channel bindings uses.
import { channelBindingRecordsContract } from '../contracts/channel-binding-records-contract';
import { InMemoryChannelBindings } from '../fakes/in-memory-channel-bindings';

channelBindingRecordsContract('in memory', async () => new InMemoryChannelBindings());
