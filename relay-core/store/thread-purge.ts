// Deleting a thread for good: its search words (thread-text.ts), its messages and the thread (its read marks with it),
// each by its own index (`_id`, `thread_order`), so a purge costs the thread's size, not the store's.
import type { MongoStore } from './mongo-store';

/** Deletes the thread and everything kept for it; whether there was a thread. Search no longer finds it. */
export async function purgeThread(store: MongoStore, threadId: string): Promise<boolean> {
  if (!(await store.threads.findOne({ _id: threadId }, { projection: { _id: 1 } }))) return false;
  // The thread last: a purge stopped midway can be run again.
  await store.text.forget(threadId);
  await store.messages.deleteMany({ thread_id: threadId });
  return (await store.threads.deleteOne({ _id: threadId })).deletedCount === 1;
}
