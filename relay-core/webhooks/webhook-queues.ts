// BullMQ side of webhooks: delivery jobs on `webhooks`, challenge jobs on `verify`, and their retry schedule.
import type { BackoffStrategy, JobsOptions, Queue } from 'bullmq';
import { z } from 'zod';
import type { OutboxEvent, ThreadDoc } from '../domain/documents';
import { carriedEventSchema, jobOptions, outboxEventFrom } from '../queues/bullmq-queues';
import { EVENT_TYPES } from '../domain/schemas';

// Both follow the schedule through a custom backoff strategy named `webhook`.

export const WEBHOOK_BACKOFF = 'webhook';
export const DELIVER_JOB = 'deliver';
export const ENDPOINT_CHALLENGE_JOB = 'endpoint-challenge';

/** One event for one teammate's endpoint; `redrive` is 0 for the first run, n for the n-th re-drive. */
export const deliveryJobSchema = z.object({
  event_id: z.uuid(),
  thread_id: z.uuid(),
  type: z.enum(EVENT_TYPES),
  handle: z.string().min(3).max(128),
  redrive: z.number().int().min(0),
  /** An A2A push notification config of the task (webhooks/push-delivery.ts) instead of the teammate's card webhook. */
  push_config: z.string().min(1).max(64).optional(),
  /**
   * The event delivered, which the body is built from: a retry a day later needs no thread to still hold it (a
   * thread keeps only its newest events). Absent on jobs queued before it was added: those look it up in the thread.
   */
  event: carriedEventSchema.optional(),
  /** The thread's version once the event was written (its event job's): the thread as read for the body is that or later. */
  version: z.number().int().min(1).optional(),
});
export type DeliveryJob = z.infer<typeof deliveryJobSchema>;

/** The event a delivery job delivers: the one it carries, else (a job queued by an older relay) the thread's copy, if any. */
export function deliveredEvent(data: DeliveryJob, thread: Pick<ThreadDoc, 'outbox'>): OutboxEvent | null {
  if (data.event) return outboxEventFrom(data.event_id, data.type, data.event);
  return thread.outbox.find((e) => e.id === data.event_id) ?? null;
}

export const challengeJobSchema = z.object({
  handle: z.string().min(3).max(128),
  /** The endpoint version this challenge is for; a later URL change makes the job stale. */
  endpoint_updated_at: z.iso.datetime(),
});
export type ChallengeJob = z.infer<typeof challengeJobSchema>;

/** Delay before retry n (n = attempts made so far): the schedule's n-th entry, its last one repeated if asked beyond. */
export function webhookBackoffStrategy(scheduleMs: readonly number[]): BackoffStrategy {
  return (attemptsMade: number, type?: string) => {
    if (type !== WEBHOOK_BACKOFF) return 0;
    return scheduleMs[Math.min(Math.max(attemptsMade, 1), scheduleMs.length) - 1] ?? 0;
  };
}

export class WebhookQueues {
  readonly webhooks: Queue;
  readonly verify: Queue;
  private readonly jobOptions: JobsOptions;

  constructor(opts: { queues: { webhooks: Queue; verify: Queue }; retryScheduleMs: readonly number[] }) {
    this.webhooks = opts.queues.webhooks;
    this.verify = opts.queues.verify;
    this.jobOptions = jobOptions(opts.retryScheduleMs.length + 1, { type: WEBHOOK_BACKOFF });
  }

  /** The BullMQ job id of a delivery run (no ':' allowed there; the delivery id has none). */
  static deliveryJobId(deliveryId: string, redrive: number): string {
    return redrive === 0 ? deliveryId : `${deliveryId}.r${redrive}`;
  }

  async enqueueDelivery(deliveryId: string, data: DeliveryJob): Promise<void> {
    await this.webhooks.add(DELIVER_JOB, data, {
      ...this.jobOptions,
      jobId: WebhookQueues.deliveryJobId(deliveryId, data.redrive),
    });
  }

  /** One challenge job per endpoint version: enqueueing it twice runs it once. */
  async enqueueChallenge(handle: string, endpointUpdatedAt: Date): Promise<void> {
    const data: ChallengeJob = { handle, endpoint_updated_at: endpointUpdatedAt.toISOString() };
    await this.verify.add(ENDPOINT_CHALLENGE_JOB, data, {
      ...this.jobOptions,
      jobId: `challenge.${handle}.${endpointUpdatedAt.getTime()}`,
    });
  }

  /** Runs a held (delayed) delivery now, e.g. once its endpoint is verified. */
  async promote(jobId: string): Promise<boolean> {
    const job = await this.webhooks.getJob(jobId);
    if (!job || !(await job.isDelayed())) return false;
    await job.promote();
    return true;
  }
}
