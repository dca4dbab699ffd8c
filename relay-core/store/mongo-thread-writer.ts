// The ThreadWriter port over MongoDB: thread reads and writes go through MongoStore's versioned write (thread-writes.ts).
import type { ThreadWriter } from '../domain/thread-writer';
import type { MongoStore } from './mongo-store';

export function mongoThreadWriter(store: MongoStore): ThreadWriter {
  return {
    writeThread: (id, change, from) => store.writeThread(id, change, from),
    readThread: (id) => store.readThread(id),
    readThreadFrom: (id, version) => store.readThreadFrom(id, version),
    messagesBySequence: (thread, sequenceNos) => store.messagesOf(thread, sequenceNos),
  };
}
