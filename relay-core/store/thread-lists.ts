// tasks/list pages in the two ways the store picks between at connect time: MongoDB's indexes, or the
// mailbox logs the relay maintains for servers that would read every thread to answer a filtered, sorted query.
import type { Collection, Filter } from 'mongodb';
import type { ThreadDoc } from '../domain/documents';
import { RelayError } from '../domain/errors';
import type { ThreadStatus } from '../domain/schemas';
import { boxName, type MailboxLog, type Party } from './mailbox-log';

export interface ListQuery {
  party: Party;
  handle: string;
  statuses?: readonly ThreadStatus[];
  since?: Date;
  limit: number;
  cursor?: string;
}

export type ListedThread = Pick<ThreadDoc, '_id' | 'from' | 'to' | 'summary' | 'intent' | 'status' | 'message_counts' | 'created_at' | 'updated_at' | 'hidden_from_recipient'>;

export const LISTED_FIELDS = { _id: 1, from: 1, to: 1, summary: 1, intent: 1, status: 1, message_counts: 1, created_at: 1, updated_at: 1, mailbox: 1, hidden_from_recipient: 1 } as const;

/** True when the entry at `position` of `handle`'s `party` box is where the thread sits now (a candidate's, while unclaimed). */
function sitsAt(doc: ListedThread & Pick<ThreadDoc, 'mailbox'>, party: Party, handle: string, position: number): boolean {
  if (doc[party] === handle && doc.mailbox?.[party] === position) return true;
  return party === 'to' && doc.status === 'unclaimed' && (doc.mailbox?.candidates ?? []).some((c) => c.handle === handle && c.n === position);
}

/** Port: one page of a mailbox, newest first; walking the cursors returns every matching thread exactly once. */
export interface ThreadLists {
  page(query: ListQuery): Promise<{ threads: ListedThread[]; next_cursor: string | null }>;
}

const badCursor = () => new RelayError('invalid_params', 'params.page.cursor: not a cursor this relay issued');

function encode(value: unknown[]): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

function decode(cursor: string): unknown[] {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(value)) return value;
  } catch {
    // fall through
  }
  throw badCursor();
}

/** MongoDB: the `inbox` / `sent` indexes serve equality on the party, newest first, status within. */
export class IndexedThreadLists implements ThreadLists {
  constructor(private readonly threads: Collection<ThreadDoc>) {}

  async page(query: ListQuery): Promise<{ threads: ListedThread[]; next_cursor: string | null }> {
    // The received list also holds the unclaimed handoffs the caller is a candidate for.
    const party: Filter<ThreadDoc> =
      query.party === 'to' ? { $or: [{ to: query.handle }, { candidates: query.handle, status: 'unclaimed' }] } : { from: query.handle };
    const filter: Filter<ThreadDoc> = { $and: [party] };
    if (query.statuses?.length) filter.status = { $in: [...query.statuses] };
    const createdAt: Record<string, Date> = {};
    if (query.since) createdAt.$gte = query.since;
    if (query.cursor) {
      const [ms, id] = decode(query.cursor);
      if (typeof ms !== 'number' || !Number.isFinite(new Date(ms).getTime()) || typeof id !== 'string' || id.length > 64) throw badCursor();
      const after = new Date(ms);
      createdAt.$lte = after;
      filter.$and!.push({ $or: [{ created_at: { $lt: after } }, { created_at: after, _id: { $lt: id } }] });
    }
    if (Object.keys(createdAt).length) filter.created_at = createdAt;
    const docs = await this.threads
      .find(filter, { projection: LISTED_FIELDS })
      .sort({ created_at: -1, _id: -1 })
      .limit(query.limit + 1)
      .toArray();
    const threads = docs.slice(0, query.limit);
    const last = threads[threads.length - 1];
    return { threads, next_cursor: docs.length > query.limit && last ? encode([last.created_at.getTime(), last._id]) : null };
  }
}

/** A page examines at most this many mailbox entries; a sparse filter returns a shorter page with a cursor. */
const MAX_EXAMINED = 1_000;

/**
 * FerretDB: a box's entries are read downwards from its head (or from the cursor's position), each with its
 * thread, by `_id`. Positions never change, so a cursor (the position the page stopped above) continues exactly
 * where the page ended, whatever is created or changes status meanwhile. An entry counts only when its thread
 * records that very position (a create that lost an idempotency race, or a migration run twice, leaves entries
 * that point at a thread placed elsewhere).
 */
export class MailboxThreadLists implements ThreadLists {
  constructor(
    private readonly threads: Collection<ThreadDoc>,
    private readonly log: MailboxLog,
  ) {}

  async page(query: ListQuery): Promise<{ threads: ListedThread[]; next_cursor: string | null }> {
    const box = boxName(query.party, query.handle);
    let below: number;
    if (query.cursor) {
      const [kind, position] = decode(query.cursor);
      if (kind !== 'm' || typeof position !== 'number' || !Number.isSafeInteger(position) || position < 1) throw badCursor();
      below = position;
    } else {
      below = (await this.log.head(box)) + 1;
    }
    const statuses = query.statuses?.length ? new Set(query.statuses) : null;
    const found: ListedThread[] = [];
    let batch = query.limit + 1;
    let examined = 0;
    let nextCursor: string | null = null;
    walk: while (below > 1) {
      const positions = Array.from({ length: Math.min(batch, below - 1) }, (_, i) => below - 1 - i);
      const entries = await this.log.at(box, positions);
      const docs = await Promise.all(
        entries.map((entry) => (entry ? this.threads.findOne({ _id: entry.thread_id }, { projection: LISTED_FIELDS }) : null)),
      );
      for (let i = 0; i < positions.length; i += 1) {
        const entry = entries[i];
        below = positions[i]!;
        examined += 1;
        if (query.since && entry && entry.created_at < query.since) {
          below = 1;
          break walk;
        }
        const doc = docs[i] as (ListedThread & Pick<ThreadDoc, 'mailbox'>) | null;
        if (!doc || !sitsAt(doc, query.party, query.handle, below) || (statuses && !statuses.has(doc.status))) continue;
        if (found.length === query.limit) {
          // One more match exists: the page ends above it.
          nextCursor = encode(['m', below + 1]);
          break walk;
        }
        found.push(doc);
      }
      if (examined >= MAX_EXAMINED && below > 1) {
        nextCursor = encode(['m', below]);
        break;
      }
      // Size the next batch by how often entries matched so far, so a sparse filter does not read twice what it needs.
      const rate = Math.max(found.length / examined, 0.05);
      batch = Math.min(Math.ceil((query.limit + 1 - found.length) / rate), 200);
    }
    return { threads: found.map(({ mailbox: _m, ...doc }: ListedThread & Pick<ThreadDoc, 'mailbox'>) => doc), next_cursor: nextCursor };
  }
}
