// The event feed (relay-core/service/event-feed.ts) on the in-memory event log (test/fakes/in-memory-history.ts, which
// passes the log's contract with the real one): each event reaches the logs of those who may hear of it — sender,
// recipient, an unclaimed handoff's candidates, not yet the recipient of a held create — and wakes their readers; a
// reader starts at a cursor it was given (a clear error for any other) and waits for the next event, for a hint, or
// for its time to run out. The publisher in front of the queues logs every event, marks what it need not queue, and
// throws when a log write failed (the outbox sweep records it again). Over HTTP and Redis: test/integration/events*.
import pino from 'pino';
import type { OutboxEvent } from '../../relay-core/domain/documents';
import { RelayError } from '../../relay-core/domain/errors';
import { EVENT_LOGS, EventFeed, LocalWakeups, RecordingEventPublisher } from '../../relay-core/service/event-feed';
import type { EventJobState, EventPublisher, EventThread } from '../../relay-core/service/event-publisher';
import { jobKey } from '../../relay-core/store/outbox-ledger';
import { InMemoryEventLog } from '../fakes/in-memory-history';

const AT = new Date('2026-03-02T10:00:00Z');
let eventNo = 0;
const event = (type: string, over: Partial<OutboxEvent> = {}): OutboxEvent =>
  ({ id: `e${(eventNo += 1)}`, type, at: AT, by: 'sam@acme', via: 'mcp', ...over }) as OutboxEvent;
const thread = (over: Partial<EventThread> = {}): EventThread => ({
  _id: 't1',
  from: 'sam@acme',
  to: 'rita@acme',
  ...over,
});

function setup() {
  const eventLog = new InMemoryEventLog();
  const wakeups = new LocalWakeups();
  const woken: string[] = [];
  const notify = wakeups.notify.bind(wakeups);
  wakeups.notify = (handles) => {
    woken.push(...handles);
    notify(handles);
  };
  const feed = new EventFeed({ store: { eventLog }, wakeups, log: pino({ level: 'silent' }), pollMs: 60_000 });
  const types = async (handle: string) => (await feed.read(handle, '0', 50)).events.map((e) => e.type);
  return { eventLog, wakeups, woken, feed, types };
}

describe('recording', () => {
  test("each event reaches its sender's and its recipient's logs once, as readers get it, and wakes them", async () => {
    const { feed, woken, types, eventLog } = setup();
    const created = event('thread.created', { message_id: 'm1' } as Partial<OutboxEvent>);
    await feed.record(thread(), [created, event('thread.accepted')]);
    await feed.record(thread(), [created]);
    expect(await types('sam@acme')).toEqual(['thread.created', 'thread.accepted']);
    expect(await types('rita@acme')).toEqual(['thread.created', 'thread.accepted']);
    expect((await feed.read('rita@acme', '0', 1)).events).toEqual([
      {
        cursor: '1',
        event_id: created.id,
        thread_id: 't1',
        type: 'thread.created',
        at: AT.toISOString(),
        by: 'sam@acme',
        via: 'mcp',
        message_id: 'm1',
      },
    ]);
    expect(woken).toEqual(['sam@acme', 'rita@acme', 'sam@acme', 'rita@acme']);
    expect(await eventLog.head('nobody@acme')).toBe(0);
  });

  test("an unclaimed handoff's candidates hear of its creation only; a held create's recipient of nothing", async () => {
    const { feed, types } = setup();
    const unclaimed = thread({ to: 'role:frontend', candidates: ['ana@acme', 'bo@acme'] });
    await feed.record(unclaimed, [event('thread.created'), event('thread.message')]);
    expect(await types('sam@acme')).toEqual(['thread.created', 'thread.message']);
    expect(await types('ana@acme')).toEqual(['thread.created']);
    expect(await types('bo@acme')).toEqual(['thread.created']);
    expect(await types('role:frontend')).toEqual([]);

    await feed.record(thread({ _id: 't2', hidden_from_recipient: true } as Partial<EventThread>), [
      event('approval.requested'),
    ]);
    expect(await types('rita@acme')).toEqual([]);
  });

  test('a log that fails throws (the job retries); the logs that took their events are still woken', async () => {
    const { feed, woken, eventLog, types } = setup();
    const record = eventLog.record.bind(eventLog);
    eventLog.record = async (handle, threadId, e) => {
      if (handle === 'rita@acme') throw new Error('database unreachable');
      return record(handle, threadId, e);
    };
    await expect(feed.record(thread(), [event('thread.message')])).rejects.toThrow('database unreachable');
    expect(await types('sam@acme')).toEqual(['thread.message']);
    expect(woken).toEqual(['sam@acme']);
  });
});

