// BullMQ adapter: the delivery queues, the job data they carry, and the publisher that fills them.
import { Queue, Worker, type AdvancedOptions, type Job, type JobsOptions, type RateLimiterOptions } from 'bullmq';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis, type RedisOptions } from 'ioredis';
import { z } from 'zod';
import type { OutboxEvent } from '../domain/documents';
import type { EventJobState, EventPublisher, EventThread } from '../service/event-publisher';
import { EVENT_TYPES, surfaceSchema, type EventType } from '../domain/schemas';
import { RUN_STATUSES } from '../domain/run';
import { SLACK_FIRST_LANE, SLACK_LANES, SLACK_SYNC_LANE, slackLaneOf } from './slack-lanes';
import { jobKey } from '../store/outbox-ledger';

/** Slack delivery is two queues, its lanes (slack-lanes.ts); an event's outbox entry waits for its job under `slack`. */
export const QUEUE_NAMES = [SLACK_FIRST_LANE, SLACK_SYNC_LANE, 'webhooks', 'verify'] as const;
export type QueueName = (typeof QUEUE_NAMES)[number];

/** What every delivery job carries: the event, never a copy of the thread (processors read the current state). */
export const eventJobSchema = z.object({
  thread_id: z.uuid(),
  event_id: z.uuid(),
  type: z.enum(EVENT_TYPES),
  /** When the event was created (delivery latency is measured from here); absent on jobs queued before it was added. */
  at: z.iso.datetime().optional(),
  /** The thread's sender and recipient when the event was written; absent on jobs queued before they were added. */
  from: z.string().min(1).optional(),
  to: z.string().min(1).optional(),
  /** The rest of the outbox event (who, through what, which message), so the event logs need no thread read. */
  by: z.string().min(1).optional(),
  via: surfaceSchema.optional(),
  message_id: z.string().min(1).optional(),
  /** For run.* events: which run, and its status after the event. */
  run_id: z.string().min(1).optional(),
  run_status: z.enum(RUN_STATUSES).optional(),
  /** The database the event was written to (MongoStore.identity); absent on jobs queued before it was added. */
  db: z.string().min(1).optional(),
  /** The thread's version once the event was written (or a later one); absent on jobs queued before it was added. */
  version: z.number().int().min(1).optional(),
  /** Whether the task had A2A push configs when the event was published; absent on older jobs (they read them). */
  push: z.boolean().optional(),
  /** The event was in its participants' event logs before its job was added (or left to the outbox sweep to put
   * there); absent on older jobs, whose fan-out records it. */
  logged: z.literal(true).optional(),
});
export type EventJob = z.infer<typeof eventJobSchema>;

/** The outbox event an event job carries; null for a job queued before jobs carried it whole. */
export function outboxEventOf(job: EventJob): OutboxEvent | null {
  if (!job.by || !job.via || !job.at) return null;
  return outboxEventFrom(job.event_id, job.type, {
    at: job.at,
    by: job.by,
    via: job.via,
    message_id: job.message_id,
    run_id: job.run_id,
    run_status: job.run_status,
  });
}

/** An outbox event as a job carries it besides its id and type (webhooks/webhook-queues.ts: a delivery job's `event`). */
export const carriedEventSchema = z.object({
  at: z.iso.datetime(),
  by: z.string().min(1),
  via: surfaceSchema,
  message_id: z.string().min(1).optional(),
  run_id: z.string().min(1).optional(),
  run_status: z.enum(RUN_STATUSES).optional(),
});
export type CarriedEvent = z.infer<typeof carriedEventSchema>;

export function carriedEvent(event: OutboxEvent): CarriedEvent {
  return { at: event.at.toISOString(), by: event.by, via: event.via, ...optionalEventFields(event) };
}

export function outboxEventFrom(id: string, type: EventType, carried: CarriedEvent): OutboxEvent {
  return { id, type, at: new Date(carried.at), by: carried.by, via: carried.via, ...optionalEventFields(carried) };
}

