// A teammate's own history (relay-core/service/audit-trail.ts, GET /agents/me/audit) on the in-memory thread event
// log and account log: both merged newest first, a page at a time, every event once across the cursors, entries
// written while the pages are walked not shifting them; a cursor the relay did not give is refused. Over HTTP:
// test/integration/audit-trail.test.ts.
import { randomUUID } from 'node:crypto';
import type { OutboxEvent } from '../../relay-core/domain/documents';
import { AuditTrail, type AuditPage } from '../../relay-core/service/audit-trail';
import { InMemoryAccountLog, InMemoryEventLog } from '../fakes/in-memory-history';
import { NOW } from '../fakes/use-case-ports';
import { refusal } from '../helpers/refusal';

const minute = (n: number) => new Date(NOW.getTime() + n * 60_000);
const rita = 'rita@acme';

function setup() {
  const eventLog = new InMemoryEventLog();
  const accountLog = new InMemoryAccountLog();
  const clock = { at: minute(100).getTime(), now: () => new Date(clock.at) };
  const trail = new AuditTrail({ store: { eventLog, accountLog }, clock });
  const threadEvent = async (n: number, over: Partial<OutboxEvent> = {}) =>
    eventLog.record(rita, 'thread-1', {
      id: randomUUID(),
      type: 'thread.accepted',
      at: minute(n),
      by: rita,
      via: 'slack',
      ...over,
    });
  const accountEvent = (n: number) =>
    accountLog.record([
      {
        handle: rita,
        at: minute(n),
        actor: 'admin',
        action: 'key.rotated',
        resource_type: 'agent',
        resource_id: rita,
        via: 'api',
      },
    ]);
  /** Every page from the first, as a client walks them. */
  const walk = async (limit: number) => {
    const pages: AuditPage[] = [];
    let cursor: string | undefined;
    do {
      const page = await trail.page(rita, cursor, limit);
      pages.push(page);
      cursor = page.next_cursor ?? undefined;
    } while (cursor && pages.length < 20);
    return pages;
  };
  return { trail, clock, threadEvent, accountEvent, walk };
}

test('both histories merged newest first, each event as the person reads it', async () => {
  const { trail, threadEvent, accountEvent } = setup();
  await threadEvent(1);
  await accountEvent(2);
  await threadEvent(3, { type: 'thread.message', message_id: 'm-1' });
  const page = await trail.page(rita, undefined, 10);
  expect(page).toEqual({
    events: [
      {
        timestamp: minute(3).toISOString(),
        actor_handle: rita,
        action: 'thread.message',
        resource_type: 'message',
        resource_id: 'm-1',
        via: 'slack',
        thread_id: 'thread-1',
      },
      {
        timestamp: minute(2).toISOString(),
        actor_handle: 'admin',
        action: 'key.rotated',
        resource_type: 'agent',
        resource_id: rita,
        via: 'api',
      },
      expect.objectContaining({ action: 'thread.accepted', resource_type: 'thread', resource_id: 'thread-1' }),
    ],
    next_cursor: null,
  });
});

test('walking the pages yields every event once, in order', async () => {
  const { threadEvent, accountEvent, walk } = setup();
  for (let n = 1; n <= 7; n += 1) await (n % 3 === 0 ? accountEvent(n) : threadEvent(n));
  const pages = await walk(2);
  const seen = pages.flatMap((p) => p.events.map((e) => e.timestamp));
  expect(seen).toEqual([7, 6, 5, 4, 3, 2, 1].map((n) => minute(n).toISOString()));
  expect(pages.at(-1)!.next_cursor).toBeNull();
  expect(pages.slice(0, -1).every((p) => p.events.length === 2)).toBe(true);
});

test('entries written while a client walks the pages do not shift them', async () => {
  const { trail, threadEvent, accountEvent, clock } = setup();
  for (let n = 1; n <= 4; n += 1) await (n % 2 ? threadEvent(n) : accountEvent(n));
  const first = await trail.page(rita, undefined, 2);
  clock.at = minute(200).getTime();
  await threadEvent(150);
  await accountEvent(150);
  const second = await trail.page(rita, first.next_cursor!, 2);
  expect([...first.events, ...second.events].map((e) => e.timestamp)).toEqual(
    [4, 3, 2, 1].map((n) => minute(n).toISOString()),
  );
});

test('no history: an empty page and no cursor', async () => {
  const { trail } = setup();
  expect(await trail.page(rita, undefined, 10)).toEqual({ events: [], next_cursor: null });
});

test('a cursor the relay did not give is invalid_params, saying what to pass', async () => {
  const { trail } = setup();
  for (const cursor of ['forged', Buffer.from(JSON.stringify({ t: -1, a: 'x' })).toString('base64url')])
    expect(await refusal(trail.page(rita, cursor, 10))).toMatchObject({
      code: 'invalid_params',
      message: 'query.cursor: not a cursor this relay gave (pass next_cursor from the previous page)',
      details: { field: 'cursor' },
    });
});
