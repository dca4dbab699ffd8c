// The `webhooks` queue's processor: an event job fans out to one `deliver` job per endpoint, which POSTs it.
import { UnrecoverableError, type Job } from 'bullmq';
import type { Logger } from 'pino';
import { eventJobSchema } from '../queues/bullmq-queues';
import { parseJob } from '../queues/parse-job';
import { signingSecrets, type WebhookAttempt, type WebhookDeliveryDoc } from '../domain/documents';
import type { MongoStore } from '../store/mongo-store';
import type { RelayService } from '../service/relay-service';
import type { TargetPolicy } from './ssrf-guard';
import { systemClock, type Clock } from '../domain/clock';
import { deliveryId, type WebhookDeliveries } from './deliveries';
import type { WebhookEndpoints } from './endpoint-lifecycle';
import { postSigned } from './signed-post';
import { DELIVER_JOB, deliveryJobSchema, WebhookQueues } from './webhook-queues';

// An event job (named for its event type, id = event id) fans out to one `deliver` job per participant with an
// endpoint; a deliver job signs and POSTs the event, records the attempt, and fails (to be retried on the
// schedule) until a 2xx, a 410, or the last attempt (dead letter).

export interface WebhookDeliveryDeps {
  relay: RelayService;
  store: MongoStore;
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
class AttemptFailed extends Error {}

export function createWebhookProcessor(deps: WebhookDeliveryDeps) {
  const { relay, store, deliveries, queues, log } = deps;
  const clock = deps.clock ?? systemClock;

  /**
   * Every participant (sender and recipient, the actor included: `data.by` tells who acted, and an
   * agent whose person acted in Slack wants to hear of it) that has an active endpoint gets the event.
   */
  async function fanOut(job: Job): Promise<WebhookOutcome> {
    const event = parseJob(eventJobSchema, job);
    // Two small reads per event: most teammates have no endpoint, and this runs for every event.
    const thread = await store.threads.findOne({ _id: event.thread_id }, { projection: { from: 1, to: 1, hidden_from_recipient: 1, approvals: 1 } });
    if (!thread) return 'skipped';
    // A create held for approval is not the recipient's to hear of; its approvers hear of every approval asked of them.
    const audience = thread.hidden_from_recipient ? [thread.from] : [thread.from, thread.to];
    if (event.type === 'thread.awaiting_approval' || event.type === 'approval.requested') {
      for (const approval of thread.approvals ?? []) {
        if (approval.status !== 'pending') continue;
        for (const approver of approval.approvers) if (approver.handle) audience.push(approver.handle);
      }
    }
    // One `_id` lookup per participant: any other filter reads every agent on FerretDB.
    const owners = await Promise.all(
      [...new Set(audience)].map((handle) => store.agents.findOne({ _id: handle }, { projection: { _id: 1, status: 1, notification: 1 } })),
    );
    for (const agent of owners) {
      if (!agent || agent.status !== 'active' || !agent.notification || agent.notification.disabled_at) continue;
      const id = deliveryId(event.event_id, agent._id);
      await deliveries.open(event, agent._id, clock.now());
      await queues.enqueueDelivery(id, { ...event, handle: agent._id, redrive: 0 });
    }
    return 'fanned_out';
  }

  async function deliver(job: Job): Promise<WebhookOutcome> {
    const data = parseJob(deliveryJobSchema, job);
    const id = deliveryId(data.event_id, data.handle);
    const doc = await deliveries.get(id);
    // Delivered, dead-lettered or superseded by a re-drive: a re-enqueued job must not send it again.
    if (!doc || doc.status !== 'pending' || doc.redrives !== data.redrive) return 'skipped';

    const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
    const fail = async (attempt: Omit<WebhookAttempt, 'at'>, message: string): Promise<never> => {
      await deliveries.record(id, { at: clock.now(), ...attempt }, lastAttempt ? 'failed' : 'pending');
      if (lastAttempt) log.warn({ delivery_id: id, handle: data.handle, event: data.type, error: attempt.error }, 'webhook delivery failed for good; in the dead-letter list');
      throw new AttemptFailed(message);
    };

    const agent = await store.agents.findOne({ _id: data.handle });
    const endpoint = agent?.status === 'active' ? agent.notification : null;
    if (!endpoint || endpoint.disabled_at) {
      await deliveries.record(id, { at: clock.now(), outcome: 'failed', http_status: null, error: 'the teammate has no active webhook endpoint any more' }, 'skipped');
      return 'skipped';
    }
    if (!endpoint.verified) {
      // Held, not dropped: retried on the schedule (and promoted as soon as the challenge is answered).
      await queues.enqueueChallenge(data.handle, endpoint.updated_at);
      return fail({ outcome: 'held', http_status: null, error: 'endpoint not verified yet (waiting for the challenge answer)' }, 'endpoint not verified yet');
    }

    const thread = await relay.threadById(data.thread_id);
    const event = thread?.outbox.find((e) => e.id === data.event_id);
    if (!thread || !event) {
      await deliveries.record(id, { at: clock.now(), outcome: 'failed', http_status: null, error: 'the thread or event no longer exists' }, 'failed');
      throw new UnrecoverableError(`delivery ${id}: thread or event missing`);
    }
    const view = await relay.view(thread, data.handle);
    const body = JSON.stringify({
      type: event.type,
      timestamp: event.at.toISOString(),
      data: { ...view, event_id: event.id, by: event.by, via: event.via, ...(event.message_id ? { message_id: event.message_id } : {}) },
    });

    let status: number;
    try {
      ({ status } = await postSigned({ url: endpoint.url, secrets: signingSecrets(endpoint, clock.now()), id, body, policy: deps.policy, timeoutMs: deps.timeoutMs }));
    } catch (error) {
      return fail({ outcome: 'failed', http_status: null, error: (error as Error).message.slice(0, 300) }, (error as Error).message);
    }
    if (status >= 200 && status < 300) {
      await deliveries.record(id, { at: clock.now(), outcome: 'delivered', http_status: status, error: null }, 'delivered');
      log.info({ delivery_id: id, handle: data.handle, event: data.type, http_status: status }, 'webhook delivered');
      return 'delivered';
    }
    if (status === 410) {
      await deps.endpoints.markGone(data.handle, endpoint.updated_at);
      await deliveries.record(id, { at: clock.now(), outcome: 'gone', http_status: 410, error: 'the endpoint answered 410 Gone and is disabled' }, 'gone');
      return 'gone';
    }
    const why = status >= 300 && status < 400 ? `HTTP ${status} (redirects are not followed)` : `HTTP ${status}`;
    return fail({ outcome: 'failed', http_status: status, error: why }, why);
  }

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

  list(filter: { status?: WebhookDeliveryDoc['status']; handle?: string }, limit: number): Promise<WebhookDeliveryDoc[]> {
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
    await this.queues.enqueueDelivery(doc._id, { event_id: doc.event_id, thread_id: doc.thread_id, type: doc.event_type, handle: doc.handle, redrive: n });
    return { ...doc, status: 'pending', redrives: n };
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
