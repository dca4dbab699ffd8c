// The `verify` queue's processor: dispatches each job on its name to the handler registered for it.
import { UnrecoverableError, type Job } from 'bullmq';

export type VerifyJobHandler = (job: Job) => Promise<unknown>;

export interface VerifyProcessorOptions {
  /**
   * Kinds this process does not run but processes with Slack do (the Slack Accept's verdict, the App Home's refresh),
   * and where to hand such a job: a worker without the Slack settings beside a bot that has them would otherwise fail
   * the click's job as an unknown kind. Handing over twice (a job run again) adds it once: it keeps its id.
   */
  handOff?: { kinds: ReadonlySet<string>; to: (job: Job) => Promise<void> };
}

/**
 * Handlers come from where their job kind lives (the endpoint challenge in webhooks/, the Slack Accept
 * verdict in bot/); the composition root registers them.
 */
export function createVerifyProcessor(handlers: Record<string, VerifyJobHandler>, opts: VerifyProcessorOptions = {}) {
  return async function processVerifyJob(job: Job): Promise<unknown> {
    const handler = Object.hasOwn(handlers, job.name) ? handlers[job.name] : undefined;
    if (handler) return handler(job);
    if (opts.handOff?.kinds.has(job.name)) {
      await opts.handOff.to(job);
      return { handed_off: true };
    }
    throw new UnrecoverableError(`verify job ${job.id}: unknown kind "${job.name}"`);
  };
}
