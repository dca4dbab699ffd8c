// Each teammate's account history beside its thread event log (event-log.ts): key rotations, blocks, and policy
// refusals about it. `_id` is `${handle}|${ISO time}|${uuid}`, so a teammate's newest entries before a point are an
// `_id` range within its own entries (the `by_handle` index): one teammate's account history, never anyone else's.
import { randomUUID } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import type { PolicyAuditDoc } from '../domain/documents';

export interface AccountEventDoc {
  _id: string;
  handle: string;
  at: Date;
  /** Who did it: a handle, or `admin` for the admin key. */
  actor: string;
  /** `key.rotated`, `teammate.blocked`, `teammate.unblocked`, `policy.denied`, `policy.rate_limited`, … */
  action: string;
  resource_type: string;
  resource_id: string;
  via: string;
}

export type AccountEvent = Omit<AccountEventDoc, '_id'>;

/** `|` and `}` follow every character a handle may hold (`[A-Za-z0-9._-@]`): one handle's ids sort between them. */
const firstId = (handle: string) => `${handle}|`;
const pastLastId = (handle: string) => `${handle}}`;

export class AccountLog {
  readonly entries: Collection<AccountEventDoc>;

  constructor(db: Db) {
    this.entries = db.collection<AccountEventDoc>('account_log');
  }

  /** Records events (one per teammate they are about), in one insert. */
  async record(events: readonly AccountEvent[]): Promise<void> {
    if (events.length === 0) return;
    await this.entries.insertMany(
      events.map((e) => ({ _id: `${firstId(e.handle)}${e.at.toISOString()}|${randomUUID()}`, ...e })),
    );
  }

  /** `handle`'s entries before `beforeId` (from the newest when null), newest first, at most `limit`. */
  async newest(handle: string, beforeId: string | null, limit: number): Promise<AccountEventDoc[]> {
    // A `beforeId` outside the handle's range (another teammate's id in a forged cursor) is clamped into it.
    const upper = beforeId !== null && beforeId < pastLastId(handle) ? beforeId : pastLastId(handle);
    return this.entries
      .find({ handle, _id: { $gt: firstId(handle), $lt: upper } })
      .sort({ _id: -1 })
      .limit(limit)
      .toArray();
  }
}

/** A policy audit line as each teammate it is about (actor, sender, recipient; not the admin key) sees it. */
export function policyAuditEvents(doc: PolicyAuditDoc): AccountEvent[] {
  const parties = [...new Set([doc.actor, doc.sender, doc.recipient])].filter((handle) => handle && handle !== 'admin');
  const [resource_type, resource_id] = doc.thread_id
    ? ['thread', doc.thread_id]
    : ['policy_rule', doc.rule_id ?? 'default'];
  return parties.map((handle) => ({
    handle,
    at: doc.at,
    actor: doc.actor,
    action: `policy.${doc.outcome}`,
    resource_type,
    resource_id,
    via: doc.via,
  }));
}