/** The fields only some event types carry, left out when absent (so a job's data has no `undefined` in it). */
function optionalEventFields(
  event: Pick<OutboxEvent, 'message_id' | 'run_id' | 'run_status'>,
): Pick<OutboxEvent, 'message_id' | 'run_id' | 'run_status'> {
  return {
    ...(event.message_id ? { message_id: event.message_id } : {}),
    ...(event.run_id ? { run_id: event.run_id } : {}),
    ...(event.run_status ? { run_status: event.run_status } : {}),
  };
}

/** Options of every relay job: `attempts` tries spaced by `backoff`; kept a day once done, a week once failed. */
export function jobOptions(attempts: number, backoff: NonNullable<JobsOptions['backoff']>): JobsOptions {
  return {
    attempts,
    backoff,
    removeOnComplete: { age: 24 * 3600, count: 10_000 },
    removeOnFail: { age: 7 * 24 * 3600 },
  };
}

export const DELIVERY_JOB_OPTIONS = jobOptions(12, { type: 'exponential', delay: 500 });
export const VERIFY_JOB_OPTIONS = jobOptions(5, { type: 'exponential', delay: 500 });

export function redisConnection(url: string, role: 'producer' | 'worker'): Redis {
  const options: RedisOptions =
    role === 'worker'
      ? { maxRetriesPerRequest: null }
      : // A producer fails fast while Redis is down; the outbox sweep enqueues later.
        { maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 2_000 };
  return new Redis(url, options);
}

/**
 * Resolves once the connection is ready, or after `ms` (whichever comes first): a producer refuses commands until
 * it has connected, so work that starts with the process waits for it; a Redis still down is then the caller's to
 * retry, as at any other time.
 */
export async function readyOrAfter(connection: Redis, ms: number): Promise<void> {
  if (connection.status === 'ready') return;
  await once(connection, 'ready', { signal: AbortSignal.timeout(ms) }).catch(() => undefined);
}

/**
 * A queue a producer adds to. Its connection reconnects by itself and a failed add is the caller's to retry (the
 * outbox sweep, a job's own retry), so connection errors are not reported a second time as unhandled noise.
 */
function producerQueue(name: QueueName, connection: Redis, prefix: string): Queue {
  const queue = new Queue(name, { connection, prefix });
  queue.on('error', () => {});
  return queue;
}

export type ProducerQueues = Record<QueueName, Queue>;

/** One producer Queue per queue name, shared by everything in the process that adds jobs (and the admin board). */
export function producerQueues(connection: Redis, prefix: string): ProducerQueues {
  return Object.fromEntries(
    QUEUE_NAMES.map((name) => [name, producerQueue(name, connection, prefix)]),
  ) as ProducerQueues;
}

export async function closeQueues(queues: ProducerQueues): Promise<void> {
  await Promise.all(Object.values(queues).map((q) => q.close()));
}

/** The `verify` job that arms a thread's next timer after each of its events (queues/bullmq-timer-queue.ts). */
export const ARM_TIMERS_JOB = 'handoff-timer-arm';

/**
 * Events that change nothing a thread's next timer step depends on (its status, its timer record, when it was
 * created, accepted or last reminded: domain/timer-schedule.ts), so arming after them would only re-arm the same
 * step: a message (the append path's third of its background reads).
 */
const KEEPS_TIMERS: ReadonlySet<EventType> = new Set(['thread.message']);

export class BullmqEventPublisher implements EventPublisher {
  /** What an event's outbox entry waits for: `webhooks`, and `slack` (its job on one of the lanes). */
  readonly queues: readonly QueueName[];
  private readonly producers: ProducerQueues;
  private readonly timers: Queue | null;

  private readonly database: string;

  /** `database`: MongoStore.identity, stamped on every event job. */
  constructor(opts: { queues: ProducerQueues; slackEnabled: boolean; database: string; armTimers?: boolean }) {
    this.database = opts.database;
    this.producers = opts.queues;
    // Webhooks for the events someone hears of that way (a publish says which others to skip), Slack for every one.
    this.queues = opts.slackEnabled ? ['webhooks', SLACK_FIRST_LANE] : ['webhooks'];
    this.timers = opts.armTimers ? opts.queues.verify : null;
  }

