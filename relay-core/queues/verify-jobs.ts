// The `verify` queue's processor: dispatches each job on its name to the handler registered for it.
import { UnrecoverableError, type Job } from 'bullmq';

export type VerifyJobHandler = (job: Job) => Promise<unknown>;

/**
 * Handlers come from where their job kind lives (the endpoint challenge in webhooks/, the Slack Accept
 * verdict in bot/); the composition root registers them.
 */
export function createVerifyProcessor(handlers: Record<string, VerifyJobHandler>) {
  return async function processVerifyJob(job: Job): Promise<unknown> {
    const handler = Object.hasOwn(handlers, job.name) ? handlers[job.name] : undefined;
    if (!handler) throw new UnrecoverableError(`verify job ${job.id}: unknown kind "${job.name}"`);
    return handler(job);
  };
}
