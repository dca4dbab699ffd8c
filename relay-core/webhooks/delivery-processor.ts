// The `webhooks` queue's processor: an event job fans out to one `deliver` job per endpoint, which POSTs it.
import { UnrecoverableError, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { carriedEvent, eventJobSchema, outboxEventOf } from '../queues/bullmq-queues';
import type { EventThread } from '../service/event-publisher';
import { parseJob } from '../queues/parse-job';
import { signingSecrets, type OutboxEvent, type WebhookDeliveryDoc } from '../domain/documents';
import type { MongoStore } from '../store/mongo-store';
import type { Relay } from '../service/relay-service';
import type { IndexedEvent } from '../service/thread-search-index';
import type { TargetPolicy } from './ssrf-guard';
import { systemClock, type Clock } from '../domain/clock';
import { deliveryId, pushDeliveryId, type WebhookDeliveries } from './deliveries';
import { openAttempt } from './delivery-attempt';
import { pushDelivery } from './push-delivery';
import type { WebhookEndpoints } from './endpoint-lifecycle';
import type { EndpointOwners } from './endpoint-owners';
import { eventAudience, needsWholeThread, type AudienceThread } from './event-audience';
import { DELIVER_JOB, deliveredEvent, deliveryJobSchema, WebhookQueues } from './webhook-queues';

// An event job (named for its event type, id = event id) fans out to one `deliver` job per participant with an
// endpoint; a deliver job signs and POSTs the event, records the attempt, and fails (to be retried on the
// schedule) until a 2xx, a 410, or the last attempt (dead letter).

/** Where every event also goes once it is taken from its queue (the per-teammate event logs). */
export interface EventRecorder {
  record(thread: EventThread, events: readonly OutboxEvent[]): Promise<void>;
}

export interface WebhookDeliveryDeps {
  reads: Relay['reads'];
  /** This relay's database (MongoStore.identity): an event job stamped with another one is left alone. */
  database?: string;
  /** The event logs GET /events reads; recorded before the fan-out, so a failed write retries the job. */
  feed?: EventRecorder;
  /** The web inbox's text search (service/thread-search-index.ts): an older relay's job's words, as its event logs. */
  search?: { index(event: IndexedEvent): Promise<void> };
  store: MongoStore;
  /** Who of an event's participants has an endpoint (endpoint-owners.ts); the store's lookup by default. */
  owners?: Pick<EndpointOwners, 'withEndpoint'>;
  endpoints: Pick<WebhookEndpoints, 'markGone'>;
  deliveries: WebhookDeliveries;
  queues: WebhookQueues;
  policy: TargetPolicy;
  log: Logger;
  clock?: Clock;
  timeoutMs?: number;
}

export type WebhookOutcome = 'fanned_out' | 'delivered' | 'gone' | 'skipped';

/** Outcome of one attempt the processor records before the job's own success or failure. */

export function createWebhookProcessor(deps: WebhookDeliveryDeps) {
  const { reads, store, deliveries, queues, log } = deps;
  const clock = deps.clock ?? systemClock;
  const foreign = new Set<string>();
  const withEndpoint = (handles: string[]) =>
    deps.owners ? deps.owners.withEndpoint(handles) : store.withWebhookEndpoint(handles);

  /** Who of the event's audience (event-audience.ts) has an endpoint gets a delivery; a task's push configs each get one. */
  async function fanOut(job: Job): Promise<WebhookOutcome> {
    const taken = parseJob(eventJobSchema, job);
    const {
      from,
      to,
      by: _by,
      via: _via,
      message_id: _message,
      run_id: _run,
      run_status: _runStatus,
      db,
      push,
      logged,
      ...event
    } = taken;
    // Written to another database (Redis kept it across a new `.data`, or two relays share a queue prefix): none of
    // its threads are here, and recording it would show this database's teammates events that never happened.
    if (db && deps.database && db !== deps.database) {
      if (!foreign.has(db)) {
        foreign.add(db);
        log.warn(
          { job_id: job.id, database: db },
          'skipping event jobs written to another database under this queue prefix (set RELAY_QUEUE_PREFIX to give each database its own)',
        );
      }
      return 'skipped';
    }
    // The job carries the participants and the whole event, so finding who has an endpoint (endpoint-owners.ts)
    // needs no thread or card reads, but for the events whose audience depends on more of the thread.
    let thread: AudienceThread & { _id: string } = { _id: event.thread_id, from: from ?? '', to: to ?? '' };
    let recorded = outboxEventOf(taken);
    if (!from || !to || !recorded || needsWholeThread(event.type, to)) {
      const doc = await store.threads.findOne(
        { _id: event.thread_id },
        { projection: { from: 1, to: 1, outbox: 1, candidates: 1, hidden_from_recipient: 1, approvals: 1 } },
      );
      if (!doc) return 'skipped';
      thread = doc;
      // A job queued by an older relay carries only the event's id: the thread still holds it unless trimmed since.
      recorded ??= doc.outbox.find((e) => e.id === event.event_id) ?? null;
    }
    // The publisher wrote the event into the event logs and the search before adding this job (`logged`); an older
    // relay's job leaves both to the fan-out.
    if (!logged) {
      if (recorded) await deps.feed?.record(thread, [recorded]);
      await deps.search?.index({
        type: event.type,
        thread_id: event.thread_id,
        message_id: taken.message_id,
        version: taken.version,
      });
    }
    // Each delivery carries the event, so its retries (over a day and more) build the body without the thread's copy.
    const carried = recorded ? { event: carriedEvent(recorded) } : {};
    await Promise.all(
      (await withEndpoint(eventAudience(thread, event.type))).map(async (handle) => {
        await deliveries.open(event, handle, clock.now(), { recorded });
        await queues.enqueueDelivery(deliveryId(event.event_id, handle), { ...event, handle, redrive: 0, ...carried });
      }),
    );
    // A2A push configs of the task: one `_id` read per event of a task that has had one. A task has none at its
    // creation: a config is made for a task that exists, and tells of what happens after.
    const configs =
      event.type === 'thread.created' || push === false ? [] : await store.pushConfigs.of(event.thread_id);
    for (const config of configs) {
      await deliveries.open(event, config.owner, clock.now(), { pushConfig: config.id, recorded });
      await queues.enqueueDelivery(pushDeliveryId(event.event_id, config.id), {
        ...event,
        handle: config.owner,
        redrive: 0,
        push_config: config.id,
        ...carried,
      });
    }
    return 'fanned_out';
  }

  async function deliver(job: Job): Promise<WebhookOutcome> {
    const data = parseJob(deliveryJobSchema, job);
    if (data.push_config !== undefined) return push(job, data, data.push_config);
    const id = deliveryId(data.event_id, data.handle);
    // The delivery's record, the endpoint and the thread are read at once (a job whose record says it is done wasted
    // two reads); the thread is the version this process wrote moments ago when it did (readThreadFrom).
    const [attempt, agent, thread] = await Promise.all([
      openAttempt(
        { deliveries, clock, log },
        id,
        job,
        data,
        'webhook delivery failed for good; in the dead-letter list',
      ),
      store.agents.findOne({ _id: data.handle }),
      store.readThreadFrom(data.thread_id, data.version),
    ]);
    if (!attempt) return 'skipped';
    const { fail } = attempt;

    const endpoint = agent?.status === 'active' ? agent.notification : null;
    if (!endpoint || endpoint.disabled_at) {
      await deliveries.record(
        id,
        {
          at: clock.now(),
          outcome: 'failed',
          http_status: null,
          error: 'the teammate has no active webhook endpoint any more',
        },
        'skipped',
      );
      return 'skipped';
    }
    if (!endpoint.verified) {
      // Held, not dropped: retried on the schedule (and promoted as soon as the challenge is answered).
      await queues.enqueueChallenge(data.handle, endpoint.updated_at);
      return fail(
        { outcome: 'held', http_status: null, error: 'endpoint not verified yet (waiting for the challenge answer)' },
        'endpoint not verified yet',
      );
    }

    const event = thread && deliveredEvent(data, thread);
    if (!thread || !event) {
      await deliveries.record(
        id,
        { at: clock.now(), outcome: 'failed', http_status: null, error: 'the thread or event no longer exists' },
        'failed',
      );
      throw new UnrecoverableError(`delivery ${id}: thread or event missing`);
    }
    const view = await reads.view(thread, data.handle);
    const body = JSON.stringify({
      type: event.type,
      timestamp: event.at.toISOString(),
      data: {
        ...view,
        event_id: event.id,
        by: event.by,
        via: event.via,
        ...(event.message_id ? { message_id: event.message_id } : {}),
      },
    });

    const outcome = await attempt.post(
      {
        url: endpoint.url,
        secrets: signingSecrets(endpoint, clock.now()),
        id,
        body,
        policy: deps.policy,
        timeoutMs: deps.timeoutMs,
      },
      async () => {
        await deps.endpoints.markGone(data.handle, endpoint.updated_at);
        return 'the endpoint answered 410 Gone and is disabled';
      },
    );
    if (outcome === 'delivered')
      log.info({ delivery_id: id, handle: data.handle, event: data.type }, 'webhook delivered');
    return outcome;
  }

  const push = pushDelivery({ reads, store, deliveries, policy: deps.policy, log, clock, timeoutMs: deps.timeoutMs });

  return async function processWebhookJob(job: Job): Promise<WebhookOutcome> {
    return job.name === DELIVER_JOB ? deliver(job) : fanOut(job);
  };
}

/** Admin side of the dead-letter list: list, re-drive one, re-drive all. */
export class WebhookDeadLetters {
  constructor(
    private readonly deliveries: WebhookDeliveries,
    private readonly queues: WebhookQueues,
    private readonly clock: Clock = systemClock,
  ) {}

  list(
    filter: { status?: WebhookDeliveryDoc['status']; handle?: string },
    limit: number,
  ): Promise<WebhookDeliveryDoc[]> {
    return this.deliveries.list(filter, limit);
  }

  get(id: string): Promise<WebhookDeliveryDoc | null> {
    return this.deliveries.get(id);
  }

  /** Re-drives a failed delivery with a fresh schedule; null when it is not in the dead-letter list. */
  async redrive(doc: WebhookDeliveryDoc): Promise<WebhookDeliveryDoc | null> {
    if (doc.status !== 'failed') return null;
    const n = await this.deliveries.reopen(doc, this.clock.now());
    if (n === null) return null;
    await this.enqueue({ ...doc, redrives: n });
    return { ...doc, status: 'pending', redrives: n };
  }

  /**
   * Enqueues every pending delivery's job again, for a Redis that came back without its jobs: one still queued
   * is not added twice (its job id), and one delivered meanwhile is skipped by its job (the record's status).
   */
  async requeuePending(): Promise<number> {
    let count = 0;
    for await (const doc of this.deliveries.collection.find({ status: 'pending' })) {
      await this.enqueue(doc);
      count += 1;
    }
    return count;
  }

  /**
   * requeuePending once per Redis that came back without its jobs: its marker, a key beside the webhooks queue, is gone
   * with them. The marker is set first, so a Redis lost again while the deliveries are enqueued is noticed next time.
   */
  async requeueIfLost(redis: Pick<Redis, 'exists' | 'set'>): Promise<number> {
    const marker = this.queues.webhooks.toKey('requeued');
    if (await redis.exists(marker)) return 0;
    await redis.set(marker, this.clock.now().toISOString());
    return this.requeuePending();
  }

  private async enqueue(doc: WebhookDeliveryDoc): Promise<void> {
    const data = {
      event_id: doc.event_id,
      thread_id: doc.thread_id,
      type: doc.event_type,
      handle: doc.handle,
      redrive: doc.redrives,
      ...(doc.event ? { event: carriedEvent(doc.event) } : {}),
    };
    await this.queues.enqueueDelivery(
      doc._id,
      doc.push_config === undefined ? data : { ...data, push_config: doc.push_config },
    );
  }

  async redriveAll(limit = 1_000): Promise<number> {
    let count = 0;
    for (const doc of await this.deliveries.list({ status: 'failed' }, limit)) {
      if (await this.redrive(doc)) count += 1;
    }
    return count;
  }

  /** Runs now what was waiting for `handle`'s endpoint to be verified. */
  async promoteHeld(handle: string): Promise<number> {
    let count = 0;
    for (const doc of await this.deliveries.held(handle)) {
      if (await this.queues.promote(WebhookQueues.deliveryJobId(doc._id, doc.redrives))) count += 1;
    }
    return count;
  }
}
