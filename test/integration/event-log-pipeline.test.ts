// A busy teammate's event log on the real store: events recorded together each get one position, in the order they
// were recorded, and are read back once each; the events that wait for the log's previous insert go in one insert
// together (a burst costs a few round trips, not one an event); two processes recording into one log at once fill
// it with no gap and no event twice; the same event recorded twice at once, or again later, is read once.
import { randomUUID } from 'node:crypto';
import type { CommandStartedEvent } from 'mongodb';
import type { OutboxEvent } from '../../relay-core/domain/documents';
import { EventLog, eventEntryId } from '../../relay-core/store/event-log';
import { MongoStore } from '../../relay-core/store/mongo-store';
import { migrateStore } from '../../relay-core/store/migrate';
import { testMongoUrl, uniqueName } from '../helpers/test-env';

let store: MongoStore;

beforeAll(async () => {
  store = await MongoStore.connect(testMongoUrl(), uniqueName('event_log_pipeline'), { monitorCommands: true });
  await store.ensureIndexes();
});

afterAll(async () => {
  await store?.db.dropDatabase();
  await store?.close();
});

const event = (): OutboxEvent => ({
  id: randomUUID(),
  type: 'thread.created',
  at: new Date(),
  by: 'alice@acme',
  via: 'api',
});

/** The inserts into the log as the server saw them start and finish, in order. */
async function timeline<T>(work: () => Promise<T>): Promise<{ result: T; steps: string[] }> {
  const steps: string[] = [];
  const kinds = new Map<number, string>();
  const started = (e: CommandStartedEvent) => {
    const collection = e.command.insert;
    if (e.commandName !== 'insert' || collection !== 'event_log') return;
    kinds.set(e.requestId, collection);
    steps.push(`start ${collection}`);
  };
  const ended = (e: { requestId: number }) => {
    const collection = kinds.get(e.requestId);
    if (collection) steps.push(`end ${collection}`);
  };
  store.db.client.on('commandStarted', started);
  store.db.client.on('commandSucceeded', ended);
  try {
    return { result: await work(), steps };
  } finally {
    store.db.client.off('commandStarted', started);
    store.db.client.off('commandSucceeded', ended);
  }
}

test('30 events recorded at once into one log take positions 1–30 in order in a few inserts, and are read back once each', async () => {
  const handle = 'busy@acme';
  const events = Array.from({ length: 30 }, event);
  const { result: positions, steps } = await timeline(() =>
    Promise.all(events.map((e, i) => store.eventLog.record(handle, `thread-${i}`, e))),
  );
  expect(positions).toEqual(events.map((_, i) => i + 1));
  // Before, each entry waited for the previous one's insert: 30 events were 30 inserts, one round trip each.
  expect(steps.filter((step) => step === 'start event_log').length).toBeLessThanOrEqual(3);
  const read = await store.eventLog.read(handle, 0, 100);
  expect(read.events.map((e) => e.event.id)).toEqual(events.map((e) => e.id));
  expect(read.cursor).toBe(30);
});

test('two processes recording 40 events each into one log at once fill positions 1–80 with no gap, each event once', async () => {
  const handle = 'shared@acme';
  const other = new EventLog(store.db);
  const ours = Array.from({ length: 40 }, event);
  const theirs = Array.from({ length: 40 }, event);
  const recorded = await Promise.all([
    ...ours.map((e, i) => store.eventLog.record(handle, `ours-${i}`, e)),
    ...theirs.map((e, i) => other.record(handle, `theirs-${i}`, e)),
  ]);
  expect([...recorded].sort((a, b) => a - b)).toEqual(Array.from({ length: 80 }, (_, i) => i + 1));
  // Each process's events keep the order it recorded them in.
  const increasing = (xs: number[]) => xs.every((x, i) => i === 0 || x > xs[i - 1]!);
  expect(increasing(recorded.slice(0, 40))).toBe(true);
  expect(increasing(recorded.slice(40))).toBe(true);
  const read = await store.eventLog.read(handle, 0, 200);
  expect(read.cursor).toBe(80);
  expect(read.events.map((e) => e.event.id).sort()).toEqual([...ours, ...theirs].map((e) => e.id).sort());
});

test('an insert that meets positions another process took lands what came before them and places the rest after them', async () => {
  const handle = 'raced@acme';
  const [first, ...burst] = Array.from({ length: 5 }, event);
  await store.eventLog.record(handle, 'thread-0', first!); // this process now knows the log ends at 1
  // Meanwhile another process placed two events at 4 and 5, unknown to this one.
  const foreign = [event(), event()];
  await store.eventLog.entries.insertMany(
    foreign.map((e, i) => ({
      _id: eventEntryId(handle, 4 + i),
      handle,
      seq: 4 + i,
      thread_id: 'elsewhere',
      event_id: e.id,
      event: e,
      recorded_at: new Date(),
    })),
  );
  // The first goes alone (2); the three that waited go in one ordered insert at 3–5: 3 lands, 4 is taken, so the
  // last two are placed after the head (6, 7).
  const positions = await Promise.all(burst.map((e, i) => store.eventLog.record(handle, `thread-${i + 1}`, e)));
  expect(positions).toEqual([2, 3, 6, 7]);
  const read = await store.eventLog.read(handle, 0, 100);
  expect(read.events.map((e) => e.event.id)).toEqual(
    [first!, burst[0]!, burst[1]!, ...foreign, burst[2]!, burst[3]!].map((e) => e.id),
  );
  expect(read.cursor).toBe(7);
});

