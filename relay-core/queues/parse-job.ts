// Job data is parsed once, when a job is taken: malformed data can never succeed, so it stops the retries.
import { UnrecoverableError, type Job } from 'bullmq';
import type { z } from 'zod';

export function parseJob<T extends z.ZodType>(schema: T, job: Job): z.infer<T> {
  const parsed = schema.safeParse(job.data);
  if (!parsed.success)
    throw new UnrecoverableError(
      `${job.queueName} job ${job.id}: malformed ${job.name} data (${parsed.error.issues[0]?.message})`,
    );
  return parsed.data;
}