  /** The queue an event's job of delivery `name` goes to: a Slack job to its lane (slack-lanes.ts). */
  private queueFor(name: QueueName, type: EventType): Queue {
    return this.producers[name === SLACK_FIRST_LANE ? slackLaneOf(type) : name];
  }

  /** `skip`: the jobs (`jobKey(queue, event id)`) not to add: nobody they would tell of the event. */
  async publish(thread: EventThread, events: readonly OutboxEvent[], skip?: ReadonlySet<string>): Promise<void> {
    const jobs: Promise<unknown>[] = [];
    for (const event of events) {
      const data: EventJob = {
        thread_id: thread._id,
        event_id: event.id,
        type: event.type,
        at: event.at.toISOString(),
        from: thread.from,
        to: thread.to,
        by: event.by,
        via: event.via,
        ...optionalEventFields(event),
        db: this.database,
        ...(thread.version !== undefined ? { version: thread.version } : {}),
        push: thread.push_configs === true,
        logged: true,
      };
      for (const name of this.queues) {
        if (skip?.has(jobKey(name, event.id))) continue;
        jobs.push(this.queueFor(name, event.type).add(event.type, data, { ...DELIVERY_JOB_OPTIONS, jobId: event.id }));
      }
      // A write arms the thread's next timer step itself when it can (service/handoff-timers.ts settle); else the
      // arm job does, off the request path (its id makes a re-enqueue once).
      const armed = thread.timer_version !== undefined && thread.timer_version === thread.version;
      if (this.timers && !armed && !KEEPS_TIMERS.has(event.type))
        jobs.push(this.timers.add(ARM_TIMERS_JOB, data, { ...VERIFY_JOB_OPTIONS, jobId: `arm.${event.id}` }));
    }
    await Promise.all(jobs);
  }

  /**
   * An unknown job is one Redis lost (or removed a day after it finished); a queue not published to has nothing to
   * wait for. A Slack job is looked for on both lanes: the entry does not say which, and an older relay put every
   * Slack job on `slack`.
   */
  async jobStates(eventId: string, queues: readonly string[]): Promise<EventJobState[]> {
    return Promise.all(
      queues.map(async (name) => {
        if (!this.queues.includes(name as QueueName)) return 'finished';
        const lanes = name === SLACK_FIRST_LANE ? SLACK_LANES : [name as QueueName];
        const states = await Promise.all(lanes.map((lane) => this.producers[lane].getJobState(eventId)));
        if (states.some((state) => state !== 'unknown' && state !== 'completed' && state !== 'failed')) return 'queued';
        return states.every((state) => state === 'unknown') ? 'missing' : 'finished';
      }),
    );
  }
}

/** The event a delivery job is of, when it is an event's own job (its id is the event's): its outbox entry waits for it. */
export function eventOfJob(job: Job): string | null {
  const eventId = (job.data as { event_id?: unknown } | undefined)?.event_id;
  return typeof eventId === 'string' && job.id === eventId ? eventId : null;
}

/** Port: named jobs on one queue (the `verify` queue), de-duplicated by their job id. */
export interface JobQueue {
  /** `delayMs`: the job waits in the delayed set that long first (a timer). */
  add(name: string, data: Record<string, unknown>, jobId: string, delayMs?: number): Promise<void>;
}

export class BullmqJobQueue implements JobQueue {
  constructor(
    private readonly queue: Queue,
    private readonly jobOptions: JobsOptions,
  ) {}

  async add(name: string, data: Record<string, unknown>, jobId: string, delayMs?: number): Promise<void> {
    await this.queue.add(name, data, { ...this.jobOptions, jobId, ...(delayMs ? { delay: delayMs } : {}) });
  }
}

export type JobProcessor = (job: Job) => Promise<unknown>;

export interface RunningWorker {
  worker: Worker;
  /** Waits for running jobs, then closes the worker and the connection it was given. */
  close(): Promise<void>;
}

