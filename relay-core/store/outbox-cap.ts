// The bound on a thread's `outbox` that every thread write applies (MongoStore.writeThread): the newest
// OUTBOX_KEPT events stay, and an older one only while its outbox entry exists.
import type { OutboxEvent, ThreadDoc } from '../domain/documents';

// Why an older event may go: the outbox sweep needs an event in its thread only while the event's entry waits
// (proof that its write happened), and a delivery job carries the event it delivers. An entry that still exists
// (Redis was down, a process died) keeps its event, so the array is bounded except during such an outage.

/** How many of a thread's newest events its document keeps. */
export const OUTBOX_KEPT = 32;

/** Up to this many entries a write reads one by one (`_id`) to learn which events it may drop; more in one read. */
export const TRIM_READS = 8;

/** The ids a write of `current` may drop, oldest first: all but the newest OUTBOX_KEPT - 1 (the write adds one, usually). */
export function dropCandidates(current: ThreadDoc): string[] {
  return current.outbox.slice(0, Math.max(0, current.outbox.length - (OUTBOX_KEPT - 1))).map((event) => event.id);
}

/** `doc` with its outbox cut to the newest OUTBOX_KEPT events and those older ones that are not `settled`. */
export function cappedOutbox(doc: ThreadDoc, settled: ReadonlySet<string>): ThreadDoc {
  const over = doc.outbox.length - OUTBOX_KEPT;
  if (over <= 0) return doc;
  const waiting: OutboxEvent[] = doc.outbox.slice(0, over).filter((event) => !settled.has(event.id));
  if (waiting.length === over) return doc;
  return { ...doc, outbox: [...waiting, ...doc.outbox.slice(over)] };
}
