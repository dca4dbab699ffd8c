// The `store-cleanup` job of the verify queue: what the store keeps for a while and then stops needing (idempotency
// records a day after they were made, web inbox sign-in links a day after they expired and sessions 30 days after)
// is deleted by one job every ten minutes, each kind by a range on its `age` index: what it reads is what has aged
// out, never the rest.
import type { Queue } from 'bullmq';
import type { Clock } from '../domain/clock';
import type { MongoStore } from '../store/mongo-store';

export const STORE_CLEANUP_JOB = 'store-cleanup';
const SCHEDULER_ID = 'store-cleanup';
const EVERY_MS = 10 * 60_000;
const DAY_MS = 24 * 3600 * 1000;

/** How long each kind is kept after it was (last) written. */
export const KEEP_MS = {
  // A retried call with the same key after this gets a fresh run rather than the recorded answer.
  idempotency: DAY_MS,
  // After it expired: a used or stale one-time sign-in link has nothing left to say.
  web_sign_ins: DAY_MS,
  // After it expired: the sessions page still lists a recently ended one.
  web_sessions: 30 * DAY_MS,
} as const;

/** Sets up the repeating job unless Redis holds it already (a Redis that came back empty lost it: the sweeps call this). */
export async function scheduleStoreCleanup(queue: Queue): Promise<void> {
  if (await queue.getJobScheduler(SCHEDULER_ID)) return;
  await queue.upsertJobScheduler(
    SCHEDULER_ID,
    { every: EVERY_MS },
    { name: STORE_CLEANUP_JOB, data: {}, opts: { removeOnComplete: true, removeOnFail: { age: DAY_MS / 1000 } } },
  );
}

export function storeCleanupHandler(
  store: MongoStore,
  clock: Clock,
): () => Promise<Record<keyof typeof KEEP_MS, number>> {
  return () => cleanUp(store, clock.now());
}

/** Deletes what is older than its kind's keep time at `now`; how many of each kind it deleted. */
export async function cleanUp(store: MongoStore, now: Date): Promise<Record<keyof typeof KEEP_MS, number>> {
  const before = (kind: keyof typeof KEEP_MS) => new Date(now.getTime() - KEEP_MS[kind]);
  const idempotency = await store.idempotency.deleteMany({ created_at: { $lte: before('idempotency') } });
  const signIns = await store.web.signIns.deleteMany({ expires_at: { $lte: before('web_sign_ins') } });
  const sessions = await store.web.sessions.deleteMany({ expires_at: { $lte: before('web_sessions') } });
  return {
    idempotency: idempotency.deletedCount,
    web_sign_ins: signIns.deletedCount,
    web_sessions: sessions.deletedCount,
  };
}
