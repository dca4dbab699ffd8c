// A create's thread insert, its contract on the in-memory fake the fast test of creates uses.
import { threadInsertContract } from '../contracts/thread-insert-contract';
import { InMemoryThreads } from '../fakes/in-memory-threads';

threadInsertContract('in memory', () => {
  const threads = new InMemoryThreads();
  return { store: threads, insertMessage: (message) => threads.insertMessage(message) };
});
