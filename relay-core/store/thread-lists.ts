// tasks/list pages in the two ways the store picks between at connect time: MongoDB's indexes, or the
// mailbox logs the relay maintains for servers that would read every thread to answer a filtered, sorted query.
import type { Collection, Filter } from 'mongodb';
import type { ThreadDoc } from '../domain/documents';
import { RelayError } from '../domain/errors';
import type { ThreadStatus } from '../domain/schemas';
import { boxName, finalOf, type BoxReader, type Final, type MailboxLog, type Party } from './mailbox-log';

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
/** A page reads at most this many threads at once. */
const MAX_READS = 200;

/**
 * FerretDB: a box's entries are read downwards from its head (or from the cursor's position), each with its
 * thread, by `_id`. Positions never change, so a cursor (the position the page stopped above) continues exactly
 * where the page ended, whatever is created or changes status meanwhile. An entry counts only when its thread
 * records that very position (a create that lost an idempotency race, or a migration run twice, leaves entries
 * that point at a thread placed elsewhere).
 *
 * Below the box's newest few positions the entries come BLOCK at a time from block documents (mailbox-log.ts),
 * which also say which threads are terminal (a terminal thread never changes status or place again): a status
 * filter skips those that cannot match without reading them, and every page skips those placed elsewhere. The
 * threads the page reads teach the blocks what they did not know yet.
 */
export class MailboxThreadLists implements ThreadLists {
  constructor(
    private readonly threads: Collection<ThreadDoc>,
    private readonly log: MailboxLog,
  ) {}

  async page(query: ListQuery): Promise<{ threads: ListedThread[]; next_cursor: string | null }> {
    const box = boxName(query.party, query.handle);
    let reader: BoxReader;
    if (query.cursor) {
      const [kind, position] = decode(query.cursor);
      if (kind !== 'm' || typeof position !== 'number' || !Number.isSafeInteger(position) || position < 1) throw badCursor();
      reader = this.log.fromPosition(box, position - 1);
    } else {
      reader = await this.log.fromHead(box);
    }
    const statuses = query.statuses?.length ? new Set(query.statuses) : null;
    // Known not to be listed, whatever happens to the thread from now on.
    const skipped = (final: Final) => final === 'elsewhere' || (final !== null && statuses !== null && !statuses.has(final));
    const found: Array<ListedThread & Pick<ThreadDoc, 'mailbox'>> = [];
    /** The next position to examine. */
    let next = reader.top;
    let examined = 0;
    let candidates = 0;
    let reads = 0;
    let nextCursor: string | null = null;
    walk: while (next >= 1) {
      // Threads to read this round, by how often a read one matched so far; entries enough to hold that many.
      const rate = reads > 0 ? Math.max(found.length / reads, 0.05) : 1;
      const want = Math.min(Math.ceil((query.limit + 1 - found.length) / rate), MAX_READS);
      const share = examined > 0 ? Math.max(candidates / examined, 0.1) : 1;
      const span = Math.min(Math.ceil(want / share), next, MAX_EXAMINED - examined);
      await reader.load(next - span + 1, next);
      const toRead: number[] = [];
      for (let p = next; p >= 1 && toRead.length < want; p -= 1) {
        const slot = reader.slot(p);
        if (!slot) break;
        if (query.since && slot.entry && slot.entry.created_at < query.since) break;
        if (slot.entry && !skipped(slot.final)) toRead.push(p);
      }
      const docs = new Map(
        await Promise.all(
          toRead.map(async (p) => [p, (await this.threads.findOne({ _id: reader.slot(p)!.entry!.thread_id }, { projection: LISTED_FIELDS })) as (ListedThread & Pick<ThreadDoc, 'mailbox'>) | null] as const),
        ),
      );
      reads += toRead.length;
      for (; next >= 1; next -= 1) {
        const slot = reader.slot(next);
        if (!slot) break;
        if (examined >= MAX_EXAMINED) {
          nextCursor = encode(['m', next + 1]);
          break walk;
        }
        // Older than `since`: entries were appended in time order, so the list ends here.
        if (query.since && slot.entry && slot.entry.created_at < query.since) break walk;
        if (!slot.entry || skipped(slot.final)) {
          examined += 1;
          continue;
        }
        if (!docs.has(next)) break;
        examined += 1;
        candidates += 1;
        const doc = docs.get(next)!;
        if (!doc) continue;
        const sits = sitsAt(doc, query.party, query.handle, next);
        reader.learn(next, finalOf(doc.status, sits, doc.mailbox !== undefined));
        if (!sits || (statuses && !statuses.has(doc.status))) continue;
        if (found.length === query.limit) {
          // One more match exists: the page ends above it.
          nextCursor = encode(['m', next + 1]);
          break walk;
        }
        found.push(doc);
      }
      if (examined >= MAX_EXAMINED && next >= 1) {
        nextCursor = encode(['m', next + 1]);
        break;
      }
    }
    await reader.flush();
    return { threads: found.map(({ mailbox: _m, ...doc }) => doc), next_cursor: nextCursor };
  }
}
