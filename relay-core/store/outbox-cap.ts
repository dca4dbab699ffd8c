// The bound on a thread's `outbox` that every thread write applies (MongoStore.writeThread): the newest
// OUTBOX_KEPT events stay, and an older one only while one of its jobs is pending (outbox-ledger.ts).
import type { OutboxEvent, ThreadDoc } from '../domain/documents';
import { parseJobKey } from './outbox-ledger';

// Why an older event may go: the outbox sweep needs an event in its thread only while a job of it is pending (to put
// it on its queues again), and a delivery job carries the event it delivers. A pending job (Redis was down, a process
// died) keeps its event, so the array is bounded except during such an outage.

/** How many of a thread's newest events its document keeps. */
export const OUTBOX_KEPT = 32;

/** `doc` with its outbox cut to the newest OUTBOX_KEPT events and those older ones with a job pending. */
export function cappedOutbox(doc: ThreadDoc): ThreadDoc {
  const over = doc.outbox.length - OUTBOX_KEPT;
  if (over <= 0) return doc;
  const pending = new Set((doc.jobs_pending ?? []).map((key) => parseJobKey(key).eventId));
  const waiting: OutboxEvent[] = doc.outbox.slice(0, over).filter((event) => pending.has(event.id));
  if (waiting.length === over) return doc;
  return { ...doc, outbox: [...waiting, ...doc.outbox.slice(over)] };
}
