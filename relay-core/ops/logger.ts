// Structured logs (pino): one JSON line per event, secrets never included (keys are logged by id only).
import type { Job, Worker } from 'bullmq';
import pino, { type DestinationStream, type Logger } from 'pino';
import type { LogLevel } from './config';

// Lines about a request carry request_id (request-context.ts), lines about a thread carry thread_id.

/** Field names that hold secrets wherever they appear (one level deep); belt and braces: code logs ids, not secrets. */
const SECRET_FIELDS = [
  'api_key',
  'authorization',
  'token',
  'secret',
  'webhook_secret',
  'admin_key',
  'pepper',
  'password',
  'signing_secret',
];

/** destination: a file descriptor (1 stdout, 2 stderr), buffered; or a stream (tests capture lines this way). */
export function createLogger(level: LogLevel, destination: 1 | 2 | DestinationStream = 1): Logger {
  return pino(
    {
      level,
      base: { service: 'handoff-relay' },
      redact: { paths: SECRET_FIELDS.flatMap((f) => [f, `*.${f}`]), censor: '[redacted]' },
    },
    typeof destination === 'number' ? pino.destination({ fd: destination, sync: false }) : destination,
  );
}

/** A line per finished or stalled job, through a child logger carrying queue, job_id and thread_id. */
export function logWorkerEvents(worker: Worker, log: Logger): void {
  const jobLog = (job: Job) =>
    log.child({
      queue: worker.name,
      job_id: job.id,
      thread_id: (job.data as { thread_id?: unknown } | undefined)?.thread_id,
    });
  worker.on('completed', (job: Job, result: unknown) =>
    jobLog(job).debug({ event: job.name, result, attempts: job.attemptsMade }, 'job completed'),
  );
  worker.on('stalled', (jobId: string) =>
    log.warn({ queue: worker.name, job_id: jobId }, 'job stalled (its worker died or lost its lock); it runs again'),
  );
}
