// One A2A push notification: a later event of a task POSTed to a config a participant registered on it
// (jsonrpc/a2a-push.ts), as a StreamResponse `{ statusUpdate }`, signed with the config's own secret (Standard
// Webhooks headers) and carrying its token, through the SSRF guard; retried and dead-lettered like card webhooks.
import { UnrecoverableError, type Job } from 'bullmq';
import type { Logger } from 'pino';
import type { Clock } from '../domain/clock';
import { A2A_V1_STATE } from '../domain/a2a-states';
import type { Relay } from '../service/relay-service';
import type { MongoStore } from '../store/mongo-store';
import { pushDeliveryId, type WebhookDeliveries } from './deliveries';
import { openAttempt } from './delivery-attempt';
import type { TargetPolicy } from './ssrf-guard';
import { deliveredEvent, type DeliveryJob } from './webhook-queues';

const V1_STATE = A2A_V1_STATE;
const STATE_OF_EVENT: Record<string, string> = {
  'thread.created': V1_STATE.pending,
  'thread.accepted': V1_STATE.accepted,
  'thread.completed': V1_STATE.completed,
  'thread.declined': V1_STATE.declined,
  'thread.cancelled': V1_STATE.cancelled,
  'thread.expired': V1_STATE.expired,
};

export interface PushDeliveryDeps {
  reads: Relay['reads'];
  store: MongoStore;
  deliveries: WebhookDeliveries;
  policy: TargetPolicy;
  log: Logger;
  clock: Clock;
  timeoutMs?: number;
}

export function pushDelivery(deps: PushDeliveryDeps) {
  const { reads, store, deliveries, log, clock } = deps;
  return async function deliverPush(
    job: Job,
    data: DeliveryJob,
    configId: string,
  ): Promise<'delivered' | 'gone' | 'skipped'> {
    const id = pushDeliveryId(data.event_id, configId);
    const attempt = await openAttempt(
      { deliveries, clock, log },
      id,
      job,
      data,
      'push notification failed for good; in the dead-letter list',
    );
    if (!attempt) return 'skipped';

    const config = (await store.pushConfigs.of(data.thread_id)).find((c) => c.id === configId);
    if (!config) {
      await deliveries.record(
        id,
        { at: clock.now(), outcome: 'failed', http_status: null, error: 'the push notification config was deleted' },
        'skipped',
      );
      return 'skipped';
    }
    const thread = await reads.threadById(data.thread_id);
    const event = thread && deliveredEvent(data, thread);
    if (!thread || !event) {
      await deliveries.record(
        id,
        { at: clock.now(), outcome: 'failed', http_status: null, error: 'the thread or event no longer exists' },
        'failed',
      );
      throw new UnrecoverableError(`push delivery ${id}: thread or event missing`);
    }
    const state = STATE_OF_EVENT[event.type] ?? V1_STATE[thread.status];
    const body = JSON.stringify({
      statusUpdate: {
        taskId: thread._id,
        contextId: thread._id,
        status: { state, timestamp: event.at.toISOString() },
        metadata: {
          handoff_event: {
            type: event.type,
            event_id: event.id,
            at: event.at.toISOString(),
            by: event.by,
            via: event.via,
            ...(event.message_id ? { message_id: event.message_id } : {}),
          },
          handoff: { thread_id: thread._id, status: thread.status },
        },
      },
    });
    const headers: Record<string, string> = {};
    if (config.token) headers['x-a2a-notification-token'] = config.token;
    if (config.authentication?.credentials)
      headers.authorization = `${config.authentication.scheme} ${config.authentication.credentials}`;

    return attempt.post(
      { url: config.url, secrets: [config.secret], id, body, policy: deps.policy, timeoutMs: deps.timeoutMs, headers },
      async () => {
        // The receiver is gone: the config goes, so no later event is sent to it either.
        await store.pushConfigs.change(data.thread_id, (d) =>
          d.configs.some((c) => c.id === configId)
            ? { ...d, configs: d.configs.filter((c) => c.id !== configId) }
            : undefined,
        );
        return 'the receiver answered 410 Gone; the push notification config is deleted';
      },
    );
  };
}
