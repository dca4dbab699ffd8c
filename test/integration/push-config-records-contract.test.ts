// The push configs port's contract on PushConfigStore and the server the tests use (the fast tier runs it on the fake).
import { pushConfigRecordsContract } from '../contracts/push-config-records-contract';
import { contractStore } from '../helpers/contract-store';

const store = contractStore('push_configs_contract');

pushConfigRecordsContract('PushConfigStore', () => store().pushConfigs);
