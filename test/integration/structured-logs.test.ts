// The relay's pino log at debug level, captured while a whole flow runs on real services (register, handoff,
// Slack DM, a failed Slack attempt, a signed Accept click, key and webhook secret rotation, webhook deliveries, wrong keys): no secret ever appears,
// every HTTP line carries a request id, every line naming a thread carries its thread_id.
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { loadConfig } from '../../relay-core/ops/config';
import { createLogger } from '../../relay-core/ops/logger';
import { findFreePort } from '../../scripts/local-services/ports';
import { startRelay, type RunningRelay } from '../../scripts/relay';
import { startFakeSlack, type FakeSlack } from '../../scripts/fake-slack/fake-slack-api';
import { clickButton } from '../../scripts/fake-slack/slack-requests';
import { testMongoUrl, testRedisUrl, uniqueName } from '../helpers/test-env';
import { waitUntil } from '../helpers/wait-until';
import { WebhookReceiver } from '../../scripts/webhook-receiver';
import { queuePrefix } from '../helpers/queue-keys';

const RECIPIENT = 'U0LOGS001';
const adminKey = `hra_${randomBytes(24).toString('base64url')}`;
const pepper = randomBytes(32).toString('hex');
const signingSecret = randomBytes(16).toString('hex');
const metricsToken = `mt_${randomBytes(24).toString('base64url')}`;
const lines: string[] = [];
let slack: FakeSlack;
let relay: RunningRelay;
let hook: WebhookReceiver;

beforeAll(async () => {
  slack = await startFakeSlack();
  slack.addUser(RECIPIENT);
  hook = await new WebhookReceiver().start();
  const name = uniqueName('logs');
  const config = loadConfig({
    PORT: String(await findFreePort()),
    MONGODB_URL: testMongoUrl(),
    MONGODB_DB: name,
    REDIS_URL: testRedisUrl(),
    RELAY_QUEUE_PREFIX: queuePrefix('logs'),
    RELAY_ADMIN_KEY: adminKey,
    RELAY_KEY_PEPPER: pepper,
    RELAY_METRICS_TOKEN: metricsToken,
    SLACK_BOT_TOKEN: slack.token,
    SLACK_SIGNING_SECRET: signingSecret,
    SLACK_API_URL: slack.url,
    RELAY_DIGEST_AT: 'off', // no daily digest DMs in this test's Slack
    RELAY_WEBHOOK_ALLOW_PRIVATE: '1',
    RELAY_WEBHOOK_RETRY_SCHEDULE: '100ms,200ms',
  });
  const capture = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  relay = await startRelay({
    config: { ...config, mongodbUrl: config.mongodbUrl!, adminKey, keyPepper: pepper },
    log: createLogger('debug', capture),
    sweepIntervalMs: 500,
  });
});

afterAll(async () => {
  await relay?.stop();
  await slack?.close();
  await hook?.stop();
});

