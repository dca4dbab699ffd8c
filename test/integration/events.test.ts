// GET /events: each teammate's own events of its threads, in order, as a JSON long poll and as Server-Sent Events,
// resumable from any cursor, recorded once however often the outbox publishes an event.
import { randomUUID } from 'node:crypto';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { sendHandoff, text } from '../helpers/handoffs';
import { SseStream } from '../helpers/sse-client';
import { waitUntil } from '../helpers/wait-until';
import { EventLog } from '../../relay-core/store/event-log';

let relay: TestRelay;
let alice: string;
let bob: string;
let carol: string;
const streams: SseStream[] = [];

beforeAll(async () => {
  relay = await startTestRelay({ name: 'events' });
  [alice, bob, carol] = await Promise.all(
    ['alice@acme', 'bob@acme', 'carol@acme'].map((handle) => relay.register({ handle })),
  );
});

afterAll(async () => {
  for (const s of streams) s.close();
  await relay?.stop();
});

async function poll(key: string, query: string): Promise<{ status: number; body: any }> {
  const response = await fetch(`${relay.url}/events${query}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: response.status, body: await response.json() };
}

/** The events after `since` once there are `count` of them (a long poll answers at the first; more may follow). */
async function eventsAfter(key: string, since: string, count: number): Promise<{ status: number; body: any }> {
  return waitUntil(async () => {
    const answer = await poll(key, `?since=${since}`);
    return answer.body.events?.length >= count ? answer : null;
  }, `${count} events after cursor ${since}`);
}

async function open(key: string, query = '', headers: Record<string, string> = {}): Promise<SseStream> {
  const stream = await SseStream.open(`${relay.url}/events${query}`, {
    headers: { authorization: `Bearer ${key}`, ...headers },
  });
  streams.push(stream);
  return stream;
}

/** A handoff from alice to bob that bob accepts, both write to, and bob completes: five events each. */
async function wholeHandoff(summary: string): Promise<string> {
  const id = await sendHandoff(relay, alice, 'bob@acme', summary);
  expect((await relay.rpc(bob, 'tasks/update', { task_id: id, transition: 'accept' })).body.result.status).toBe(
    'accepted',
  );
  expect(
    (await relay.rpc(alice, 'message/send', { task_id: id, message: text('one more thing') })).body.result.sequence_no,
  ).toBe(1);
  expect((await relay.rpc(bob, 'message/send', { task_id: id, message: text('on it') })).body.result.sequence_no).toBe(
    2,
  );
  expect(
    (await relay.rpc(bob, 'tasks/update', { task_id: id, transition: 'complete', result_summary: 'done' })).body.result
      .status,
  ).toBe('completed');
  return id;
}

const LIFECYCLE = ['thread.created', 'thread.accepted', 'thread.message', 'thread.message', 'thread.completed'];

test('each participant reads every event of the thread in order, with the outbox event fields; an outsider reads none', async () => {
  const start = {
    alice: (await poll(alice, '')).body.cursor,
    bob: (await poll(bob, '')).body.cursor,
    carol: (await poll(carol, '')).body.cursor,
  };
  const id = await wholeHandoff('in order');

  for (const [key, name] of [
    [alice, 'alice'],
    [bob, 'bob'],
  ] as const) {
    const { status, body } = await eventsAfter(key, start[name], LIFECYCLE.length);
    expect(status).toBe(200);
    expect(body.events.map((e: any) => e.type)).toEqual(LIFECYCLE);
    expect(body.events.every((e: any) => e.thread_id === id)).toBe(true);
    expect(body.events.map((e: any) => e.by)).toEqual(['alice@acme', 'bob@acme', 'alice@acme', 'bob@acme', 'bob@acme']);
    const cursors = body.events.map((e: any) => Number(e.cursor));
    expect(cursors).toEqual([...cursors].sort((a, b) => a - b));
    expect(new Set(cursors).size).toBe(5);
    expect(body.cursor).toBe(body.events[4].cursor);
    // Every field the outbox event carries, by name: event_id, at, via, message_id for messages.
    expect(body.events[0]).toEqual({
      cursor: expect.any(String),
      event_id: expect.any(String),
      type: 'thread.created',
      thread_id: id,
      at: expect.any(String),
      by: 'alice@acme',
      via: 'a2a',
    });
    expect(body.events[2].message_id).toEqual(expect.any(String));
    // Reading from the end gives nothing new and keeps the cursor.
    expect((await poll(key, `?since=${body.cursor}`)).body).toEqual({ events: [], cursor: body.cursor });
  }
  expect((await poll(carol, `?since=${start.carol}`)).body).toEqual({ events: [], cursor: start.carol });

  const thread = await relay.store.threads.findOne({ _id: id });
  const bobs = (await poll(bob, `?since=${start.bob}`)).body.events;
  expect(bobs.map((e: any) => e.event_id)).toEqual(thread!.outbox.map((e) => e.id));
});

test('a long poll answers as soon as an event comes; with nothing new it ends empty with the same cursor', async () => {
  const { cursor } = (await poll(bob, '')).body;
  const waiting = poll(bob, `?since=${cursor}&wait=30`);
  const started = Date.now();
  const id = await sendHandoff(relay, alice, 'bob@acme', 'wake me');
  const { status, body } = await waiting;
  expect(status).toBe(200);
  expect(body.events.map((e: any) => [e.type, e.thread_id])).toEqual([['thread.created', id]]);
  expect(Date.now() - started).toBeLessThan(30_000);

  const empty = await poll(bob, `?since=${body.cursor}&wait=1`);
  expect(empty).toEqual({ status: 200, body: { events: [], cursor: body.cursor } });
  // Without since it starts from now: the handoff above is not in it.
  expect((await poll(bob, '?wait=1')).body).toEqual({ events: [], cursor: body.cursor });
});

test('a stream sends the events after since with their cursors as ids, then new ones live; Last-Event-ID resumes after the last one read', async () => {
  const { cursor } = (await poll(alice, '')).body;
  const first = await sendHandoff(relay, alice, 'bob@acme', 'streamed 1');
  const stream = await open(alice, `?since=${cursor}`);
  expect(stream.status).toBe(200);
  await waitUntil(async () => stream.events.length > 0, 'the ready event');
  expect(stream.events[0]).toEqual({ id: cursor, event: 'ready', data: JSON.stringify({ cursor }) });
  const [created] = await stream.waitFor(1, 'the first handoff');
  expect(created).toMatchObject({ event: 'thread.created', id: JSON.parse(created!.data).cursor });
  expect(JSON.parse(created!.data).thread_id).toBe(first);

  await relay.rpc(bob, 'tasks/update', { task_id: first, transition: 'accept' });
  const live = await stream.waitFor(2, 'the accept, live');
  expect(live.map((e) => e.event)).toEqual(['thread.created', 'thread.accepted']);
  stream.close();

  // Missed while disconnected: a decline elsewhere and a cancel. The reconnect (with since still in its URL) resumes.
  const second = await sendHandoff(relay, alice, 'bob@acme', 'streamed 2');
  await relay.rpc(alice, 'tasks/cancel', { task_id: first });
  const resumed = await open(alice, `?since=${cursor}`, { 'last-event-id': live[1]!.id! });
  const after = await resumed.waitFor(2, 'the events missed');
  expect(after.map((e) => [e.event, JSON.parse(e.data).thread_id])).toEqual([
    ['thread.created', second],
    ['thread.cancelled', first],
  ]);
  expect(Number(after[0]!.id)).toBe(Number(live[1]!.id) + 1);
  resumed.close();

  // And since alone, from the start: the whole sequence again, identically.
  const again = await open(alice, `?since=${cursor}`);
  const all = await again.waitFor(4, 'everything since the cursor');
  expect(all.map((e) => e.id)).toEqual([...live, ...after].map((e) => e.id));
  expect(all.map((e) => e.data)).toEqual([...live, ...after].map((e) => e.data));
  again.close();
});

test('bad cursors and waits are invalid_params (400), naming the field; no key is 401', async () => {
  const cases: Array<[string, Record<string, string>, string]> = [
    ['?since=abc', {}, 'query.since: must be a cursor'],
    ['?since=-1', {}, 'query.since: must be a cursor'],
    ['?since=99999999', {}, 'query.since: cursor 99999999 is past the end of your events'],
    ['?wait=61', {}, 'query.wait: must be at most 60 seconds'],
    ['?wait=1.5', {}, 'query.wait: must be a whole number of seconds'],
    ['?limit=0', {}, 'query.limit: must be at least 1'],
    ['?since=1&since=2', {}, 'query.since'],
    ['?sinse=1', {}, 'query'],
  ];
  for (const [query, headers, message] of cases) {
    const response = await fetch(`${relay.url}/events${query}`, {
      headers: { authorization: `Bearer ${alice}`, ...headers },
    });
    const body = (await response.json()) as any;
    expect([query, response.status, body.code]).toEqual([query, 400, 'invalid_params']);
    expect(body.message).toContain(message);
  }
  const badResume = await SseStream.open(`${relay.url}/events`, {
    headers: { authorization: `Bearer ${alice}`, 'last-event-id': 'x1' },
  });
  expect(badResume.status).toBe(400);
  expect(JSON.parse(String(badResume.error))).toMatchObject({
    code: 'invalid_params',
    message: expect.stringContaining('header.last-event-id'),
  });
  expect((await fetch(`${relay.url}/events`)).status).toBe(401);
});

test('the same event recorded twice, even by two processes at once, is in the log once', async () => {
  const bobAt = (await poll(bob, '')).body.cursor;
  const id = await sendHandoff(relay, alice, 'bob@acme', 'twice');
  await eventsAfter(bob, bobAt, 1);
  const thread = await relay.store.threads.findOne({ _id: id });
  const event = {
    id: randomUUID(),
    type: 'thread.message' as const,
    at: new Date(),
    by: 'alice@acme',
    via: 'a2a' as const,
    message_id: randomUUID(),
  };
  const { cursor } = (await poll(carol, '')).body;
  // Two logs over the same collections stand for two relay processes recording the same outbox event.
  const [one, two] = [new EventLog(relay.store.db), new EventLog(relay.store.db)];
  const seqs = await Promise.all([
    one.record('carol@acme', thread!._id, event),
    two.record('carol@acme', thread!._id, event),
    one.record('carol@acme', thread!._id, event),
  ]);
  expect(new Set(seqs).size).toBe(1);
  const { body } = await poll(carol, `?since=${cursor}`);
  expect(body.events.map((e: any) => e.event_id)).toEqual([event.id]);
  // The outbox publishing the same thread's events again (the sweep after a lost answer) adds nothing either.
  const before = (await poll(bob, '')).body.cursor;
  await Promise.all(thread!.outbox.map((e) => one.record('bob@acme', id, e)));
  expect((await poll(bob, `?since=${before}`)).body.events).toEqual([]);
});

test('stopping the relay ends its open streams and long polls instead of waiting for their clients', async () => {
  const other = await startTestRelay({ name: 'events_stop' });
  const key = await other.register({ handle: 'dave@acme' });
  const stream = await SseStream.open(`${other.url}/events`, { headers: { authorization: `Bearer ${key}` } });
  await waitUntil(async () => stream.events.length > 0, 'the ready event');
  const poll = fetch(`${other.url}/events?wait=60`, { headers: { authorization: `Bearer ${key}` } }).then(
    async (r) => ({ status: r.status, body: await r.json() }),
  );
  // The stream and the poll both held by the relay (its own gauge says so), then the stop.
  const open = async () => {
    const metrics = await fetch(`${other.url}/metrics`, {
      headers: { authorization: `Bearer ${other.adminKey}` },
    }).then((r) => r.text());
    return Number(/^relay_event_streams_open (\d+)$/m.exec(metrics)?.[1] ?? 0);
  };
  await waitUntil(async () => (await open()) === 2, 'the stream and the poll to be open');
  // The stop returns without waiting for the poll's 60 s or for the clients to hang up (the test would time out).
  await other.stop();
  await stream.waitEnded();
  expect(await poll).toEqual({ status: 200, body: { events: [], cursor: '0' } });
});
