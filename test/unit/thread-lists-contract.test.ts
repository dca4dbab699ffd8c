// The list pages port's contract on the in-memory fake the fast tests of thread reads and lists use.
import { threadListsContract } from '../contracts/thread-lists-contract';
import { InMemoryThreadLists } from '../fakes/in-memory-thread-lists';
import { InMemoryThreads } from '../fakes/in-memory-threads';

const threads = new InMemoryThreads();
threadListsContract('in memory', () => ({
  lists: new InMemoryThreadLists(threads),
  insert: (doc) => threads.insert(doc),
}));
