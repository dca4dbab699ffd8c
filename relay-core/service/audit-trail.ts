// GET /agents/me/audit: a teammate's own history, newest first, merged from its thread event log (every event of the
// threads it sent or received) and its account log (key rotations, blocks, policy refusals about it).
import { z } from 'zod';
import type { Clock } from '../domain/clock';
import type { OutboxEvent } from '../domain/documents';
import { RelayError } from '../domain/errors';
import type { AccountEventDoc, AccountLog } from '../store/account-log';
import type { EventLog } from '../store/event-log';

export interface AuditEvent {
  timestamp: string;
  actor_handle: string;
  action: string;
  resource_type: string;
  resource_id: string;
  via: string;
  /** The thread an event is about, when it is about one. */
  thread_id?: string;
}

export interface AuditPage {
  events: AuditEvent[];
  /** Pass it back for the next (older) page; null after the last. */
  next_cursor: string | null;
}

/** Where the next page starts in each source: below thread-log position `t`, before account-log `_id` `a`. */
const cursorSchema = z.object({ t: z.number().int().min(0), a: z.string().min(1).max(512) }).strict();
type Cursor = z.infer<typeof cursorSchema>;

function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify(cursor)).toString('base64url');
}

function decodeCursor(text: string): Cursor {
  try {
    return cursorSchema.parse(JSON.parse(Buffer.from(text, 'base64url').toString('utf8')));
  } catch {
    throw new RelayError(
      'invalid_params',
      'query.cursor: not a cursor this relay gave (pass next_cursor from the previous page)',
      { field: 'cursor' },
    );
  }
}

function threadEvent(threadId: string, event: OutboxEvent): AuditEvent {
  const [resource_type, resource_id] = event.message_id
    ? ['message', event.message_id]
    : event.run_id
      ? ['run', event.run_id]
      : ['thread', threadId];
  return {
    timestamp: event.at.toISOString(),
    actor_handle: event.by,
    action: event.type,
    resource_type,
    resource_id,
    via: event.via,
    thread_id: threadId,
  };
}

function accountEvent(doc: AccountEventDoc): AuditEvent {
  return {
    timestamp: doc.at.toISOString(),
    actor_handle: doc.actor,
    action: doc.action,
    resource_type: doc.resource_type,
    resource_id: doc.resource_id,
    via: doc.via,
  };
}

export interface AuditTrailDeps {
  store: { eventLog: Pick<EventLog, 'readBack'>; accountLog: Pick<AccountLog, 'newest'> };
  clock: Clock;
}

export class AuditTrail {
  constructor(private readonly deps: AuditTrailDeps) {}

  /**
   * One page of `handle`'s history: at most `limit` events from each source are read (by `_id`, never a scan), merged
   * newest first, and the cursor remembers how far each source was taken, so walking the pages yields every event once.
   */
  async page(handle: string, cursorText: string | undefined, limit: number): Promise<AuditPage> {
    const cursor = cursorText === undefined ? null : decodeCursor(cursorText);
    // The first page pins the account log's top, so entries written while a client walks the pages do not shift them.
    const accountTop = cursor?.a ?? `${handle}|${this.deps.clock.now().toISOString()}`;
    const [threads, account] = await Promise.all([
      this.deps.store.eventLog.readBack(handle, cursor?.t ?? null, limit),
      this.deps.store.accountLog.newest(handle, accountTop, limit),
    ]);
    const events: AuditEvent[] = [];
    let i = 0;
    let j = 0;
    while (events.length < limit && (i < threads.events.length || j < account.length)) {
      const t = threads.events[i];
      const a = account[j];
      if (t && (!a || t.event.at >= a.at)) {
        events.push(threadEvent(t.thread_id, t.event));
        i++;
      } else {
        events.push(accountEvent(a!));
        j++;
      }
    }
    // Each source read fewer than `limit` only when it reached its start; then what it returned is all there is.
    const threadsDone = threads.events.length < limit && i === threads.events.length;
    const accountDone = account.length < limit && j === account.length;
    if (threadsDone && accountDone) return { events, next_cursor: null };
    const t =
      i > 0 ? threads.events[i - 1]!.seq : threads.events.length > 0 ? threads.events[0]!.seq + 1 : threads.lowest;
    const a = j > 0 ? account[j - 1]!._id : accountTop;
    return { events, next_cursor: encodeCursor({ t, a }) };
  }
}