async function call(
  method: string,
  path: string,
  key: string | undefined,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const response = await fetch(`${relay.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json().catch(() => null)) as any };
}

test('a full flow at debug level logs no secret, and ties lines to their request and thread', async () => {
  const secrets: Record<string, string> = { adminKey, pepper, signingSecret, metricsToken, slackToken: slack.token };
  const senderReg = await call('POST', '/admin/agents', adminKey, {
    handle: 'sender@acme',
    name: 'S',
    role: 'engineer',
  });
  const recipientReg = await call('POST', '/admin/agents', adminKey, {
    handle: 'recipient@acme',
    name: 'R',
    role: 'engineer',
    slack_user_id: RECIPIENT,
  });
  secrets.senderKey = senderReg.body.api_key;
  secrets.recipientKey = recipientReg.body.api_key;
  const card = await call('PUT', '/agents/me/card', secrets.recipientKey, { notification_url: hook.url() });
  secrets.webhookSecret = card.body.notification_secret;
  secrets.rotatedWebhookSecret = (
    await call('POST', '/agents/me/notification/secret', secrets.recipientKey)
  ).body.notification_secret;

  // One Slack failure, so the failed-attempt path logs too.
  slack.failNext('chat.postMessage', { body: { ok: false, error: 'internal_error' } });
  const sent = await call('POST', '/a2a', secrets.senderKey, {
    jsonrpc: '2.0',
    id: 1,
    method: 'message/send',
    params: {
      recipient: 'recipient@acme',
      intent: 'inform',
      message: { parts: [{ type: 'text', text: 'logs: full flow' }] },
    },
  });
  const threadId = sent.body.result.task_id as string;
  const thread = await waitUntil(
    async () => (await relay.store.threads.findOne({ _id: threadId }))?.slack ?? undefined,
    'the DM to be recorded',
  );
  const post = slack.callsTo('chat.postMessage').find((c) => c.response.ts === thread.ts)!;
  const accept = (post.args.blocks as any[])
    .flatMap((b) => (b.type === 'actions' ? b.elements : []))
    .find((e) => e.action_id === 'handoff_accept');
  const click = await clickButton(`${relay.url}/slack/events`, signingSecret, {
    user: RECIPIENT,
    channel: thread.channel,
    messageTs: thread.ts,
    actionId: 'handoff_accept',
    value: accept.value,
    responseUrl: slack.responseUrl(RECIPIENT),
  });
  expect(click.status).toBe(200);
  await waitUntil(
    async () => (await relay.store.threads.findOne({ _id: threadId }))?.status === 'accepted',
    'the accept',
  );
  await waitUntil(async () => slack.callsTo('chat.update').length >= 1, 'the DM to be updated');

  const rotated = await call('POST', '/agents/me/keys', secrets.senderKey);
  secrets.rotatedKey = rotated.body.api_key;
  // Wrong credentials are not echoed either.
  secrets.wrongKey = `hr_${randomBytes(6).toString('hex')}_${randomBytes(32).toString('base64url')}`;
  await call('GET', '/agents/me', secrets.wrongKey);
  await call('POST', '/admin/agents', secrets.wrongKey, { handle: 'x@acme', name: 'X', role: 'r' });
  await call('GET', '/metrics', metricsToken);
  await call('GET', '/healthz', undefined, undefined, { 'x-request-id': 'probe-1' });

  await waitUntil(
    async () => lines.some((l) => l.includes('"job completed"') && l.includes('thread.accepted')),
    'the accepted job to be logged',
  );
  await waitUntil(
    async () => hook.requests.some((r) => r.json?.type === 'thread.accepted') || undefined,
    'the accepted webhook',
  );

  const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  // It ran at debug, and the paths above all logged.
  expect(parsed.some((p) => p.level === 20)).toBe(true);
  for (const msg of [
    'teammate registered',
    'handoff created',
    'slack delivery attempt failed',
    'slack message posted',
    'thread transition',
    'api key rotated',
    'http request',
    'job completed',
    'webhook delivered',
    'webhook secret rotated',
  ]) {
    expect([msg, parsed.some((p) => p.msg === msg)]).toEqual([msg, true]);
  }

  for (const [name, secret] of Object.entries(secrets)) {
    expect(typeof secret).toBe('string');
    const leaking = lines.filter((l) => l.includes(secret));
    expect([name, leaking]).toEqual([name, []]);
  }

  const httpLines = parsed.filter((p) => p.msg === 'http request');
  expect(
    httpLines.every(
      (p) => typeof p.request_id === 'string' && typeof p.route === 'string' && typeof p.status === 'number',
    ),
  ).toBe(true);
  expect(httpLines.find((p) => p.request_id === 'probe-1')).toMatchObject({
    route: '/healthz',
    status: 200,
    level: 20,
  });

  const aboutThread = lines.filter((l) => l.includes(threadId));
  expect(aboutThread.length).toBeGreaterThanOrEqual(4);
  expect(aboutThread.map((l) => JSON.parse(l).thread_id)).toEqual(aboutThread.map(() => threadId));
}, 60_000);
