// The team's listings (agents/list) are kept by each relay process between teammate writes: a repeated listing reads
// no card, and a card written through any process (another one here, on the same database and queues) shows in the
// very next listing of every process.
import { randomBytes } from 'node:crypto';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { uniqueName } from '../helpers/test-env';

const shared = {
  MONGODB_DB: uniqueName('card_listings'),
  RELAY_QUEUE_PREFIX: uniqueName('card_listings'),
  RELAY_KEY_PEPPER: randomBytes(32).toString('hex'),
};
let writer: TestRelay;
let reader: TestRelay;

beforeAll(async () => {
  writer = await startTestRelay({ name: 'card_listings', env: shared });
  reader = await startTestRelay({ name: 'card_listings', env: { ...shared, RELAY_ROLES: 'api' } });
});

afterAll(async () => {
  await reader?.stop();
  await writer?.stop();
});

async function handlesWithSkill(relay: TestRelay, key: string, skill: string): Promise<string[]> {
  const { status, body } = await relay.rpc(key, 'agents/list', { skill });
  expect(status).toBe(200);
  return (body.result.teammates as Array<{ handle: string }>).map((card) => card.handle);
}

async function setSkills(relay: TestRelay, key: string, skills: string[]): Promise<void> {
  const { status } = await relay.rest('PUT', '/agents/me/card', key, { skills });
  expect(status).toBe(200);
}

test('a listing asked again reads no card; a card written through another process shows at once', async () => {
  const alice = await writer.register({ handle: 'alice@acme', skills: ['playwright'] });
  const bob = await writer.register({ handle: 'bob@acme', skills: ['go'] });
  const reads = jest.spyOn(reader.store.cards, 'matching');

  expect(await handlesWithSkill(reader, bob, 'playwright')).toEqual(['alice@acme']);
  expect(await handlesWithSkill(reader, bob, 'playwright')).toEqual(['alice@acme']);
  expect(reads).toHaveBeenCalledTimes(1);

  // Through the other process: alice drops playwright and bob takes it up.
  await setSkills(writer, alice, ['go']);
  await setSkills(writer, bob, ['go', 'playwright']);
  expect(await handlesWithSkill(reader, alice, 'playwright')).toEqual(['bob@acme']);
  expect(await handlesWithSkill(reader, alice, 'go')).toEqual(['alice@acme', 'bob@acme']);

  // Through the reading process itself: its own write starts its copy again too.
  await setSkills(reader, bob, ['go']);
  expect(await handlesWithSkill(reader, alice, 'playwright')).toEqual([]);
  reads.mockRestore();
});
