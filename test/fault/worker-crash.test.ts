// Fault: worker processes (the built CLI with RELAY_ROLES=worker) die or compete while Slack deliveries run.
// A worker SIGKILLed mid-batch loses nothing: BullMQ's stalled-job check hands its jobs to the next worker,
// and every DM is posted exactly once. Two workers on the same queues never deliver one event twice.
//
// The kill lands while every job the dying worker runs is held in front of Slack (chat.postMessage not yet
// forwarded): that is what a crash usually interrupts. The slack processor's narrow window between Slack
// accepting the post and the relay recording its ts is not exercised here (see the README, Operations).
import { randomBytes } from 'node:crypto';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { startFakeSlack, type FakeSlack } from '../fake-slack/fake-slack-api';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { testMongoUrl, testRedisUrl } from '../helpers/test-env';
import { waitUntil } from '../helpers/wait-until';
import { killRelayProcess, startRelayProcess, type RelayProcess } from './relay-process';
import { startSlowSlackProxy, type SlowSlackProxy } from './slow-slack-proxy';

const RECIPIENT = 'U0CRASH01';
/** The CLI's worker concurrency (startWorker's default). */
const CONCURRENCY = 8;
let slack: FakeSlack;
let proxy: SlowSlackProxy;
let api: TestRelay;
let sender: string;
let connection: Redis;
let queue: Queue;
const workers: RelayProcess[] = [];

beforeAll(async () => {
  slack = await startFakeSlack();
  slack.addUser(RECIPIENT);
  proxy = await startSlowSlackProxy({ target: slack.url, slowMethods: ['chat.postMessage'], delayMs: 150 });
  api = await startTestRelay({ name: 'worker_crash', slack, env: { RELAY_ROLES: 'api' } });
  sender = await api.register({ handle: 'sender@acme' });
  await api.register({ handle: 'recipient@acme', slack_user_id: RECIPIENT });
  connection = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
  queue = new Queue('slack', { connection, prefix: api.config.queuePrefix });
});

afterAll(async () => {
  for (const worker of workers) await killRelayProcess(worker);
  await queue?.close();
  connection?.disconnect();
  await api?.stop();
  await proxy?.close();
  await slack?.close();
});

function startWorkerProcess(): Promise<RelayProcess> {
  return startRelayProcess({
    RELAY_ROLES: 'worker',
    MONGODB_URL: testMongoUrl(),
    MONGODB_DB: api.config.mongodbDb,
    REDIS_URL: testRedisUrl(),
    RELAY_QUEUE_PREFIX: api.config.queuePrefix,
    RELAY_ADMIN_KEY: api.adminKey,
    RELAY_KEY_PEPPER: api.config.keyPepper!,
    SLACK_BOT_TOKEN: slack.token,
    SLACK_SIGNING_SECRET: randomBytes(16).toString('hex'),
    SLACK_API_URL: proxy.url,
    // A dead worker's jobs are taken up again about a second later, not after BullMQ's default 30 s.
    RELAY_WORKER_LOCK_MS: '1000',
  }).then((worker) => {
    workers.push(worker);
    return worker;
  });
}

async function sendHandoffs(label: string, count: number): Promise<string[]> {
  const answers = await Promise.all(
    Array.from({ length: count }, (_, i) =>
      api.rpc(sender, 'message/send', { recipient: 'recipient@acme', intent: 'inform', message: { parts: [{ type: 'text', text: `${label} #${i}#` }] } }),
    ),
  );
  return answers.map((a) => a.body.result.task_id as string);
}

/** chat.postMessage calls Slack accepted, counted by the handoff label they carry. */
function postsByLabel(label: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const call of slack.callsTo('chat.postMessage')) {
    const match = new RegExp(`${label} #\\d+#`).exec(String(call.args.text));
    if (match) counts.set(match[0], (counts.get(match[0]) ?? 0) + 1);
  }
  return counts;
}

/** Every thread has its DM recorded and the queue holds nothing that could still run: no later post can happen. */
async function waitForAllDelivered(ids: string[]): Promise<void> {
  await waitUntil(
    async () => {
      const recorded = await api.store.threads.countDocuments({ _id: { $in: ids }, slack: { $ne: null } });
      const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'waiting-children');
      return recorded === ids.length && Object.values(counts).every((n) => n === 0);
    },
    `${ids.length} DMs recorded and an empty queue`,
    60_000,
  );
}

async function metric(worker: RelayProcess, sample: string): Promise<number> {
  const text = await (await fetch(`${worker.url}/metrics`, { headers: { authorization: `Bearer ${api.adminKey}` } })).text();
  const line = text.split('\n').find((l) => l.startsWith(`${sample} `));
  return line ? Number(line.slice(sample.length + 1)) : 0;
}

const expectedLabels = (label: string, count: number) => new Map(Array.from({ length: count }, (_, i) => [`${label} #${i}#`, 1]));

test('a worker SIGKILLed mid-batch: its jobs stall, another worker takes them, every DM is posted exactly once', async () => {
  const ids = await sendHandoffs('kill', 40);
  const first = await startWorkerProcess();
  await waitUntil(async () => postsByLabel('kill').size >= 10, 'the first worker to deliver some DMs', 30_000);

  // Hold every new post in front of Slack until the worker's whole concurrency is stuck there, then kill it.
  proxy.delayMs = Infinity;
  await waitUntil(async () => proxy.held() === CONCURRENCY, `${CONCURRENCY} posts in flight`, 15_000);
  first.child.kill('SIGKILL');
  await first.exited;
  const deliveredBeforeKill = postsByLabel('kill').size;
  expect(deliveredBeforeKill).toBeLessThan(40);
  // Its held posts are dropped, as Slack never gets a request whose sender died before sending it.
  await waitUntil(async () => proxy.orphaned() === CONCURRENCY, 'the proxy to see the dead worker hang up', 10_000);
  proxy.delayMs = 20;
  proxy.release();
  expect(proxy.dropped()).toBe(CONCURRENCY);

  const second = await startWorkerProcess();
  await waitForAllDelivered(ids);
  expect(postsByLabel('kill')).toEqual(expectedLabels('kill', 40));
  // The jobs the dead worker held were recovered by the stalled-job check, not by luck.
  expect(await metric(second, 'relay_jobs_stalled_total{queue="slack"}')).toBeGreaterThanOrEqual(1);
  expect(await metric(second, 'relay_jobs_completed_total{queue="slack"}')).toBe(40 - deliveredBeforeKill);
  await killRelayProcess(second);
}, 120_000);

test('two worker processes on the same queue deliver every event once between them', async () => {
  proxy.delayMs = 30;
  const [a, b] = await Promise.all([startWorkerProcess(), startWorkerProcess()]);
  const ids = await sendHandoffs('pair', 60);
  await waitForAllDelivered(ids);
  expect(postsByLabel('pair')).toEqual(expectedLabels('pair', 60));
  // Each event's job was taken once, and both processes took part.
  const eventIds = (await api.store.threads.find({ _id: { $in: ids } }).toArray()).map((t) => t.outbox[0]!.id);
  const jobs = await Promise.all(eventIds.map((id) => queue.getJob(id)));
  expect(jobs.map((job) => job?.attemptsStarted)).toEqual(eventIds.map(() => 1));
  expect(await metric(a, 'relay_jobs_completed_total{queue="slack"}')).toBeGreaterThan(0);
  expect(await metric(b, 'relay_jobs_completed_total{queue="slack"}')).toBeGreaterThan(0);
}, 120_000);