test('the same event recorded twice at once has one position that both calls answer, and is read once', async () => {
  const handle = 'twice@acme';
  const first = event();
  await store.eventLog.record(handle, 'thread-a', first);
  const again = event();
  const [a, b] = await Promise.all([
    store.eventLog.record(handle, 'thread-b', again),
    store.eventLog.record(handle, 'thread-b', again),
  ]);
  expect(a).toBe(b);
  const read = await store.eventLog.read(handle, 0, 100);
  expect(read.events.map((e) => e.event.id)).toEqual([first.id, again.id]);
  expect(read.cursor).toBe(2);
});

test('an event recorded again later (a re-run job) keeps its first position; a new one goes after it', async () => {
  const handle = 'rerun@acme';
  const [first, second] = [event(), event()];
  expect(await store.eventLog.record(handle, 'thread-a', first!)).toBe(1);
  expect(await new EventLog(store.db).record(handle, 'thread-a', first!)).toBe(1);
  expect(await store.eventLog.record(handle, 'thread-b', second!)).toBe(2);
  const read = await store.eventLog.read(handle, 0, 100);
  expect(read.events.map((e) => e.event.id)).toEqual([first!.id, second!.id]);
  expect(read.cursor).toBe(2);
});

test('a database written by layout 3 migrates: each event once where its mark put it, new events after the head, its open approvals marked', async () => {
  const old = await MongoStore.connect(testMongoUrl(), uniqueName('event_log_layout3'));
  try {
    const handle = 'layout3@acme';
    const events = [event(), event(), event()];
    // Layout 3: entry 2 holds the third event again (two recorders raced; its mark names 3), entry 4 the first
    // event again (its recorder died before the mark), and no entry has an event_id.
    const placed = [events[0]!, events[2]!, events[2]!, events[0]!, events[1]!];
    await old.eventLog.entries.insertMany(
      placed.map((e, i) => ({
        _id: eventEntryId(handle, i + 1),
        handle,
        seq: i + 1,
        thread_id: 'old',
        event: e,
        recorded_at: new Date(),
      })) as never[],
    );
    await old.db.collection('event_marks').insertMany([
      { _id: `${handle}|${events[0]!.id}` as never, seq: 1 },
      { _id: `${handle}|${events[2]!.id}` as never, seq: 3 },
      { _id: `${handle}|${events[1]!.id}` as never, seq: 5 },
    ]);
    await old.db.collection('event_heads').insertOne({ _id: handle as never, n: 5 });
    // And its open approvals in a collection of their own: one open, one decided.
    const approval = (id: string, status: string) => ({
      _id: id,
      thread_id: 't',
      status,
      action: 'handoff.create',
      actor: 'a@acme',
      approvers: [],
      created_at: new Date(),
      deadline: new Date(),
    });
    await old.approvals.insertMany([approval('open-1', 'pending'), approval('done-1', 'rejected')] as never[]);
    await old.db
      .collection('approvals_open')
      .insertOne({ _id: 'open-1' as never, thread_id: 't', created_at: new Date() });
    await old.meta.insertOne({ _id: 'schema', value: 3, at: new Date() });
    await old.meta.insertOne({ _id: 'open_approvals_placed', value: true, at: new Date() });
    const lines: string[] = [];
    await migrateStore(old, (line) => lines.push(line));
    await old.ensureIndexes();
    expect(lines).toContain('migrate: 5 event log entries settled');
    const collections = (await old.db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name);
    expect(collections).not.toContain('event_marks');
    expect(collections).not.toContain('event_heads');
    expect(collections).not.toContain('approvals_open');
    expect((await old.approvals.find({ open: 1 }).toArray()).map((a) => a._id)).toEqual(['open-1']);
    const read = await old.eventLog.read(handle, 0, 100);
    expect(read.events.map((e) => [e.seq, e.event.id])).toEqual([
      [1, events[0]!.id],
      [3, events[2]!.id],
      [5, events[1]!.id],
    ]);
    const next = event();
    expect(await old.eventLog.record(handle, 'new', next)).toBe(6);
    expect(await old.eventLog.record(handle, 'old', events[2]!)).toBe(3);
  } finally {
    await old.db.dropDatabase();
    await old.close();
  }
});
