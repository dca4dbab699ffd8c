// The queue prefix with RELAY_QUEUE_PREFIX unset, on real FerretDB and Redis: two relays with their own databases on
// one Redis each work only their own jobs under their database's own prefix, which survives a restart; a database an
// earlier relay served keeps that relay's default while Redis holds its jobs, and those jobs are worked.
import { Redis } from 'ioredis';
import { createLogger } from '../../relay-core/ops/logger';
import { MongoStore } from '../../relay-core/store/mongo-store';
import { databaseQueuePrefix, resolveQueuePrefix } from '../../relay-core/queues/queue-prefix';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { sendHandoff } from '../helpers/handoffs';
import { queuePrefix } from '../helpers/queue-keys';
import { testMongoUrl, testRedisUrl, uniqueName } from '../helpers/test-env';
import { waitUntil } from '../helpers/wait-until';

const relays: TestRelay[] = [];
const stores: MongoStore[] = [];
let redis: Redis;

beforeAll(() => {
  redis = new Redis(testRedisUrl());
});

afterAll(async () => {
  for (const relay of relays) await relay.stop().catch(() => {});
  for (const store of stores) await store.close();
  redis?.disconnect();
});

/** A relay with RELAY_QUEUE_PREFIX unset (an empty setting is no setting). */
async function relayWithDefaultPrefix(
  name: string,
  env: Record<string, string> = {},
  legacyQueuePrefix?: string,
): Promise<TestRelay> {
  const relay = await startTestRelay({
    name,
    env: { RELAY_QUEUE_PREFIX: '', ...env },
    captureLogs: true,
    legacyQueuePrefix,
  });
  relays.push(relay);
  return relay;
}

async function eventsOf(relay: TestRelay, key: string): Promise<Array<{ type: string; thread_id: string }>> {
  const response = await fetch(`${relay.url}/events?since=0`, { headers: { authorization: `Bearer ${key}` } });
  return ((await response.json()) as { events: Array<{ type: string; thread_id: string }> }).events;
}

const skipped = (relay: TestRelay) =>
  relay.logs.filter((line) => String(line.msg).startsWith('skipping event jobs written to another database'));

test('two relays on one Redis get prefixes of their own databases and work only their own jobs', async () => {
  const [one, two] = await Promise.all([relayWithDefaultPrefix('prefix_one'), relayWithDefaultPrefix('prefix_two')]);
  expect(one.queuePrefix).toMatch(/^handoff-[0-9a-f]{12}$/);
  expect(one.queuePrefix).toBe(databaseQueuePrefix(await one.store.identity()));
  expect(two.queuePrefix).toMatch(/^handoff-[0-9a-f]{12}$/);
  expect(two.queuePrefix).not.toBe(one.queuePrefix);

  const keys = await Promise.all(
    [one, two].map(async (relay) =>
      Promise.all([relay.register({ handle: 'alice@acme' }), relay.register({ handle: 'bob@acme' })]),
    ),
  );
  // The same handles on both, as two teams' relays would have: each handoff reaches only its own relay's logs.
  const threads = await Promise.all(
    [one, two].map((relay, i) => sendHandoff(relay, keys[i]![0]!, 'bob@acme', `from relay ${i}`)),
  );
  for (const [i, relay] of [one, two].entries()) {
    await waitUntil(
      async () => ((await eventsOf(relay, keys[i]![1]!)).some((e) => e.thread_id === threads[i]) ? true : null),
      `relay ${i}'s own event`,
    );
    expect(await eventsOf(relay, keys[i]![1]!)).toEqual([
      expect.objectContaining({ type: 'thread.created', thread_id: threads[i] }),
    ]);
    // Its jobs are under its own prefix, and no worker ever took the other's.
    expect((await redis.keys(`${relay.queuePrefix}:webhooks:*`)).length).toBeGreaterThan(0);
    expect(skipped(relay)).toEqual([]);
  }
});

