// GET /metrics on a real relay (FerretDB, Redis, BullMQ worker, fake Slack): auth, and the figures an
// operator watches moving after real deliveries, retries and a dead-lettered job; plus request ids.
import { randomBytes } from 'node:crypto';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { startFakeSlack, type FakeSlack } from '../../scripts/fake-slack/fake-slack-api';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { testRedisUrl } from '../helpers/test-env';
import { waitUntil } from '../helpers/wait-until';

const RECIPIENT = 'U0METRICS1';
const METRICS_TOKEN = `mt_${randomBytes(24).toString('base64url')}`;
let slack: FakeSlack;
let relay: TestRelay;
let sender: string;

beforeAll(async () => {
  slack = await startFakeSlack();
  slack.addUser(RECIPIENT);
  relay = await startTestRelay({ name: 'metrics', slack, env: { RELAY_METRICS_TOKEN: METRICS_TOKEN } });
  sender = await relay.register({ handle: 'sender@acme' });
  await relay.register({ handle: 'recipient@acme', slack_user_id: RECIPIENT });
});

afterAll(async () => {
  await relay?.stop();
  await slack?.close();
});

async function scrape(token = METRICS_TOKEN): Promise<string> {
  const response = await fetch(`${relay.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
  return response.text();
}

/** The value of one sample, e.g. value(text, 'relay_jobs_completed_total{queue="slack"}'); 0 when absent. */
function value(text: string, sample: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${sample} `));
  return line ? Number(line.slice(sample.length + 1)) : 0;
}

function handoff(text: string) {
  return relay.rpc(sender, 'message/send', {
    recipient: 'recipient@acme',
    intent: 'inform',
    message: { parts: [{ type: 'text', text }] },
  });
}

test('GET /metrics answers 401 without a token or with a wrong one, and 200 to the metrics token or the admin key', async () => {
  expect((await fetch(`${relay.url}/metrics`)).status).toBe(401);
  expect((await fetch(`${relay.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}x` } })).status).toBe(
    401,
  );
  const apiKeyTry = await fetch(`${relay.url}/metrics`, { headers: { authorization: `Bearer ${sender}` } });
  expect(apiKeyTry.status).toBe(401);
  expect(await apiKeyTry.json()).toMatchObject({ code: 'unauthenticated' });
  await scrape(METRICS_TOKEN);
  await scrape(relay.adminKey);
});

test('a delivered handoff moves the slack completed counter, the delivery latency histogram and the /a2a request histogram', async () => {
  const before = await scrape();
  const sent = await handoff('metrics: one delivery');
  expect(sent.body.result.status.state).toBe('pending');
  await slack.waitFor('chat.postMessage', (c) => String(c.args.text).includes('metrics: one delivery'));
  const after = await waitUntil(async () => {
    const text = await scrape();
    return (
      value(text, 'relay_jobs_completed_total{queue="slack"}') >
        value(before, 'relay_jobs_completed_total{queue="slack"}') && text
    );
  }, 'the completed counter to move');

  expect(value(after, 'relay_delivery_latency_seconds_count{channel="slack"}')).toBeGreaterThan(
    value(before, 'relay_delivery_latency_seconds_count{channel="slack"}'),
  );
  // Latency is measured from the event's creation, so it is positive and far below the largest bucket.
  expect(value(after, 'relay_delivery_latency_seconds_sum{channel="slack"}')).toBeGreaterThan(0);
  expect(value(after, 'relay_delivery_latency_seconds_bucket{le="900",channel="slack"}')).toBe(
    value(after, 'relay_delivery_latency_seconds_count{channel="slack"}'),
  );
  expect(
    value(after, 'relay_http_request_duration_seconds_count{method="POST",route="/a2a",status="200"}'),
  ).toBeGreaterThanOrEqual(1);
  // Neither side has a webhook: the event got no webhooks job, and nothing was delivered that way.
  expect(value(after, 'relay_jobs_completed_total{queue="webhooks"}')).toBe(
    value(before, 'relay_jobs_completed_total{queue="webhooks"}'),
  );
  expect(value(after, 'relay_delivery_latency_seconds_count{channel="webhook"}')).toBe(
    value(before, 'relay_delivery_latency_seconds_count{channel="webhook"}'),
  );
  // Default process metrics are there.
  expect(value(after, 'process_resident_memory_bytes')).toBeGreaterThan(0);
  expect(after).toMatch(/^relay_outbox_backlog_threads \d+$/m);
});

