// Fault: Redis dies during a long conversation. Every event written meanwhile keeps its outbox entry, so the thread
// keeps every one of them past its bound (store/outbox-cap.ts) until the outbox sweep has put them on their queues
// once Redis is back; the next write then trims the thread to its newest OUTBOX_KEPT events again.
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { startRedis } from '../../scripts/local-services/redis';
import { OUTBOX_KEPT } from '../../relay-core/store/outbox-cap';
import type { ThreadDoc } from '../../relay-core/domain/documents';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { sendHandoff, text } from '../helpers/handoffs';
import { waitUntil } from '../helpers/wait-until';

let relay: TestRelay;
let redis: Awaited<ReturnType<typeof startRedis>>;

beforeAll(async () => {
  redis = await startRedis({ log: () => {} });
  relay = await startTestRelay({ name: 'outbox_cap_outage', env: { REDIS_URL: redis.url } });
});

afterAll(async () => {
  await relay?.stop();
  await redis?.stop();
});

const thread = async (id: string): Promise<ThreadDoc> => (await relay.store.threads.findOne({ _id: id }))!;

async function append(key: string, threadId: string, count: number): Promise<void> {
  for (let i = 0; i < count; i += 1) {
    await relay.store.outbox.flush();
    const { body } = await relay.rpc(key, 'message/send', { task_id: threadId, message: text(`message ${i}`) });
    if (!body.result) throw new Error(`append ${i}: ${JSON.stringify(body.error)}`);
  }
}

test('events written while Redis is down stay in their thread past its bound until the sweep has enqueued them; then the thread is trimmed', async () => {
  const alice = await relay.register({ handle: 'alice@acme' });
  const bob = await relay.register({ handle: 'bob@acme' });
  // Bob has a webhook, so every event has a webhooks job to wait for (one nobody hears of that way has none).
  const card = await fetch(`${relay.url}/agents/me/card`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${bob}`, 'content-type': 'application/json' },
    body: JSON.stringify({ notification_url: 'https://hooks.example.com/bob' }),
  });
  expect(card.status).toBe(200);
  const id = await sendHandoff(relay, alice, 'bob@acme');
  await append(alice, id, OUTBOX_KEPT);
  const before = new Set((await thread(id)).outbox.map((e) => e.id));

  await redis.kill();
  await append(alice, id, OUTBOX_KEPT + 8);
  const written = await thread(id);
  const outage = written.outbox.filter((e) => !before.has(e.id)).map((e) => e.id);
  expect(outage).toHaveLength(OUTBOX_KEPT + 8);
  // Each one's jobs are pending, so none was trimmed: the sweep will find every one of them in the thread.
  const waiting = new Set((written.jobs_pending ?? []).map((key) => key.slice(key.indexOf(':') + 1)));
  expect(outage.every((eventId) => waiting.has(eventId))).toBe(true);
  expect(written.outbox.length).toBeGreaterThan(OUTBOX_KEPT);

  redis = await startRedis({ port: redis.port, log: () => {} });
  // Seconds alone; over 30 s on FerretDB 2 + DocumentDB beside the rest of the suite on two cores.
  await waitUntil(async () => (await relay.store.outbox.count()) === 0, 'the outbox swept', 90_000);
  const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
  const webhooks = new Queue('webhooks', { connection, prefix: relay.config.queuePrefix });
  try {
    const jobs = await Promise.all(outage.map((eventId) => webhooks.getJob(eventId)));
    expect(jobs.map((job) => job?.id)).toEqual(outage);
  } finally {
    await webhooks.close();
    connection.disconnect();
  }

  await append(alice, id, 1);
  expect((await thread(id)).outbox.length).toBeLessThanOrEqual(OUTBOX_KEPT);
  // 73 appends and a sweep: 18.6 s alone on FerretDB 2 + DocumentDB, over 60 s there beside the rest of the suite.
}, 150_000);