describe('reading', () => {
  test('a reader starts at a cursor this log gave, or at its head; any other cursor is a clear error', async () => {
    const { feed } = setup();
    await feed.record(thread(), [event('thread.created'), event('thread.accepted')]);
    expect(await feed.start('rita@acme', undefined, 'since')).toBe('2');
    expect(await feed.start('rita@acme', '1', 'since')).toBe('1');
    expect(await feed.start('rita@acme', '0', 'since')).toBe('0');
    const refused = (since: string) =>
      feed.start('rita@acme', since, 'params.since').then(
        () => null,
        (e: RelayError) => e,
      );
    expect(await refused('01')).toMatchObject({
      code: 'invalid_params',
      message: 'params.since: must be a cursor from this relay (a whole number, as an event id or `cursor` gave it)',
    });
    expect((await refused('abc'))?.message).toMatch(/^params\.since: must be a cursor/);
    expect(await refused('3')).toMatchObject({
      code: 'invalid_params',
      message:
        'params.since: cursor 3 is past the end of your events (the latest is 2); use a cursor this relay gave you',
    });
  });

  test('a log that cannot be read is unavailable, with a retry hint', async () => {
    const { feed, eventLog } = setup();
    eventLog.head = async () => {
      throw new Error('connection refused');
    };
    await expect(feed.start('rita@acme', undefined, 'since')).rejects.toMatchObject({
      code: 'unavailable',
      message: 'The relay cannot read your events right now (its database is unreachable); retry shortly',
    });
  });

  test('a wait answers at once when events are there, and a page at a time', async () => {
    const { feed } = setup();
    await feed.record(thread(), [event('thread.created'), event('thread.accepted'), event('thread.completed')]);
    const page = await feed.wait('rita@acme', '0', 2, 60_000);
    expect(page.events.map((e) => e.cursor)).toEqual(['1', '2']);
    expect(page.cursor).toBe('2');
    expect((await feed.wait('rita@acme', page.cursor, 2, 60_000)).events.map((e) => e.type)).toEqual([
      'thread.completed',
    ]);
  });

  test('a waiting reader gets the next event when its log is told it grew, not at the next poll', async () => {
    const { feed } = setup();
    const waiting = feed.wait('rita@acme', '0', 10, 60_000);
    await feed.record(thread(), [event('thread.message')]);
    const page = await waiting;
    expect(page).toMatchObject({ cursor: '1', events: [{ type: 'thread.message', cursor: '1' }] });
  });

  test('a wait with nothing new ends with an empty page at the same cursor: when its time is up, or when aborted', async () => {
    const { feed } = setup();
    await feed.record(thread(), [event('thread.created')]);
    expect(await feed.wait('rita@acme', '1', 10, 0)).toEqual({ events: [], cursor: '1' });
    const abort = new AbortController();
    const waiting = feed.wait('rita@acme', '1', 10, 60_000, abort.signal);
    // A hint for someone else does not end it.
    await feed.record(thread({ _id: 't2', from: 'ana@acme', to: 'bo@acme' }), [event('thread.created')]);
    abort.abort();
    expect(await waiting).toEqual({ events: [], cursor: '1' });
  });
});

describe('the publisher in front of the queues', () => {
  function publisherSetup(opts: { hears?: (e: OutboxEvent) => boolean; logFails?: boolean } = {}) {
    const { feed, types, eventLog } = setup();
    if (opts.logFails)
      eventLog.record = async () => {
        throw new Error('database unreachable');
      };
    const queued: Array<{ event: string; skip: string[] }> = [];
    const finished: string[] = [];
    const indexed: unknown[] = [];
    const inner: EventPublisher = {
      queues: ['slack', 'webhooks'],
      publish: async (_thread, events, skip) => {
        for (const e of events) queued.push({ event: e.id, skip: [...(skip ?? [])].sort() });
      },
      jobStates: async (_id, queues) => queues.map((q): EventJobState => (q === 'slack' ? 'finished' : 'queued')),
    };
    const publisher = new RecordingEventPublisher({
      inner,
      feed,
      search: { index: async (change) => void indexed.push(change) },
      hears: async (_thread, e) => opts.hears?.(e) ?? true,
      finished: (threadId, queue, eventId) => void finished.push(`${threadId} ${queue} ${eventId}`),
    });
    return { publisher, queued, finished, indexed, types };
  }

  test('every event is logged and its words indexed as the request that wrote it publishes it, then queued', async () => {
    const { publisher, queued, finished, indexed, types } = publisherSetup();
    const e = event('thread.message', { message_id: 'm3' } as Partial<OutboxEvent>);
    await publisher.publish({ ...thread(), version: 4 }, [e]);
    expect(publisher.queues).toEqual([EVENT_LOGS, 'slack', 'webhooks']);
    expect(await types('rita@acme')).toEqual(['thread.message']);
    expect(indexed).toEqual([{ type: 'thread.message', thread_id: 't1', message_id: 'm3', version: 4 }]);
    expect(finished).toEqual([`t1 ${EVENT_LOGS} ${e.id}`]);
    expect(queued).toEqual([{ event: e.id, skip: [] }]);
    // The log entries are always written again by a sweep's publish (twice is once); the queues answer for theirs.
    expect(await publisher.jobStates(e.id, [EVENT_LOGS, 'slack', 'webhooks'])).toEqual([
      'missing',
      'finished',
      'queued',
    ]);
  });

  test('an event nobody hears of by webhook or push costs no webhooks job: it is marked finished instead', async () => {
    const { publisher, queued, finished } = publisherSetup({ hears: (e) => e.type === 'thread.completed' });
    const [message, completed] = [event('thread.message'), event('thread.completed')];
    await publisher.publish(thread(), [message, completed], new Set(['slack:earlier']));
    expect(queued).toEqual([
      { event: message.id, skip: [jobKey('webhooks', message.id), 'slack:earlier'].sort() },
      { event: completed.id, skip: [jobKey('webhooks', message.id), 'slack:earlier'].sort() },
    ]);
    expect(finished).toContain(`t1 webhooks ${message.id}`);
    expect(finished).not.toContain(`t1 webhooks ${completed.id}`);
  });

  test('a log write that fails leaves the log pending and throws after queueing (the sweep records it again)', async () => {
    const { publisher, queued, finished } = publisherSetup({ logFails: true });
    const e = event('thread.message');
    await expect(publisher.publish(thread(), [e])).rejects.toThrow('database unreachable');
    expect(queued).toEqual([{ event: e.id, skip: [] }]);
    expect(finished).toEqual([]);
  });
});
