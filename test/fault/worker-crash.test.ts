// Fault: worker processes (the built CLI with RELAY_ROLES=worker) die or compete while Slack and webhook
// deliveries run. A worker SIGKILLed mid-batch loses nothing: BullMQ's stalled-job check hands its jobs to the
// next worker, every DM is posted exactly once and every webhook arrives, each repeat carrying the same
// webhook-id (a kill between the receiver's answer and the relay recording it resends: at-least-once with a
// stable id). Two workers on the same queues never deliver one event twice, on Slack or by webhook.
//
// The kill lands while every job the dying worker runs is held in front of Slack (chat.postMessage not yet
// forwarded): that is what a crash usually interrupts. A crash between Slack accepting a post and the relay
// recording its ts is covered by test/fault/slack-rate-limit.test.ts (post claims, read back before reposting).
import { randomBytes } from 'node:crypto';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { startFakeSlack, type FakeSlack } from '../../scripts/fake-slack/fake-slack-api';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { testMongoUrl, testRedisUrl } from '../helpers/test-env';
import { waitUntil } from '../helpers/wait-until';
import { echoChallenge, verifyWebhook, WebhookReceiver, type ReceivedRequest } from '../../scripts/webhook-receiver';
import { killRelayProcess, startRelayProcess, type RelayProcess } from './relay-process';
import { startSlowSlackProxy, type SlowSlackProxy } from './slow-slack-proxy';
import { sendHandoff } from '../helpers/handoffs';

const RECIPIENT = 'U0CRASH01';
/** The CLI's worker concurrency (startWorker's default). */
const CONCURRENCY = 8;
const PARTICIPANTS = ['sender@acme', 'recipient@acme'];
const WEBHOOK_ENV = { RELAY_WEBHOOK_ALLOW_PRIVATE: '1', RELAY_WEBHOOK_RETRY_SCHEDULE: '100ms,200ms,300ms,500ms,1s,2s' };
let slack: FakeSlack;
let proxy: SlowSlackProxy;
let api: TestRelay;
let sender: string;
let connection: Redis;
let queue: Queue;
let webhooksQueue: Queue;
/** Both participants' webhooks land here, at /sender and /recipient. */
let hooks: WebhookReceiver;
const secrets: Record<string, string> = {};
const workers: RelayProcess[] = [];

/** Sets `key`'s webhook to /<name> on the receiver; returns its signing secret. */
async function setHook(key: string, handle: string): Promise<string> {
  const res = await fetch(`${api.url}/agents/me/card`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ notification_url: hooks.url(`/${handle.split('@')[0]}`) }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as any).notification_secret;
}

async function isVerified(key: string): Promise<boolean> {
  const me = (await (
    await fetch(`${api.url}/agents/me`, { headers: { authorization: `Bearer ${key}` } })
  ).json()) as any;
  return me.notification?.verified === true;
}

beforeAll(async () => {
  slack = await startFakeSlack();
  slack.addUser(RECIPIENT);
  proxy = await startSlowSlackProxy({ target: slack.url, slowMethods: ['chat.postMessage'], delayMs: 150 });
  hooks = await new WebhookReceiver().start();
  api = await startTestRelay({ name: 'worker_crash', slack, env: { RELAY_ROLES: 'api', ...WEBHOOK_ENV } });
  sender = await api.register({ handle: 'sender@acme' });
  const recipient = await api.register({ handle: 'recipient@acme', slack_user_id: RECIPIENT });
  connection = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
  queue = new Queue('slack', { connection, prefix: api.config.queuePrefix });
  webhooksQueue = new Queue('webhooks', { connection, prefix: api.config.queuePrefix });

  // Both webhooks verified before any handoff: a worker answers the challenges, then stops cleanly.
  secrets['/sender'] = await setHook(sender, 'sender@acme');
  secrets['/recipient'] = await setHook(recipient, 'recipient@acme');
  const verifier = await startWorkerProcess();
  await waitUntil(async () => (await isVerified(sender)) && (await isVerified(recipient)), 'both webhooks verified');
  verifier.child.kill('SIGTERM');
  expect(await verifier.exited).toBe(0);
}, 60_000);