test('a Slack failure counts as a retried attempt, and a malformed job as a failed one', async () => {
  const before = await scrape();
  slack.failNext('chat.postMessage', { body: { ok: false, error: 'internal_error' } });
  await handoff('metrics: retried once');
  await slack.waitFor('chat.postMessage', (c) => String(c.args.text).includes('metrics: retried once'));
  await waitUntil(
    async () =>
      value(await scrape(), 'relay_jobs_retried_total{queue="slack"}') ===
      value(before, 'relay_jobs_retried_total{queue="slack"}') + 1,
    'one retry counted',
  );

  // A job no processor can read goes straight to the failed list (UnrecoverableError), counted once.
  const connection = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
  const queue = new Queue('slack', { connection, prefix: relay.config.queuePrefix });
  try {
    await queue.add('thread.created', { thread_id: 'not-a-uuid' }, { attempts: 3 });
    await waitUntil(
      async () =>
        value(await scrape(), 'relay_jobs_failed_total{queue="slack"}') ===
        value(before, 'relay_jobs_failed_total{queue="slack"}') + 1,
      'one failure counted',
    );
  } finally {
    await queue.close();
    connection.disconnect();
  }
});

test('the request histogram is labelled by route pattern, never by the raw URL', async () => {
  await fetch(`${relay.url}/admin/agents/someone-${randomBytes(4).toString('hex')}@acme/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${relay.adminKey}` },
  });
  await fetch(`${relay.url}/no/such/${randomBytes(4).toString('hex')}`);
  const text = await scrape();
  expect(
    value(
      text,
      'relay_http_request_duration_seconds_count{method="POST",route="/admin/agents/:handle/keys",status="404"}',
    ),
  ).toBe(1);
  expect(
    value(text, 'relay_http_request_duration_seconds_count{method="GET",route="unmatched",status="404"}'),
  ).toBeGreaterThanOrEqual(1);
  expect(text).not.toMatch(/someone-|\/no\/such/);
});

test('the outbox backlog gauge counts events that are not on a queue yet', async () => {
  const sent = await handoff('metrics: backlog');
  await slack.waitFor('chat.postMessage', (c) => String(c.args.text).includes('metrics: backlog'));
  await waitUntil(async () => value(await scrape(), 'relay_outbox_backlog_threads') === 0, 'a clean outbox');
  // A job not finished yet, as a failed publish leaves it (dated ahead so the sweep leaves it alone); the scrape must count it.
  const threadId = sent.body.result.task_id as string;
  const event = (await relay.store.threads.findOne({ _id: threadId }))!.outbox[0]!;
  await relay.store.threads.updateOne(
    { _id: threadId },
    { $set: { jobs_pending: [`slack:${event.id}`], pending_since: new Date(Date.now() + 3_600_000) } },
  );
  expect(value(await scrape(), 'relay_outbox_backlog_threads')).toBe(1);
});

describe('request ids', () => {
  test('a sane incoming X-Request-Id is echoed and used in error bodies', async () => {
    const response = await fetch(`${relay.url}/agents/me`, { headers: { 'x-request-id': 'lb-7f3a.42:trace_1' } });
    expect(response.headers.get('x-request-id')).toBe('lb-7f3a.42:trace_1');
    expect(await response.json()).toMatchObject({ code: 'unauthenticated', request_id: 'lb-7f3a.42:trace_1' });
  });

  test('an unusable one (too long, or with spaces or markup) is replaced by a generated id', async () => {
    for (const bad of ['x'.repeat(200), 'two words', '<script>']) {
      const response = await fetch(`${relay.url}/healthz`, { headers: { 'x-request-id': bad } });
      expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    }
  });
});
