// The web sign-in links and sessions port's contract on WebSessionStore and the server the tests use (the fast tier
// runs it on the fake).
import { webSessionRecordsContract } from '../contracts/web-session-records-contract';
import { contractStore } from '../helpers/contract-store';

const store = contractStore('web_sessions_contract');

webSessionRecordsContract('WebSessionStore', () => store().web);