afterAll(async () => {
  for (const worker of workers) await killRelayProcess(worker);
  await queue?.close();
  await webhooksQueue?.close();
  connection?.disconnect();
  await api?.stop();
  await proxy?.close();
  await slack?.close();
  await hooks?.stop();
});

function startWorkerProcess(env: Record<string, string> = {}): Promise<RelayProcess> {
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
    RELAY_DIGEST_AT: 'off', // no daily digest DMs in this test's Slack
    // A dead worker's jobs are taken up again a few seconds later, not after BullMQ's default 30 s. Not 1 s: on a
    // loaded machine a live worker then misses lock renewals, and its jobs stall without any crash.
    RELAY_WORKER_LOCK_MS: '4000',
    // As in a real fleet: links in DMs and webhooks point at the API, not at whichever worker built them.
    RELAY_PUBLIC_URL: api.url,
    ...WEBHOOK_ENV,
    ...env,
  }).then((worker) => {
    workers.push(worker);
    return worker;
  });
}

async function sendHandoffs(label: string, count: number): Promise<string[]> {
  return Promise.all(
    Array.from({ length: count }, (_, i) => sendHandoff(api, sender, 'recipient@acme', `${label} #${i}#`)),
  );
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

/** The webhook-ids owed for these threads: each event to each participant (both have a verified webhook). */
async function expectedWebhookIds(ids: string[]): Promise<string[]> {
  const threads = await api.store.threads.find({ _id: { $in: ids } }).toArray();
  return threads
    .flatMap((t) => t.outbox.flatMap((event) => PARTICIPANTS.map((handle) => `${event.id}.${handle}`)))
    .sort();
}

/** Webhook deliveries the receiver got for these webhook-ids (repeats included), each verified with its owner's secret. */
function webhooksFor(expected: string[]): ReceivedRequest[] {
  const wanted = new Set(expected);
  const received = hooks.events().filter((r) => wanted.has(String(r.headers['webhook-id'])));
  for (const request of received) {
    const payload = verifyWebhook(secrets[request.path]!, request);
    expect(String(request.headers['webhook-id'])).toBe(`${payload.data.event_id}.${request.path.slice(1)}@acme`);
  }
  return received;
}

/**
 * Every thread has its DM recorded, every webhook delivery is recorded delivered, and neither queue holds
 * anything that could still run: no later post or webhook can happen.
 */
async function waitForAllDelivered(ids: string[]): Promise<string[]> {
  const expected = await expectedWebhookIds(ids);
  const deliveries = api.store.db.collection('webhook_deliveries');
  const wanted = new Set(expected);
  // What was still missing at the last look, so a timeout says which part of the delivery never came.
  let missing = 'nothing checked yet';
  try {
    await waitUntil(
      async () => {
        // A cheap check first: polling the database all along would slow the deliveries it waits for.
        const arrived = new Set(
          hooks
            .events()
            .map((r) => String(r.headers['webhook-id']))
            .filter((id) => wanted.has(id)),
        );
        if (arrived.size < expected.length) {
          missing = `webhooks at the receiver ${arrived.size}/${expected.length}`;
          return false;
        }
        const recorded = await api.store.threads.countDocuments({ _id: { $in: ids }, slack: { $ne: null } });
        const delivered = await deliveries.find({ _id: { $in: expected as any[] } }).toArray();
        const done = delivered.filter((d) => d.status === 'delivered').length;
        if (recorded !== ids.length || done !== expected.length) {
          const states = delivered.map((d) => d.status).join(',');
          missing = `DMs recorded ${recorded}/${ids.length}, webhooks delivered ${done}/${expected.length} (records: ${states || 'none'})`;
          return false;
        }
        for (const q of [queue, webhooksQueue]) {
          const counts = await q.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'waiting-children');
          if (!Object.values(counts).every((n) => n === 0)) {
            missing = `${q.name} queue not empty: ${JSON.stringify(counts)}`;
            return false;
          }
        }
        return true;
      },
      `${ids.length} DMs and ${expected.length} webhooks recorded and empty queues`,
      60_000,
    );
  } catch (error) {
    throw new Error(`${(error as Error).message}; still missing: ${missing}`, { cause: error });
  }
  return expected;
}

