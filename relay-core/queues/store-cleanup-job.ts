// The `store-cleanup` job of the verify queue: a batch of `_id`s the store noted, added with a delay so it runs
// when they expire (see store/cleanup-ledger.ts). Redis keeps delayed jobs ordered by time: nothing runs until one is due.
import { randomUUID } from 'node:crypto';
import type { Job, Queue } from 'bullmq';
import { z } from 'zod';
import { CLEANUP_KINDS, KEEP_MS, type CleanupKind, type CleanupScheduler } from '../store/cleanup-ledger';
import type { MongoStore } from '../store/mongo-store';
import { parseJob } from './parse-job';

export const STORE_CLEANUP_JOB = 'store-cleanup';

const cleanupJobSchema = z.object({ kind: z.enum(CLEANUP_KINDS), ids: z.array(z.string().min(1).max(300)).max(10_000) });

/** Schedules clean-up batches on `queue` (the verify queue), one delayed job per batch. */
export function cleanupScheduler(queue: Queue): CleanupScheduler {
  const batch = `${randomUUID()}`;
  let n = 0;
  return {
    async schedule(kind, ids, dueAt) {
      n += 1;
      await queue.add(STORE_CLEANUP_JOB, { kind, ids }, {
        jobId: `cleanup.${batch}.${n}`,
        delay: Math.max(0, dueAt.getTime() - Date.now()),
        attempts: 5,
        backoff: { type: 'exponential', delay: 10_000 },
        removeOnComplete: true,
        removeOnFail: { age: 7 * 24 * 3600 },
      });
    },
  };
}

export function storeCleanupHandler(store: MongoStore): (job: Job) => Promise<{ deleted: number }> {
  return async function storeCleanup(job: Job) {
    const { kind, ids } = parseJob(cleanupJobSchema, job);
    return { deleted: await cleanUp(store, kind, ids, new Date()) };
  };
}

/**
 * Deletes the documents of `ids` that are still as old as their kind's keep time says (each is looked at by `_id`;
 * one written again since was noted again and waits for its own, later batch). Returns how many it deleted.
 */
export async function cleanUp(store: MongoStore, kind: CleanupKind, ids: readonly string[], now: Date): Promise<number> {
  const before = new Date(now.getTime() - KEEP_MS[kind]);
  let deleted = 0;
  for (const id of ids) {
    if (kind === 'idempotency') {
      const doc = await store.idempotency.findOne({ _id: id }, { projection: { created_at: 1 } });
      if (doc && doc.created_at <= before) deleted += (await store.idempotency.deleteOne({ _id: id })).deletedCount;
    } else {
      const doc = await store.threadReads.findOne({ _id: id }, { projection: { at: 1 } });
      if (doc && doc.at <= before) deleted += (await store.threadReads.deleteOne({ _id: id })).deletedCount;
    }
  }
  return deleted;
}
