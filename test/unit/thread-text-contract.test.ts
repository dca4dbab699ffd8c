// The inbox search's contract on the in-memory fake (test/integration/ runs it on ThreadText and the real server).
import { threadTextContract } from '../contracts/thread-text-contract';
import { InMemoryThreads } from '../fakes/in-memory-threads';
import { InMemoryThreadText } from '../fakes/in-memory-thread-text';

threadTextContract('in memory', () => {
  const threads = new InMemoryThreads();
  return {
    text: new InMemoryThreadText(threads),
    insert: (doc) => threads.insert(doc),
    readdressThread: async (id, to) => void (await threads.writeThread(id, (doc) => ({ ...doc, to }))),
  };
});