/** How many times each webhook-id arrived. */
function countById(requests: ReceivedRequest[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of requests)
    counts.set(String(r.headers['webhook-id']), (counts.get(String(r.headers['webhook-id'])) ?? 0) + 1);
  return counts;
}

async function metric(worker: RelayProcess, sample: string): Promise<number> {
  const text = await (
    await fetch(`${worker.url}/metrics`, { headers: { authorization: `Bearer ${api.adminKey}` } })
  ).text();
  const line = text.split('\n').find((l) => l.startsWith(`${sample} `));
  return line ? Number(line.slice(sample.length + 1)) : 0;
}

const expectedLabels = (label: string, count: number) =>
  new Map(Array.from({ length: count }, (_, i) => [`${label} #${i}#`, 1]));

test('a worker SIGKILLed mid-batch: its jobs stall, another worker takes them, every DM is posted exactly once, every webhook arrives', async () => {
  const ids = await sendHandoffs('kill', 40);
  const first = await startWorkerProcess();
  await waitUntil(async () => postsByLabel('kill').size >= 10, 'the first worker to deliver some DMs', 30_000);

  // Hold every new post in front of Slack until the worker's whole concurrency is stuck there, then kill it.
  proxy.delayMs = Infinity;
  // Stuck ones only: a post taken before the switch still leaves after its 150 ms, and killing the worker then would
  // leave fewer than its whole concurrency in front of Slack.
  await waitUntil(async () => proxy.stuck() === CONCURRENCY, `${CONCURRENCY} posts stuck in flight`);
  first.child.kill('SIGKILL');
  await first.exited;
  const deliveredBeforeKill = postsByLabel('kill').size;
  expect(deliveredBeforeKill).toBeLessThan(40);
  // Its held posts are dropped, as Slack never gets a request whose sender died before sending it.
  await waitUntil(async () => proxy.orphaned() === CONCURRENCY, 'the proxy to see the dead worker hang up');
  proxy.delayMs = 20;
  proxy.release();
  expect(proxy.dropped()).toBe(CONCURRENCY);

  const second = await startWorkerProcess();
  const expected = await waitForAllDelivered(ids);
  expect(postsByLabel('kill')).toEqual(expectedLabels('kill', 40));
  // The jobs the dead worker held were recovered by the stalled-job check, not by luck.
  expect(await metric(second, 'relay_jobs_stalled_total{queue="slack"}')).toBeGreaterThanOrEqual(1);
  expect(await metric(second, 'relay_jobs_completed_total{queue="slack"}')).toBe(40 - deliveredBeforeKill);

  // Every event reached both participants' webhooks. Where the kill fell between a receiver's answer and the
  // relay recording it, the event is sent again: with the same webhook-id and the same body.
  const received = webhooksFor(expected);
  const counts = countById(received);
  expect([...counts.keys()].sort()).toEqual(expected);
  const repeated = [...counts].filter(([, n]) => n > 1);
  for (const [id] of repeated)
    expect(new Set(received.filter((r) => r.headers['webhook-id'] === id).map((r) => r.raw)).size).toBe(1);
  console.info(
    `worker-crash: ${expected.length} webhook deliveries, ${received.length - expected.length} repeats (same webhook-id) over ${repeated.length} ids`,
  );
  await killRelayProcess(second);
}, 120_000);

