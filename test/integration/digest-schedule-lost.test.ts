// The daily digest's repeatable tick lives in Redis. A Redis that comes back empty (restarted without persistence)
// loses it; the worker's timer sweep sets it up again, where digests used to stop until the relay's next start. A
// schedule removed on purpose (as the digest tests do, to run their own ticks) stays removed. A relay started without
// Slack on the same database and queues removes it: it has no digest to send.
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { DIGEST_SCHEDULER_ID } from '../../bot/digest/daily-digest';
import { startFakeSlack, type FakeSlack } from '../../scripts/fake-slack/fake-slack-api';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { waitUntil } from '../helpers/wait-until';

const SWEEP_MS = 100;

let slack: FakeSlack;
let relay: TestRelay;
let redis: Redis;
let queueConnection: Redis;
let verify: Queue;

const scheduled = async () => (await verify.getJobSchedulers()).some((s) => s.key === DIGEST_SCHEDULER_ID);

beforeAll(async () => {
  slack = await startFakeSlack();
  relay = await startTestRelay({
    name: 'digest_lost',
    slack,
    env: { RELAY_DIGEST_AT: '09:30', RELAY_TIMER_SWEEP_INTERVAL: `${SWEEP_MS}ms` },
  });
  redis = new Redis(relay.config.redisUrl, { maxRetriesPerRequest: null });
  queueConnection = redis.duplicate();
  verify = new Queue('verify', { connection: queueConnection, prefix: relay.config.queuePrefix });
  await waitUntil(scheduled, 'the digest schedule at start');
});

afterAll(async () => {
  await verify?.close();
  queueConnection?.disconnect();
  redis?.disconnect();
  await relay?.stop();
  await slack?.close();
});

test('a schedule removed on purpose stays removed through the timer sweeps', async () => {
  await verify.removeJobScheduler(DIGEST_SCHEDULER_ID);
  // Ten sweeps' time, then still none.
  await new Promise((resolve) => setTimeout(resolve, 10 * SWEEP_MS));
  expect(await scheduled()).toBe(false);
});

test('after Redis lost every key of the relay, the next timer sweeps set the digest schedule up again', async () => {
  const keys = await redis.keys(`${relay.config.queuePrefix}:*`);
  expect(keys.length).toBeGreaterThan(0);
  // The test before removed it on purpose, and it stayed removed; losing every key (the mark that says so too) is
  // what brings it back. (Read before the keys go: right after, a sweep may already have set it up again.)
  expect(await scheduled()).toBe(false);
  await redis.del(...keys);
  await waitUntil(scheduled, 'the digest schedule to be set up again', 10_000);
});

test('a relay started on the same database and queues without Slack removes the schedule (it sends no digest)', async () => {
  expect(await scheduled()).toBe(true);
  const { mongodbDb, queuePrefix } = relay.config;
  await relay.stop();
  relay = await startTestRelay({
    name: 'digest_lost',
    env: { MONGODB_DB: mongodbDb, RELAY_QUEUE_PREFIX: queuePrefix, RELAY_TIMER_SWEEP_INTERVAL: `${SWEEP_MS}ms` },
  });
  expect(relay.config.slack).toBeFalsy();
  await waitUntil(async () => !(await scheduled()), 'the digest schedule removed');
});
