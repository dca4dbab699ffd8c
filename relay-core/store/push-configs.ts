// A2A push notification configs: one `_id`-addressed document per task (the thread id) holding every participant's
// configs, changed only through a versioned write, so a fan-out reads one document per event.
import { randomBytes } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import { isDuplicateKey, VersionedWriter, type Change } from './thread-writes';

export interface PushConfigEntry {
  /** Unique within the task: the client's `id`, or one the relay made. */
  id: string;
  /** The participant who made it; only they read, list, delete it, and it is delivered only their events. */
  owner: string;
  url: string;
  /** Sent back as `X-A2A-Notification-Token` on every call (the client's own check). */
  token?: string;
  /** Sent as `Authorization: <scheme> <credentials>` when given. */
  authentication?: { scheme: string; credentials?: string };
  /** The Standard Webhooks secret (`whsec_…`) the calls for this config are signed with; shown once at creation. */
  secret: string;
  created_at: Date;
}

export interface PushConfigsDoc {
  _id: string;
  version?: number;
  configs: PushConfigEntry[];
}

export function newPushSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

/**
 * Port used by service/push-configs.ts: each task's configs (adapter: PushConfigStore; in memory:
 * test/fakes/in-memory-push-configs.ts; both pass test/contracts/push-config-records-contract.ts).
 */
export interface PushConfigRecords {
  /** The configs of a task (none: an empty list). */
  of(taskId: string): Promise<PushConfigEntry[]>;
  /** Applies `change` to the task's configs in one versioned write; the configs after it. */
  change(taskId: string, change: Change<PushConfigsDoc>): Promise<PushConfigEntry[]>;
}

export class PushConfigStore implements PushConfigRecords {
  readonly docs: Collection<PushConfigsDoc>;
  readonly writer: VersionedWriter<PushConfigsDoc>;

  constructor(db: Db) {
    this.docs = db.collection<PushConfigsDoc>('push_configs');
    this.writer = new VersionedWriter(this.docs, 'push notification config');
  }

  /** The configs of a task (none: an empty list). */
  async of(taskId: string): Promise<PushConfigEntry[]> {
    return (await this.writer.read(taskId))?.configs ?? [];
  }

  /** Applies `change` to the task's configs in one versioned write; the configs after it. */
  async change(taskId: string, change: Change<PushConfigsDoc>): Promise<PushConfigEntry[]> {
    try {
      await this.docs.insertOne({ _id: taskId, configs: [] });
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
    }
    const { before, after } = await this.writer.write(taskId, change);
    return (after ?? before)?.configs ?? [];
  }
}
