// The push configs port's contract on the in-memory fake the fast test of push configs uses.
import { pushConfigRecordsContract } from '../contracts/push-config-records-contract';
import { InMemoryPushConfigs } from '../fakes/in-memory-push-configs';

pushConfigRecordsContract('in memory', () => new InMemoryPushConfigs());
