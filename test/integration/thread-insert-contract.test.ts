// A create's thread insert, its contract on MongoStore and the server the tests use (the fast tier runs it on the fake).
import { threadInsertContract } from '../contracts/thread-insert-contract';
import { contractStore } from '../helpers/contract-store';

const store = contractStore('thread_insert_contract');

threadInsertContract('MongoStore', () => ({
  store: store(),
  insertMessage: async (message) => void (await store().messages.insertOne(message)),
}));
