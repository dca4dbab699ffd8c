// The read markers port's contract on the in-memory fake the fast tests of thread reads, lists and search use.
import { readMarksContract } from '../contracts/read-marks-contract';
import { InMemoryReadMarks } from '../fakes/in-memory-read-marks';
import { InMemoryThreads } from '../fakes/in-memory-threads';

readMarksContract('in memory', () => {
  const threads = new InMemoryThreads();
  return {
    marks: new InMemoryReadMarks(threads),
    insert: (doc) => threads.insert(doc),
    read: (id) => threads.readThread(id),
    write: async (id, change) => void (await threads.writeThread(id, change)),
  };
});
