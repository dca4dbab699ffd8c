// Fault: the relay stops while its workers' Redis connections are reconnecting (just after a Redis restart, or with
// Redis still down). BullMQ's own graceful close never returns then (taskforcesh/bullmq#4656), so a relay asked to
// stop would never exit; a worker closes gracefully once Redis is back, and at once while it stays away.
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { startRedis } from '../../scripts/local-services/redis';
import { startWorker } from '../../relay-core/queues/bullmq-queues';
import { waitUntil } from '../helpers/wait-until';

let redis: Awaited<ReturnType<typeof startRedis>>;

beforeEach(async () => {
  redis = await startRedis({ log: () => {} });
});

afterEach(async () => {
  await redis?.stop();
});

/** Resolves to 'closed', or to 'still closing' if `closing` has not returned in 30 s (the 30 s timer is then cleared). */
async function settled(closing: Promise<void>): Promise<string> {
  const timer = new AbortController();
  try {
    return await Promise.race([closing.then(() => 'closed'), sleep(30_000, 'still closing', { signal: timer.signal })]);
  } finally {
    timer.abort();
  }
}

async function runningWorker(processor: (job: Job) => Promise<unknown> = async () => 'done') {
  const running = startWorker({ name: 'webhooks', redisUrl: redis.url, prefix: 'close_test', processor });
  await running.worker.waitUntilReady();
  const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
  const queue = new Queue('webhooks', { connection, prefix: 'close_test' });
  await queue.add('probe', {}, { jobId: 'before' });
  await waitUntil(async () => (await queue.getJob('before'))?.returnvalue === 'done', 'the worker ran a job');
  await queue.close();
  connection.disconnect();
  return running;
}

test('a worker asked to close just after Redis restarted closes', async () => {
  const running = await runningWorker();
  await redis.kill();
  await sleep(3_000);
  redis = await startRedis({ port: redis.port, log: () => {} });
  // Its blocking connection is between two reconnect attempts now: the case BullMQ's close never returns from.
  expect(await settled(running.close())).toBe('closed');
});

test('a worker asked to close while Redis stays down closes', async () => {
  const running = await runningWorker();
  await redis.kill();
  await sleep(1_000);
  expect(await settled(running.close())).toBe('closed');
});

test('with Redis up, a closing worker still lets its running job finish first', async () => {
  let finished = false;
  const running = await runningWorker(async (job) => {
    if (job.name === 'slow') {
      await sleep(1_500);
      finished = true;
    }
    return 'done';
  });
  const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
  const queue = new Queue('webhooks', { connection, prefix: 'close_test' });
  try {
    await queue.add('slow', {}, { jobId: 'slow' });
    await waitUntil(async () => (await queue.getJob('slow'))?.processedOn !== undefined, 'the slow job started');
    await running.close();
    expect(finished).toBe(true);
    expect(await (await queue.getJob('slow'))?.getState()).toBe('completed');
  } finally {
    await queue.close();
    connection.disconnect();
  }
});
