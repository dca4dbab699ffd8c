// Deleting a thread for good: its search words (thread-terms.ts), its messages, its participants' read marks and the
// thread, each by its own index (`_id` lists, `thread_order`), so a purge costs the thread's size, not the store's.
import type { MongoStore } from './mongo-store';
import { ThreadTerms } from './thread-terms';

/** Deletes the thread and everything kept for it; whether there was a thread. Search no longer finds it. */
export async function purgeThread(store: MongoStore, threadId: string): Promise<boolean> {
  const doc = await store.threads.findOne({ _id: threadId });
  if (!doc) return false;
  // The words first (worked out from the messages): a purge stopped midway can be run again.
  await store.terms.forget(doc);
  await store.messages.deleteMany({ thread_id: threadId });
  const readers = [...ThreadTerms.everyone(doc), ...(doc.candidates ?? [])];
  await store.threadReads.deleteMany({ _id: { $in: readers.map((handle) => `${threadId}:${handle}`) } });
  return (await store.threads.deleteOne({ _id: threadId })).deletedCount === 1;
}