/** Stalls (a dead worker, a missed lock renewal) a job survives before it fails. */
const MAX_STALLS = 3;

export function startWorker(opts: {
  name: QueueName;
  redisUrl: string;
  prefix: string;
  processor: JobProcessor;
  concurrency?: number;
  /** BullMQ lockDuration and stalledInterval: how soon a job whose worker died runs again elsewhere. */
  lockMs?: number;
  onFailed?: (job: Job | undefined, error: Error) => void;
  /** A job finished: done, or failed for good (no retry left). */
  onFinished?: (job: Job) => void;
  /** E.g. a custom backoffStrategy for the queue's jobs. */
  settings?: AdvancedOptions;
  /** BullMQ's rate limiter (the Slack lanes: slack-lanes.ts). */
  limiter?: RateLimiterOptions;
  /** The longest a rate-limited worker sleeps before it asks Redis again. */
  maximumRateLimitDelay?: number;
}): RunningWorker {
  const connection = redisConnection(opts.redisUrl, 'worker');
  const worker = new Worker(opts.name, opts.processor, {
    connection,
    prefix: opts.prefix,
    concurrency: opts.concurrency ?? 8,
    ...(opts.settings ? { settings: opts.settings } : {}),
    ...(opts.limiter ? { limiter: opts.limiter } : {}),
    ...(opts.maximumRateLimitDelay ? { maximumRateLimitDelay: opts.maximumRateLimitDelay } : {}),
    ...(opts.lockMs ? { lockDuration: opts.lockMs, stalledInterval: opts.lockMs } : {}),
    // BullMQ fails a job for good on its second stall. A worker that dies, then a busy one that misses a lock
    // renewal, would lose a delivery that way; every processor is safe to re-run, so allow a few.
    maxStalledCount: MAX_STALLS,
  });
  if (opts.onFailed) worker.on('failed', opts.onFailed);
  const { onFinished } = opts;
  if (onFinished) {
    worker.on('completed', (job) => onFinished(job));
    // A failed attempt with a retry to come is not finished: BullMQ sets finishedOn only on the last.
    worker.on('failed', (job) => job?.finishedOn && onFinished(job));
  }
  worker.on('error', () => {
    // Connection errors are retried by ioredis; 'error' must have a listener so they do not crash the process.
  });
  return {
    worker,
    async close() {
      await closeWorker(worker);
      // BullMQ leaves a connection it was handed open.
      connection.disconnect();
    },
  };
}

/** How long a closing worker waits for Redis to come back before it closes without waiting for its running jobs. */
const CLOSE_RECONNECT_WAIT_MS = 5_000;

/**
 * Whether a worker's blocking connection is waiting for Redis: not yet connected, or its ioredis client between two
 * reconnect attempts. Read through BullMQ's public API (getBackend().blockingConnection, its status and client).
 * BullMQ's graceful close disconnects that connection and waits for its 'end', which an ioredis client waiting
 * between two reconnect attempts never emits: closed then, the worker would never finish closing and the relay
 * would never exit (taskforcesh/bullmq#4656; seen in CI when a relay stopped just after a Redis restart).
 */
async function waitingForRedis(worker: Worker): Promise<boolean> {
  const connection = worker.getBackend().blockingConnection;
  if (!connection || connection.status === 'closing' || connection.status === 'closed') return false;
  if (connection.status === 'initializing') return true;
  return (await connection.client).status === 'reconnecting';
}

/**
 * Closes gracefully (running jobs finish first) once the blocking connection is not waiting for Redis. Still
 * without Redis after CLOSE_RECONNECT_WAIT_MS, it closes at once: a running job could not record its outcome
 * anyway, and it runs again once its lock lapses (every processor is safe to re-run).
 */
export async function closeWorker(worker: Worker): Promise<void> {
  const deadline = Date.now() + CLOSE_RECONNECT_WAIT_MS;
  while ((await waitingForRedis(worker)) && Date.now() < deadline) await sleep(50);
  await worker.close(await waitingForRedis(worker));
}
