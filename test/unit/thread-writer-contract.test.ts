// The thread-write port's contract on the in-memory fake the fast use-case tests run on.
import { threadWriterContract } from '../contracts/thread-writer-contract';
import { InMemoryThreads } from '../fakes/in-memory-threads';

threadWriterContract('in memory', () => {
  const threads = new InMemoryThreads();
  return { writer: threads, insert: (doc) => threads.insert(doc) };
});
