// BullMQ adapter of the timer port: delayed `verify` jobs (ids from thread + step + attempt) and the marker that tells a Redis that lost them.
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import { timerJobId, type TimerJob, type TimerQueue } from '../service/timer-queue';
import { ARM_TIMERS_JOB, VERIFY_JOB_OPTIONS } from './bullmq-queues';

/** Fires one timer step (service/handoff-timers.ts fire). */
export const TIMER_FIRE_JOB = 'handoff-timer';
/** Arms a thread's next step after one of its events (added by the event publisher, id `arm.<event id>`). */
export const TIMER_ARM_JOB = ARM_TIMERS_JOB;

export const timerJobSchema = z.object({
  thread_id: z.uuid(),
  step: z.string().regex(/^(remind-[1-9]\d{0,2}|escalate|stale|expire)$/) as unknown as z.ZodType<TimerJob['step']>,
  attempt: z.number().int().min(0),
});

export class BullmqTimerQueue implements TimerQueue {
  constructor(
    private readonly queue: Queue,
    private readonly redis: Redis,
    /** A key only this relay writes; Redis without it has lost (or never had) the delayed jobs. */
    private readonly markerKey: string,
  ) {}

  async arm(job: TimerJob, delayMs: number): Promise<void> {
    await this.queue.add(TIMER_FIRE_JOB, job, {
      ...VERIFY_JOB_OPTIONS,
      jobId: timerJobId(job),
      delay: Math.max(0, Math.round(delayMs)),
    });
  }

  async fireNow(job: TimerJob): Promise<'queued' | 'promoted' | 'waiting' | 'ran'> {
    const existing = await this.queue.getJob(timerJobId(job));
    if (!existing) {
      await this.arm(job, 0);
      return 'queued';
    }
    const state = await existing.getState();
    if (state === 'completed' || state === 'failed') return 'ran';
    if (state === 'delayed') {
      // It may have become due meanwhile; then it is already waiting, which is what promote would do.
      await existing.promote().catch(() => {});
      return 'promoted';
    }
    return 'waiting';
  }

  async lostJobs(): Promise<boolean> {
    return (await this.redis.exists(this.markerKey)) === 0;
  }

  async markArmed(): Promise<void> {
    await this.redis.set(this.markerKey, new Date().toISOString());
  }
}