test('a relay keeps its prefix across a restart, and RELAY_QUEUE_PREFIX set is used as it is', async () => {
  const first = await relayWithDefaultPrefix('prefix_restart');
  const database = first.config.mongodbDb;
  const chosen = first.queuePrefix;
  await first.stop();
  const again = await relayWithDefaultPrefix('prefix_restart', { MONGODB_DB: database });
  expect(again.queuePrefix).toBe(chosen);

  const named = queuePrefix('prefix_named');
  const set = await startTestRelay({ name: 'prefix_named', env: { RELAY_QUEUE_PREFIX: named, MONGODB_DB: database } });
  relays.push(set);
  expect(set.queuePrefix).toBe(named);
});

test('an upgraded relay keeps the earlier default while Redis holds its jobs, works them, and says how to move', async () => {
  // The earlier relay: its default prefix (named for this test), only the API role, so its event jobs wait in Redis.
  const legacy = queuePrefix('prefix_legacy');
  const old = await startTestRelay({ name: 'prefix_upgrade', env: { RELAY_QUEUE_PREFIX: legacy, RELAY_ROLES: 'api' } });
  relays.push(old);
  const [alice, bob] = await Promise.all([
    old.register({ handle: 'alice@acme' }),
    old.register({ handle: 'bob@acme' }),
  ]);
  const waiting = await sendHandoff(old, alice!, 'bob@acme', 'queued before the upgrade');
  await old.stop();

  // The upgrade: the same database, RELAY_QUEUE_PREFIX unset.
  const upgraded = await relayWithDefaultPrefix(
    'prefix_upgrade',
    { MONGODB_DB: old.config.mongodbDb, RELAY_KEY_PEPPER: old.config.keyPepper! },
    legacy,
  );
  expect(upgraded.queuePrefix).toBe(legacy);
  const own = databaseQueuePrefix(await upgraded.store.identity());
  expect(upgraded.logs.filter((line) => line.level === 40).map((line) => line.msg)).toEqual([
    expect.stringContaining(`to move, set RELAY_QUEUE_PREFIX=${own} once the queues under "${legacy}" are empty`),
  ]);
  // The job the earlier relay queued is worked: bob's log has its event.
  await waitUntil(
    async () => ((await eventsOf(upgraded, bob!)).some((e) => e.thread_id === waiting) ? true : null),
    'the waiting thread.created',
  );
});

describe('the choice of a database that has none yet', () => {
  const log = createLogger('silent');
  async function store(name: string): Promise<MongoStore> {
    const opened = await MongoStore.connect(testMongoUrl(), uniqueName(name));
    stores.push(opened);
    return opened;
  }
  const choose = (s: MongoStore, legacyPrefix: string) =>
    resolveQueuePrefix({ setting: undefined, store: s, redis: async () => redis, log, legacyPrefix });

  test('a new database takes its own prefix even beside an earlier relay using the old default on this Redis', async () => {
    const legacy = queuePrefix('prefix_beside');
    await redis.set(`${legacy}:verify:meta`, 'x');
    const fresh = await store('prefix_fresh');
    expect(await choose(fresh, legacy)).toEqual({
      prefix: databaseQueuePrefix(await fresh.identity()),
      source: 'database',
    });
  });

  test('a database served before takes its own prefix when Redis holds nothing under the old default, and keeps the choice', async () => {
    const legacy = queuePrefix('prefix_empty');
    const served = await store('prefix_served');
    await served.agents.insertOne({ _id: 'someone@acme' } as never);
    const own = databaseQueuePrefix(await served.identity());
    expect(await choose(served, legacy)).toEqual({ prefix: own, source: 'database' });
    // Jobs of another relay appearing under the old default later change nothing: the choice is stored.
    await redis.set(`${legacy}:timers:armed`, 'x');
    expect(await choose(served, legacy)).toEqual({ prefix: own, source: 'database' });
  });

  test('a database served before keeps the old default when Redis cannot be asked (no job is left behind)', async () => {
    const served = await store('prefix_no_redis');
    await served.threads.insertOne({ _id: '00000000-0000-4000-8000-000000000000' } as never);
    const legacy = queuePrefix('prefix_no_redis');
    const down = resolveQueuePrefix({
      setting: undefined,
      store: served,
      redis: async () => Promise.reject(new Error('ECONNREFUSED')),
      log,
      legacyPrefix: legacy,
    });
    expect(await down).toEqual({ prefix: legacy, source: 'legacy' });
  });
});
