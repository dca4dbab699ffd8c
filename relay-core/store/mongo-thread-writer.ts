// The ThreadWriter port over MongoDB: thread writes go through MongoStore.writeThread's claim protocol.
import type { ThreadWriter } from '../domain/thread-writer';
import type { MongoStore } from './mongo-store';

export function mongoThreadWriter(store: MongoStore): ThreadWriter {
  return {
    writeThread: (id, change) => store.writeThread(id, change),
    readThread: (id) => store.threads.findOne({ _id: id }),
    async messagesBySequence(threadId, sequenceNos) {
      if (sequenceNos.length === 0) return [];
      return store.messages.find({ thread_id: threadId, sequence_no: { $in: sequenceNos } }).sort({ sequence_no: 1 }).toArray();
    },
  };
}