test('a worker SIGKILLed after receivers got its webhooks but before it heard their answers: each is resent with the same webhook-id and body', async () => {
  // The receiver takes every event and never answers: the worker's webhook concurrency fills up with calls
  // the receiver has already seen (for a receiver that acted on them, these are delivered).
  hooks.answer = (request) => (request.json?.type === 'endpoint.challenge' ? echoChallenge(request) : null);
  proxy.delayMs = 20;
  const ids = await sendHandoffs('held', CONCURRENCY / PARTICIPANTS.length);
  const expected = await expectedWebhookIds(ids);
  expect(expected).toHaveLength(CONCURRENCY);
  const first = await startWorkerProcess();
  await waitUntil(
    async () => webhooksFor(expected).length === CONCURRENCY,
    `${CONCURRENCY} webhooks at the receiver, unanswered`,
    30_000,
  );
  first.child.kill('SIGKILL');
  await first.exited;
  const seenBeforeKill = webhooksFor(expected);
  expect(countById(seenBeforeKill)).toEqual(new Map(expected.map((id) => [id, 1])));

  hooks.answer = echoChallenge;
  const second = await startWorkerProcess();
  await waitForAllDelivered(ids);
  // Each was sent once more and only once more: the same webhook-id and the same body, so a receiver that
  // de-duplicates by webhook-id acts on each event once.
  const received = webhooksFor(expected);
  expect(countById(received)).toEqual(new Map(expected.map((id) => [id, 2])));
  for (const id of expected) {
    const [before, after] = received.filter((r) => r.headers['webhook-id'] === id);
    expect(after!.raw).toBe(before!.raw);
  }
  // The relay recorded only the attempt whose answer it heard.
  const records = await api.store.db
    .collection('webhook_deliveries')
    .find({ _id: { $in: expected as any[] } })
    .toArray();
  expect(records.map((r) => r.attempts.map((a: any) => [a.outcome, a.http_status]))).toEqual(
    expected.map(() => [['delivered', 200]]),
  );
  expect(await metric(second, 'relay_jobs_stalled_total{queue="webhooks"}')).toBeGreaterThanOrEqual(1);
  expect(postsByLabel('held')).toEqual(expectedLabels('held', ids.length));
  await killRelayProcess(second);
}, 120_000);

test('two worker processes on the same queues deliver every event once between them, on Slack and by webhook', async () => {
  proxy.delayMs = 30;
  // Nothing dies here, so the default lock: with the 1 s one, a loaded machine can miss a lock renewal and BullMQ
  // then runs a live job a second time (a stall without a crash), which is not what this test is about.
  const [a, b] = await Promise.all([
    startWorkerProcess({ RELAY_WORKER_LOCK_MS: '30000' }),
    startWorkerProcess({ RELAY_WORKER_LOCK_MS: '30000' }),
  ]);
  const ids = await sendHandoffs('pair', 60);
  const expected = await waitForAllDelivered(ids);
  // No job of this test stalled. A `verify` job (a timer arming, a Home refresh) that the previous test's SIGKILLed
  // worker was running is found stalled by these workers, rightly: it is that test's crash, not this one's.
  const stalls = (a.output() + b.output())
    .split('\n')
    .filter((line) => line.includes('job stalled') && !line.includes('"queue":"verify"'));
  expect(stalls).toEqual([]);
  expect(postsByLabel('pair')).toEqual(expectedLabels('pair', 60));
  // No crash here, so no repeats: each webhook-id arrived exactly once, and the relay recorded one attempt for it.
  expect(countById(webhooksFor(expected))).toEqual(new Map(expected.map((id) => [id, 1])));
  const records = await api.store.db
    .collection('webhook_deliveries')
    .find({ _id: { $in: expected as any[] } })
    .toArray();
  expect(records.map((r) => r.attempts.length)).toEqual(expected.map(() => 1));
  // Each event's job completed (a job may have waited and run again when it met another job's fresh post claim,
  // which is not a second delivery: the posts above are counted), and both processes took part.
  const eventIds = (await api.store.threads.find({ _id: { $in: ids } }).toArray()).map((t) => t.outbox[0]!.id);
  const states = await Promise.all(eventIds.map((id) => queue.getJobState(id)));
  expect(states).toEqual(eventIds.map(() => 'completed'));
  expect(await metric(a, 'relay_jobs_completed_total{queue="slack"}')).toBeGreaterThan(0);
  expect(await metric(b, 'relay_jobs_completed_total{queue="slack"}')).toBeGreaterThan(0);
}, 120_000);
