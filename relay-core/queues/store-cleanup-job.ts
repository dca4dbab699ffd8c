// The `store-cleanup` job of the verify queue: a batch of `_id`s the store noted, added with a delay so it runs
// when they expire (see store/cleanup-ledger.ts). Redis keeps delayed jobs ordered by time: nothing runs until one is due.
import { randomUUID } from 'node:crypto';
import type { Job, Queue } from 'bullmq';
import { z } from 'zod';
import { CLEANUP_KINDS, cleanUp, type CleanupScheduler } from '../store/cleanup-ledger';
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
