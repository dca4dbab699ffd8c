// Port: the delayed jobs that fire a handoff's timer steps (adapter: queues/bullmq-timer-queue.ts).
import type { TimerStep } from '../domain/documents';

/** One armed step; its job id is derived from all three, so arming the same step twice is once. */
export interface TimerJob {
  thread_id: string;
  step: TimerStep;
  attempt: number;
}

export interface TimerQueue {
  /** Adds the job to run in `delayMs` (0: now); a job with the same id already there is left as it is. */
  arm(job: TimerJob, delayMs: number): Promise<void>;
  /** Makes the job run now: promoted when it waits delayed, added when the queue has no such job; `ran` when it already ran. */
  fireNow(job: TimerJob): Promise<'queued' | 'promoted' | 'waiting' | 'ran'>;
  /** True when the queue lost its jobs since `markArmed` (Redis restarted empty): every timer must be armed again. */
  lostJobs(): Promise<boolean>;
  markArmed(): Promise<void>;
}

/** `timer.<thread>.<step>.<attempt>` (BullMQ job ids may not contain ":"). */
export function timerJobId(job: TimerJob): string {
  return `timer.${job.thread_id}.${job.step}.${job.attempt}`;
}
