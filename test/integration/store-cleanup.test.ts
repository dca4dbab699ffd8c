// Age-based clean-up: what the relay writes and stops needing (idempotency records, sign-in links) is deleted by one
// repeating store-cleanup job once it is older than its keep time, each kind by a range on its `age` index.
import { Queue } from 'bullmq';
import type { CommandStartedEvent } from 'mongodb';
import { cleanUp, KEEP_MS } from '../../relay-core/queues/store-cleanup-job';
import { MongoStore } from '../../relay-core/store/mongo-store';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { testMongoUrl, testRedisUrl, uniqueName } from '../helpers/test-env';
import { waitUntil } from '../helpers/wait-until';

describe('cleanUp on the store', () => {
  let store: MongoStore;
  const commands: CommandStartedEvent[] = [];
  beforeAll(async () => {
    store = await MongoStore.connect(testMongoUrl(), uniqueName('cleanup'), { monitorCommands: true });
    await store.ensureIndexes();
    store.db.client.on('commandStarted', (event) => commands.push(event));
  });
  afterAll(async () => {
    await store?.db.dropDatabase();
    await store?.close();
  });

  const now = new Date();
  const aged = (kind: keyof typeof KEEP_MS) => new Date(now.getTime() - KEEP_MS[kind] - 60_000);
  const young = new Date(now.getTime() - 1_000);

  test('deletes only what is older than its keep time, one indexed delete per kind', async () => {
    await store.idempotency.insertMany([
      { _id: 'old-key', request_hash: 'h', state: 'done', created_at: aged('idempotency') },
      { _id: 'new-key', request_hash: 'h', state: 'done', created_at: young },
    ]);

    const link = { handle: 'a@acme', issued_via: 'api' as const, created_at: young, used_at: null };
    await store.web.signIns.insertMany([
      { _id: 'old-link', ...link, expires_at: aged('web_sign_ins') },
      { _id: 'new-link', ...link, expires_at: young },
    ]);
    const session = { handle: 'a@acme', csrf: 'c', created_at: young, revoked_at: null, user_agent: '' };
    await store.web.sessions.insertMany([
      { _id: 'old-session', public_id: 'p1', ...session, expires_at: aged('web_sessions') },
      // Expired a day ago: still listed on its teammate's sessions page.
      { _id: 'recent-session', public_id: 'p2', ...session, expires_at: aged('idempotency') },
    ]);

    commands.length = 0;
    expect(await cleanUp(store, now)).toEqual({ idempotency: 1, web_sign_ins: 1, web_sessions: 1 });
    expect(
      commands.map((c) => `${c.commandName} ${String((c.command as Record<string, unknown>)[c.commandName])}`),
    ).toEqual(['delete idempotency', 'delete web_sign_ins', 'delete web_sessions']);
    expect((await store.web.signIns.find({}).toArray()).map((d) => d._id)).toEqual(['new-link']);
    expect((await store.web.sessions.find({}).toArray()).map((d) => d._id)).toEqual(['recent-session']);
    expect((await store.idempotency.find({}).toArray()).map((d) => d._id)).toEqual(['new-key']);
    expect(await cleanUp(store, now)).toEqual({ idempotency: 0, web_sign_ins: 0, web_sessions: 0 });
  });
});

describe('scheduling', () => {
  let relay: TestRelay;
  let verify: Queue;
  beforeAll(async () => {
    relay = await startTestRelay({ name: 'cleanup_jobs', env: { RELAY_TIMER_SWEEP_INTERVAL: '1s' } });
    verify = new Queue('verify', { connection: { url: testRedisUrl() }, prefix: relay.config.queuePrefix });
  });
  afterAll(async () => {
    await verify?.close();
    await relay?.stop();
  });

  test('a relay with workers keeps one repeating store-cleanup job, and sets it up again when Redis lost it', async () => {
    const scheduled = () => verify.getJobScheduler('store-cleanup');
    await waitUntil(async () => (await scheduled()) !== undefined, 'the store-cleanup job scheduled');
    expect(await scheduled()).toMatchObject({ name: 'store-cleanup', every: 10 * 60_000 });
    await verify.removeJobScheduler('store-cleanup');
    await waitUntil(
      async () => (await scheduled()) !== undefined,
      'the store-cleanup job scheduled again by the timer sweep',
    );
  });
});
