// A busy teammate's event log on the real store: events recorded together each get one position, in the order they
// were recorded, and are read back once each; the next entry's insert does not wait for the last one's mark (one round
// trip an event in the log's chain, not two); the same event recorded twice at once is read once.
import { randomUUID } from 'node:crypto';
import type { CommandStartedEvent } from 'mongodb';
import type { OutboxEvent } from '../../relay-core/domain/documents';
import { MongoStore } from '../../relay-core/store/mongo-store';
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

const event = (): OutboxEvent => ({ id: randomUUID(), type: 'thread.created', at: new Date(), by: 'alice@acme', via: 'api' });

/** The inserts into the log's entries and marks as the server saw them start and finish, in order. */
async function timeline<T>(work: () => Promise<T>): Promise<{ result: T; steps: string[] }> {
  const steps: string[] = [];
  const kinds = new Map<number, string>();
  const started = (e: CommandStartedEvent) => {
    const collection = e.command.insert;
    if (e.commandName !== 'insert' || (collection !== 'event_log' && collection !== 'event_marks')) return;
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

test('30 events recorded at once into one log take positions 1–30 in order and are read back once each; an entry goes while the last mark is out', async () => {
  const handle = 'busy@acme';
  const events = Array.from({ length: 30 }, event);
  const { result: positions, steps } = await timeline(() => Promise.all(events.map((e, i) => store.eventLog.record(handle, `thread-${i}`, e))));
  expect(positions).toEqual(events.map((_, i) => i + 1));
  // Before, each entry waited for the previous event's mark: no entry insert ever started while a mark insert was out.
  let marksOut = 0;
  let overlapped = 0;
  for (const step of steps) {
    if (step === 'start event_marks') marksOut += 1;
    if (step === 'end event_marks') marksOut -= 1;
    if (step === 'start event_log' && marksOut > 0) overlapped += 1;
  }
  expect(overlapped).toBeGreaterThan(0);
  const read = await store.eventLog.read(handle, 0, 100);
  expect(read.events.map((e) => e.event.id)).toEqual(events.map((e) => e.id));
  expect(read.cursor).toBe(30);
});

test('the same event recorded twice at once has one position that both calls answer, and is read once', async () => {
  const handle = 'twice@acme';
  const first = event();
  await store.eventLog.record(handle, 'thread-a', first);
  const again = event();
  const [a, b] = await Promise.all([store.eventLog.record(handle, 'thread-b', again), store.eventLog.record(handle, 'thread-b', again)]);
  expect(a).toBe(b);
  const read = await store.eventLog.read(handle, 0, 100);
  expect(read.events.map((e) => e.event.id)).toEqual([first.id, again.id]);
  expect(read.cursor).toBe(3);
});
