// The `webhook_deliveries` collection: one record per (event, endpoint owner) with every attempt's outcome.
import type { Collection, Filter } from 'mongodb';
import type { OutboxEvent, WebhookAttempt, WebhookDeliveryDoc } from '../domain/documents';
import type { EventType } from '../domain/schemas';
import type { MongoStore } from '../store/mongo-store';
import { ensureIndexes } from '../store/indexes';
import { isDuplicateKey } from '../store/thread-writes';

// It is the dedupe guard (a delivered record is never sent again) and the dead-letter list people re-drive.

/** The delivery id: also the `webhook-id` header and (with `.r<n>` per re-drive) the BullMQ job id. */
export function deliveryId(eventId: string, handle: string): string {
  return `${eventId}.${handle}`;
}

/** An A2A push delivery's id: the event and the task's config (`webhook-id` too; config ids have no `.` or `:`). */
export function pushDeliveryId(eventId: string, configId: string): string {
  return `${eventId}.push.${configId}`;
}

/** What the admin API shows of a delivery: no URL, no secret, no payload. */
export interface DeliveryView {
  id: string;
  event_id: string;
  event_type: EventType;
  thread_id: string;
  handle: string;
  status: WebhookDeliveryDoc['status'];
  redrives: number;
  attempts: Array<{ at: string; outcome: WebhookAttempt['outcome']; http_status: number | null; error: string | null }>;
  created_at: string;
  updated_at: string;
}

export function deliveryView(doc: WebhookDeliveryDoc): DeliveryView {
  return {
    id: doc._id,
    event_id: doc.event_id,
    event_type: doc.event_type,
    thread_id: doc.thread_id,
    handle: doc.handle,
    status: doc.status,
    redrives: doc.redrives,
    attempts: doc.attempts.map((a) => ({
      at: a.at.toISOString(),
      outcome: a.outcome,
      http_status: a.http_status,
      error: a.error,
    })),
    created_at: doc.created_at.toISOString(),
    updated_at: doc.updated_at.toISOString(),
  };
}

export class WebhookDeliveries {
  readonly collection: Collection<WebhookDeliveryDoc>;

  constructor(store: MongoStore) {
    this.collection = store.db.collection<WebhookDeliveryDoc>('webhook_deliveries');
  }

  async ensureIndexes(): Promise<void> {
    await ensureIndexes([
      // A status's deliveries, newest first (ties by _id: the whole sort read from the index).
      [this.collection, { status: 1, updated_at: -1, _id: 1 }, { name: 'status_time' }],
      [this.collection, { handle: 1, status: 1 }, { name: 'handle_status' }],
    ]);
  }

  /**
   * Records that the event is owed to `handle`; a second call (a re-run fan-out) changes nothing. `recorded`: the
   * whole event when the caller has it, kept for a re-drive.
   */
  async open(
    event: { event_id: string; type: EventType; thread_id: string },
    handle: string,
    now: Date,
    opts: { pushConfig?: string; recorded?: OutboxEvent | null } = {},
  ): Promise<void> {
    const { pushConfig, recorded } = opts;
    try {
      await this.collection.insertOne({
        _id: pushConfig === undefined ? deliveryId(event.event_id, handle) : pushDeliveryId(event.event_id, pushConfig),
        ...(pushConfig === undefined ? {} : { push_config: pushConfig }),
        ...(recorded ? { event: recorded } : {}),
        event_id: event.event_id,
        event_type: event.type,
        thread_id: event.thread_id,
        handle,
        status: 'pending',
        attempts: [],
        redrives: 0,
        created_at: now,
        updated_at: now,
      });
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
    }
  }

  get(id: string): Promise<WebhookDeliveryDoc | null> {
    return this.collection.findOne({ _id: id });
  }

  /** Appends an attempt and sets the resulting status in one update (one job runs a delivery at a time). */
  async record(id: string, attempt: WebhookAttempt, status: WebhookDeliveryDoc['status']): Promise<void> {
    await this.collection.updateOne(
      { _id: id },
      { $push: { attempts: attempt }, $set: { status, updated_at: attempt.at } },
    );
  }

  async list(
    filter: { status?: WebhookDeliveryDoc['status']; handle?: string },
    limit: number,
  ): Promise<WebhookDeliveryDoc[]> {
    const query: Filter<WebhookDeliveryDoc> = {};
    if (filter.status) query.status = filter.status;
    if (filter.handle) query.handle = filter.handle;
    return this.collection.find(query).sort({ updated_at: -1, _id: 1 }).limit(limit).toArray();
  }

  /**
   * Moves a failed delivery back to pending for re-drive number `redrives + 1`; null when it is not
   * failed (any more). The caller enqueues job `${id}.r${n}`, so two racing re-drives enqueue one job.
   */
  async reopen(doc: WebhookDeliveryDoc, now: Date): Promise<number | null> {
    const n = doc.redrives + 1;
    const result = await this.collection.updateOne(
      { _id: doc._id, status: 'failed', redrives: doc.redrives },
      { $set: { status: 'pending', redrives: n, updated_at: now } },
    );
    return result.matchedCount === 1 ? n : null;
  }

  /** Deliveries of `handle` waiting on an unverified endpoint (their last attempt was held). */
  async held(handle: string, limit = 1_000): Promise<WebhookDeliveryDoc[]> {
    return this.collection.find({ handle, status: 'pending', 'attempts.outcome': 'held' }).limit(limit).toArray();
  }
}
