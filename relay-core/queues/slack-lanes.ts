// The `slack` queue's two lanes: first deliveries before DM syncs and redraws, and neither starving the other.
import type { Job, Queue, Worker } from 'bullmq';
import type { Logger } from 'pino';
import type { EventType } from '../domain/schemas';

// BullMQ takes a job from the wait list (jobs added without a priority, FIFO) before any job in the prioritized
// set (moveToActive-11.lua: RPOPLPUSH on wait, and only when it is empty ZPOPMIN on prioritized; adding a
// prioritized job is O(log n)). So:
//   - the first lane is the wait list: the events whose job posts someone's first DM of a handoff (the recipient's
//     and the sender's, a Claim card, the claimer's or new recipient's DM) or an approver's request;
//   - the sync lane is every other event (messages, accept/decline/complete, reminders, runs, votes …) at one
//     priority, FIFO among themselves, taken whenever no first delivery waits.
// Strict priority alone would let a steady stream of new handoffs hold redraws back for ever, so each worker moves
// the oldest sync job to the head of the wait list after every FIRST_PER_SYNC first deliveries it takes: under a
// saturating stream the sync lane still gets one job in FIRST_PER_SYNC + 1, and a new handoff waits behind at most
// that share of syncs. Job ids, attempts, backoff, stall recovery and the post ledger are the same in both lanes.

/** Events whose Slack job posts a first DM of a handoff (or an approval request), taken before everything else. */
export const FIRST_DELIVERY_EVENTS: ReadonlySet<string> = new Set<EventType>([
  'thread.created',
  'thread.awaiting_approval',
  'approval.requested',
  'thread.claimed',
  'thread.reassigned',
]);

/** The BullMQ priority of the sync lane (1 is the best a prioritized job has; 0 is the wait list). */
export const SYNC_PRIORITY = 1;

/** First deliveries a worker takes for each sync job it lets through while both lanes have work. */
export const FIRST_PER_SYNC = 4;

/** The `priority` job option of a Slack job for this event (undefined: the first lane, BullMQ's wait list). */
export function slackJobPriority(type: EventType): number | undefined {
  return FIRST_DELIVERY_EVENTS.has(type) ? undefined : SYNC_PRIORITY;
}

/**
 * Moves the oldest sync job to the head of the wait list: the next job a worker takes. It keeps priority 0 from
 * then on, so a retry of it (or a wait it asks for) comes back on the wait list, behind the first deliveries
 * queued by then. Null when no sync job waits. Two workers promoting at once only move jobs that were due anyway.
 */
export async function promoteOldestSync(queue: Queue): Promise<string | null> {
  const [oldest] = await queue.getPrioritized(0, 0);
  if (!oldest) return null;
  await oldest.changePriority({ priority: 0, lifo: true });
  return String(oldest.id);
}

/** Lets one sync job through after every FIRST_PER_SYNC first deliveries this worker takes (by job name: the event type). */
export function keepSyncLaneMoving(worker: Worker, queue: Queue, log: Logger): void {
  let firstTaken = 0;
  worker.on('active', (job: Job) => {
    if (!FIRST_DELIVERY_EVENTS.has(job.name)) return;
    firstTaken += 1;
    if (firstTaken % FIRST_PER_SYNC !== 0) return;
    promoteOldestSync(queue).then(
      (promoted) =>
        promoted &&
        log.debug({ queue: worker.name, job_id: promoted }, 'sync job let through between first deliveries'),
      (error: Error) =>
        log.warn(
          { queue: worker.name, err: error.message },
          'could not let a sync job through; a later first delivery does',
        ),
    );
  });
}
