// A teammate's history logs' contract: what service/audit-trail.ts and service/event-feed.ts rely on of the thread
// event log (store/event-log.ts: record, head, read, readBack) and the account log's newest (store/account-log.ts). Run against the in-memory fakes
// (test/unit/) and EventLog and AccountLog on the real server (test/integration/).
import { randomUUID } from 'node:crypto';
import type { OutboxEvent } from '../../relay-core/domain/documents';
import type { AccountLog } from '../../relay-core/store/account-log';
import type { EventLog } from '../../relay-core/store/event-log';

export interface HistoryLogsUnderTest {
  eventLog: Pick<EventLog, 'record' | 'head' | 'read' | 'readBack'>;
  accountLog: Pick<AccountLog, 'record' | 'newest'>;
}

const minute = (n: number) => new Date(Date.UTC(2026, 2, 2, 10, n));
const event = (n: number): OutboxEvent => ({
  id: randomUUID(),
  type: 'thread.message',
  at: minute(n),
  by: 'sam@acme',
  via: 'api',
});

export function historyLogsContract(name: string, subject: () => HistoryLogsUnderTest): void {
  describe(`history logs contract: ${name}`, () => {
    const handle = () => `h${randomUUID().slice(0, 8)}@acme`;

    test('the event log reads back newest first below a position, each event once, and says where it started', async () => {
      const { eventLog } = subject();
      const who = handle();
      const events = [1, 2, 3, 4, 5].map(event);
      for (const e of events) await eventLog.record(who, 'thread-1', e);
      await eventLog.record(who, 'thread-1', events[0]!);
      const first = await eventLog.readBack(who, null, 2);
      expect(first.events.map((e) => [e.seq, e.event.id])).toEqual([
        [5, events[4]!.id],
        [4, events[3]!.id],
      ]);
      expect(first.lowest).toBe(4);
      const rest = await eventLog.readBack(who, first.lowest, 10);
      expect(rest.events.map((e) => e.seq)).toEqual([3, 2, 1]);
      expect(rest.lowest).toBe(1);
      expect(await eventLog.readBack(handle(), null, 10)).toEqual({ events: [], lowest: 1 });
    });

    test('the event log reads forward after a cursor, oldest first, and says where to read next; head is its last', async () => {
      const { eventLog } = subject();
      const who = handle();
      expect(await eventLog.head(who)).toBe(0);
      expect(await eventLog.read(who, 0, 10)).toEqual({ events: [], cursor: 0 });
      const events = [1, 2, 3].map(event);
      for (const e of events) await eventLog.record(who, 'thread-2', e);
      expect(await eventLog.head(who)).toBe(3);
      const page = await eventLog.read(who, 0, 2);
      expect(page.events.map((e) => [e.seq, e.thread_id, e.event.id])).toEqual([
        [1, 'thread-2', events[0]!.id],
        [2, 'thread-2', events[1]!.id],
      ]);
      expect(page.events[0]!.event).toEqual(events[0]);
      expect(page.cursor).toBe(2);
      expect((await eventLog.read(who, page.cursor, 10)).events.map((e) => e.seq)).toEqual([3]);
      expect(await eventLog.read(who, 3, 10)).toEqual({ events: [], cursor: 3 });
    });

    test("the account log answers a teammate's entries newest first before an id, never another's", async () => {
      const { accountLog } = subject();
      const who = handle();
      const entry = (n: number, h = who) => ({
        handle: h,
        at: minute(n),
        actor: h,
        action: `key.rotated.${n}`,
        resource_type: 'agent',
        resource_id: h,
        via: 'api',
      });
      await accountLog.record([entry(1), entry(2), entry(3), entry(9, `x${who}`)]);
      const newest = await accountLog.newest(who, null, 2);
      expect(newest.map((e) => e.action)).toEqual(['key.rotated.3', 'key.rotated.2']);
      expect((await accountLog.newest(who, newest[1]!._id, 10)).map((e) => e.action)).toEqual(['key.rotated.1']);
      // A cursor pinned at a time answers what came before it only.
      expect((await accountLog.newest(who, `${who}|${minute(2).toISOString()}`, 10)).map((e) => e.action)).toEqual([
        'key.rotated.1',
      ]);
    });
  });
}
