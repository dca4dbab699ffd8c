// The teammate directory on FerretDB (cards in memory, a change marker read by `_id`): the webhooks worker looking
// endpoints up for many events at once reads the marker at most twice, not once per event; and a card registered
// in one process is listed by another process's very next call.
import type { CommandStartedEvent } from 'mongodb';
import { MongoStore } from '../../relay-core/store/mongo-store';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { testMongoUrl } from '../helpers/test-env';

let relay: TestRelay;
let other: MongoStore;

beforeAll(async () => {
  relay = await startTestRelay({ name: 'directory_reads' });
  await relay.register({ handle: 'alice@acme' });
  // A second process's store on the same database, its commands counted.
  other = await MongoStore.connect(testMongoUrl(), relay.config.mongodbDb, { monitorCommands: true });
});

afterAll(async () => {
  await other?.close();
  await relay?.stop();
});

function markerReads<T>(work: () => Promise<T>): Promise<{ result: T; reads: number }> {
  let reads = 0;
  const started = (event: CommandStartedEvent) => {
    if (event.commandName === 'find' && event.command.find === 'meta' && event.command.filter?._id === 'agents_changed') reads += 1;
  };
  other.db.client.on('commandStarted', started);
  return work()
    .then((result) => ({ result, reads }))
    .finally(() => other.db.client.off('commandStarted', started));
}

test('32 endpoint lookups made together read the change marker at most twice', async () => {
  expect(other.capabilities.kind).toBe('ferretdb');
  await other.withWebhookEndpoint(['alice@acme']);
  const { result, reads } = await markerReads(() => Promise.all(Array.from({ length: 32 }, () => other.withWebhookEndpoint(['alice@acme']))));
  expect(result).toEqual(Array(32).fill([]));
  expect(reads).toBeGreaterThanOrEqual(1);
  expect(reads).toBeLessThanOrEqual(2);
});

test('a teammate registered through the relay is in the other process\'s next listing, even while its lookups overlap', async () => {
  expect((await other.directory!.matching({ role: 'designer' }, 10)).map((c) => c.handle)).toEqual([]);
  // Lookups in flight across the registration: the call made after it must see it.
  const overlapping = Array.from({ length: 8 }, () => other.directory!.matching({ role: 'designer' }, 10));
  await relay.register({ handle: 'dana@acme', role: 'designer' });
  const after = await other.directory!.matching({ role: 'designer' }, 10);
  expect(after.map((c) => c.handle)).toEqual(['dana@acme']);
  await Promise.all(overlapping);
});
