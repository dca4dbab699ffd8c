// The list pages port's contract on IndexedThreadLists and the server the tests use (the fast tier runs it on the
// fake).
import { threadListsContract } from '../contracts/thread-lists-contract';
import { contractStore } from '../helpers/contract-store';

const store = contractStore('thread_lists_contract');

threadListsContract('IndexedThreadLists', () => ({
  lists: store().lists,
  insert: async (doc) => void (await store().threads.insertOne(doc)),
}));
