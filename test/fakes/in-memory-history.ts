// A teammate's two histories in memory, for the fast tests of service/audit-trail.ts and service/event-feed.ts: the thread event log
// (store/event-log.ts EventLog: positions dense from 1, each event once) and the account log (store/account-log.ts
// AccountLog: ids ordered by handle, then time). Each passes test/contracts/history-logs-contract.ts, run against
// this and against the real logs.
import { randomUUID } from 'node:crypto';
import type { OutboxEvent } from '../../relay-core/domain/documents';
import type { AccountEvent, AccountEventDoc, AccountLog } from '../../relay-core/store/account-log';
import type { EventLog, LoggedEvent } from '../../relay-core/store/event-log';

export class InMemoryEventLog implements Pick<EventLog, 'record' | 'head' | 'read' | 'readBack'> {
  private readonly logs = new Map<string, Array<LoggedEvent & { recorded_at: Date }>>();

  async record(handle: string, threadId: string, event: OutboxEvent): Promise<number> {
    const log = this.logs.get(handle) ?? [];
    this.logs.set(handle, log);
    const earlier = log.find((e) => e.event.id === event.id);
    if (earlier) return earlier.seq;
    const seq = log.length + 1;
    log.push({ seq, thread_id: threadId, event: structuredClone(event), recorded_at: new Date() });
    return seq;
  }

  async head(handle: string): Promise<number> {
    return this.logs.get(handle)?.length ?? 0;
  }

  async read(handle: string, after: number, limit: number): Promise<{ events: LoggedEvent[]; cursor: number }> {
    const events = (this.logs.get(handle) ?? [])
      .filter((e) => e.seq > after)
      .slice(0, limit)
      .map(({ seq, thread_id, event }) => structuredClone({ seq, thread_id, event }));
    return { events, cursor: events.at(-1)?.seq ?? after };
  }

  async readBack(
    handle: string,
    below: number | null,
    limit: number,
  ): Promise<{ events: Array<LoggedEvent & { recorded_at: Date }>; lowest: number }> {
    const events = (this.logs.get(handle) ?? [])
      .filter((e) => below === null || e.seq < below)
      .reverse()
      .slice(0, limit)
      .map((e) => structuredClone(e));
    return { events, lowest: events.length < limit ? 1 : events.at(-1)!.seq };
  }
}

export class InMemoryAccountLog implements Pick<AccountLog, 'record' | 'newest'> {
  private readonly entries: AccountEventDoc[] = [];

  async record(events: readonly AccountEvent[]): Promise<void> {
    for (const e of events)
      this.entries.push({ _id: `${e.handle}|${e.at.toISOString()}|${randomUUID()}`, ...structuredClone(e) });
  }

  async newest(handle: string, beforeId: string | null, limit: number): Promise<AccountEventDoc[]> {
    const pastLast = `${handle}}`;
    const upper = beforeId !== null && beforeId < pastLast ? beforeId : pastLast;
    return this.entries
      .filter((e) => e.handle === handle && e._id > `${handle}|` && e._id < upper)
      .sort((a, b) => (a._id < b._id ? 1 : -1))
      .slice(0, limit)
      .map((e) => structuredClone(e));
  }
}
