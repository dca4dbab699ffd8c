// The inbox search's contract on ThreadText and the server the tests use, through its text index (the fast tier runs
// it on the fake).
import { threadTextContract } from '../contracts/thread-text-contract';
import { contractStore } from '../helpers/contract-store';

const store = contractStore('thread_text_contract');

threadTextContract('ThreadText', () => ({
  text: store().text,
  insert: async (doc) => void (await store().threads.insertOne(doc)),
  readdressThread: async (id, to) => void (await store().threads.updateOne({ _id: id }, { $set: { to } })),
}));
