// Fault: an event stream reader stays connected (reconnecting with Last-Event-ID as EventSource does) while Redis
// is stopped and the relay process is killed in the middle of a burst of writes and started again. Every event the
// threads record reaches the reader once, in cursor order, with no cursor skipped.
import { randomBytes } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { startRedis } from '../../scripts/local-services/redis';
import { testMongoUrl, uniqueName } from '../helpers/test-env';
import { queuePrefix } from '../helpers/queue-keys';
import { ResumingSseReader } from '../helpers/sse-client';
import { waitUntil } from '../helpers/wait-until';
import { killRelayProcess, postJson, startRelayProcess, type RelayProcess } from './relay-process';

const adminKey = `hra_${randomBytes(24).toString('base64url')}`;
const db = uniqueName('events_outage');
let redis: Awaited<ReturnType<typeof startRedis>>;
let relay: RelayProcess | undefined;
let mongo: MongoClient;
let env: Record<string, string>;

beforeAll(async () => {
  redis = await startRedis({ log: () => {} });
  mongo = await MongoClient.connect(testMongoUrl());
  env = {
    MONGODB_URL: testMongoUrl(),
    MONGODB_DB: db,
    REDIS_URL: redis.url,
    RELAY_QUEUE_PREFIX: queuePrefix('events_outage'),
    RELAY_ADMIN_KEY: adminKey,
    RELAY_KEY_PEPPER: randomBytes(32).toString('hex'),
  };
  relay = await startRelayProcess(env);
});

afterAll(async () => {
  reader?.stop();
  await killRelayProcess(relay);
  await redis?.stop();
  await mongo
    ?.db(db)
    .dropDatabase()
    .catch(() => {});
  await mongo?.close();
});

let reader: ResumingSseReader | undefined;

const call = (path: string, key: string, body: unknown) => postJson(relay!.url, path, key, body);

const send = (key: string, summary: string) =>
  call('/a2a', key, {
    jsonrpc: '2.0',
    id: 1,
    method: 'message/send',
    params: { recipient: 'bob@acme', intent: 'inform', message: { parts: [{ type: 'text', text: summary }] } },
  });

test('Redis stopped and the relay killed mid-burst and restarted: the stream reader gets every event once, in order', async () => {
  const alice = (await call('/admin/agents', adminKey, { handle: 'alice@acme', name: 'A', role: 'engineer' }))
    .api_key as string;
  const bob = (await call('/admin/agents', adminKey, { handle: 'bob@acme', name: 'B', role: 'engineer' }))
    .api_key as string;
  reader = new ResumingSseReader(() => relay!.url, bob, '0');

  const before = await Promise.all([1, 2, 3].map((i) => send(alice, `before ${i}`)));
  expect(before.every((a) => a.result?.status.state === 'pending')).toBe(true);
  await waitUntil(async () => reader!.events.length >= 3, 'the first three events');

  // Redis down: writes still answer (the outbox and the logs are in MongoDB); readers re-read without the hint.
  await redis.kill();
  const during = await Promise.all([1, 2, 3].map((i) => send(alice, `redis down ${i}`)));
  expect(during.every((a) => a.result?.status.state === 'pending')).toBe(true);
  await relayAccept(bob, during[0].result.task_id);
  await waitUntil(async () => reader!.events.length >= 7, 'the events written while Redis is down', 20_000);

  // A burst of writes, and the relay killed in the middle of it: some answers are lost, some writes half done.
  let answered = 0;
  const burst = Array.from({ length: 20 }, (_, i) =>
    send(alice, `burst ${i}`)
      .then((a) => ((answered += 1), a))
      .catch(() => null),
  );
  await waitUntil(async () => answered >= 3, 'the first answers of the burst');
  relay!.child.kill('SIGKILL');
  await relay!.exited;
  await Promise.all(burst);

  redis = await startRedis({ port: redis.port, log: () => {} });
  relay = await startRelayProcess(env);
  const after = await Promise.all([1, 2].map((i) => send(alice, `after ${i}`)));
  expect(after.every((a) => a.result?.status.state === 'pending')).toBe(true);

  // Everything bob's threads record, from the database: each event once (the sweep finishes what the kill cut off).
  const threads = mongo.db(db).collection<any>('threads');
  let expected: string[] = [];
  await waitUntil(
    async () => {
      const docs = await threads.find({}).toArray();
      expected = docs.flatMap((d: any) => d.outbox.map((e: any) => e.id as string));
      const got = new Set(reader!.events.map((e) => JSON.parse(e.data).event_id));
      return expected.length > 0 && expected.every((id) => got.has(id));
    },
    'every recorded event on the stream',
    60_000,
  ).catch((error: Error) => {
    throw new Error(`${error.message}: ${reader!.events.length} received, ${expected.length} recorded`);
  });
  // A moment more for anything doubled to show up.
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  const received = reader!.events.map((e) => ({ id: Number(e.id), event_id: JSON.parse(e.data).event_id as string }));
  expect(received.map((r) => r.event_id).sort()).toEqual([...expected].sort());
  const ids = received.map((r) => r.id);
  expect(ids).toEqual([...ids].sort((a, b) => a - b));
  expect(new Set(ids).size).toBe(ids.length);
  expect(reader!.reconnects).toBeGreaterThanOrEqual(1);
}, 150_000);

async function relayAccept(key: string, taskId: string): Promise<void> {
  const answer = await call('/a2a', key, {
    jsonrpc: '2.0',
    id: 2,
    method: 'tasks/update',
    params: { task_id: taskId, transition: 'accept' },
  });
  expect(answer.result?.status).toBe('accepted');
}
