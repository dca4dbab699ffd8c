// The timer jobs on the `verify` queue: arm a thread's next step after an event, and fire a step when its delay is up.
import type { Job } from 'bullmq';
import type { HandoffTimers } from '../service/handoff-timers';
import { eventJobSchema } from './bullmq-queues';
import { TIMER_ARM_JOB, TIMER_FIRE_JOB, timerJobSchema } from './bullmq-timer-queue';
import { parseJob } from './parse-job';

export function timerJobHandlers(timers: HandoffTimers): Record<string, (job: Job) => Promise<unknown>> {
  return {
    [TIMER_ARM_JOB]: async (job) => {
      const event = parseJob(eventJobSchema, job);
      const armed = await timers.arm(event.thread_id, { version: event.version });
      return armed ? { step: armed.step, due_at: armed.due_at.toISOString(), attempt: armed.attempt } : { step: null };
    },
    [TIMER_FIRE_JOB]: async (job) => timers.fire(parseJob(timerJobSchema, job)),
  };
}
