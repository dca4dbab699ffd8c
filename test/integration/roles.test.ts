// RELAY_ROLES on real relays sharing one database and queue prefix: an api-only relay stores and enqueues but
// never delivers, a worker-only relay delivers what it queued, and a bot-only relay answers Slack and nothing else.
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { startFakeSlack, type FakeSlack } from '../../scripts/fake-slack/fake-slack-api';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { postSignedForm } from '../../scripts/fake-slack/slack-requests';
import { testRedisUrl } from '../helpers/test-env';
import { waitUntil } from '../helpers/wait-until';
import { deliveredHandoff, press } from '../helpers/slack-dm';

const RECIPIENT = 'U0ROLES01';
const ACCEPTER = 'U0ROLES02';
let slack: FakeSlack;
let api: TestRelay;
let worker: TestRelay | undefined;
let bot: TestRelay | undefined;
let connection: Redis;
let slackQueue: Queue;

/** Settings that make another relay work on the api relay's data and queues. */
const sameData = () => ({
  MONGODB_DB: api.config.mongodbDb,
  RELAY_QUEUE_PREFIX: api.config.queuePrefix,
  RELAY_KEY_PEPPER: api.config.keyPepper!,
});

beforeAll(async () => {
  slack = await startFakeSlack();
  slack.addUser(RECIPIENT);
  slack.addUser(ACCEPTER);
  api = await startTestRelay({ name: 'roles', slack, env: { RELAY_ROLES: 'api' } });
  connection = new Redis(testRedisUrl(), { maxRetriesPerRequest: null });
  slackQueue = new Queue('slack', { connection, prefix: api.config.queuePrefix });
});

afterAll(async () => {
  await bot?.stop();
  await worker?.stop();
  await api?.stop();
  await slackQueue?.close();
  connection?.disconnect();
  await slack?.close();
});

test('an api-only relay stores the handoff and leaves its Slack job waiting; a worker-only relay then delivers it once', async () => {
  const sender = await api.register({ handle: 'sender@acme' });
  await api.register({ handle: 'recipient@acme', slack_user_id: RECIPIENT });
  const sent = await api.rpc(sender, 'message/send', {
    recipient: 'recipient@acme',
    intent: 'inform',
    message: { parts: [{ type: 'text', text: 'roles: split fleet' }] },
  });
  const threadId = sent.body.result.task_id as string;
  expect((await api.rpc(sender, 'tasks/get', { task_id: threadId })).body.result.status).toBe('pending');

  // The job is on the queue, and it stays there: nothing in this relay takes jobs.
  const eventId = (await api.store.threads.findOne({ _id: threadId }))!.outbox[0]!.id;
  const job = await slackQueue.getJob(eventId);
  expect(job).toBeDefined();
  expect(await job!.getState()).toBe('waiting');
  expect(slack.callsTo('chat.postMessage')).toHaveLength(0);

  worker = await startTestRelay({ name: 'roles_worker', slack, env: { RELAY_ROLES: 'worker', ...sameData() } });
  const posted = await slack.waitFor('chat.postMessage', (c) => String(c.args.text).includes('roles: split fleet'));
  expect(posted.args.channel).toBe(slack.imChannelId(RECIPIENT));
  await waitUntil(
    async () => (await api.store.threads.findOne({ _id: threadId }))?.slack ?? undefined,
    'the DM to be recorded on the thread',
  );
  expect(slack.callsTo('chat.postMessage')).toHaveLength(1);
});

test('a worker-only relay serves health and metrics, and no API', async () => {
  expect((await fetch(`${worker!.url}/healthz`)).status).toBe(200);
  expect((await fetch(`${worker!.url}/readyz`)).status).toBe(200);
  // The DM's job counts as completed once the processor returns, which is a moment after the DM is recorded on the
  // thread (what the test above waited for): wait for the counter rather than read it once.
  const completed = await waitUntil(async () => {
    const metrics = await fetch(`${worker!.url}/metrics`, { headers: { authorization: `Bearer ${worker!.adminKey}` } });
    expect(metrics.status).toBe(200);
    const text = await metrics.text();
    return /^relay_jobs_completed_total\{queue="slack"\} [1-9]/m.test(text) ? text : null;
  }, 'the slack job counted as completed in /metrics');
  expect(completed).toMatch(/^relay_jobs_completed_total\{queue="slack"\} [1-9]/m);
  for (const [method, path] of [
    ['POST', '/a2a'],
    ['POST', '/mcp'],
    ['POST', '/admin/agents'],
    ['GET', '/agents/me'],
    ['GET', '/admin/queues'],
    ['POST', '/slack/events'],
  ]) {
    const response = await fetch(`${worker!.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${worker!.adminKey}` },
    });
    expect([path, response.status]).toEqual([path, 404]);
  }
});

test('a bot-only relay answers signed Slack requests at /slack/events and 404 to every API route', async () => {
  bot = await startTestRelay({ name: 'roles_bot', slack, env: { RELAY_ROLES: 'bot', ...sameData() } });
  const command = {
    command: '/handoff',
    text: 'help',
    user_id: RECIPIENT,
    team_id: slack.teamId,
    channel_id: slack.imChannelId(RECIPIENT),
    response_url: slack.responseUrl(),
    trigger_id: '1.2.3',
  };
  const signed = await postSignedForm(`${bot.url}/slack/events`, bot.signingSecret, command);
  expect(signed.status).toBe(200);
  await slack.waitFor('response_url', (c) => String(c.args.text).includes('`/handoff help`'));
  expect((await postSignedForm(`${bot.url}/slack/events`, bot.signingSecret, command, { unsigned: true })).status).toBe(
    401,
  );

  for (const [method, path] of [
    ['POST', '/a2a'],
    ['POST', '/mcp'],
    ['POST', '/admin/agents'],
    ['GET', '/agents'],
    ['GET', '/admin/queues'],
    ['GET', '/inbox/00000000-0000-4000-8000-000000000000'],
  ]) {
    const response = await fetch(`${bot.url}${path}`, { method, headers: { authorization: `Bearer ${bot.adminKey}` } });
    expect([path, response.status]).toEqual([path, 404]);
  }
  expect((await fetch(`${bot.url}/healthz`)).status).toBe(200);
});

test('a worker without the Slack settings hands a Slack Accept to a worker with them instead of losing the click', async () => {
  const sender = await api.register({ handle: 'plain-sender@acme' });
  await api.register({ handle: 'plain-recipient@acme', slack_user_id: ACCEPTER });
  // The DM is posted by the worker with Slack; then that worker stops and one without Slack takes its place.
  const dm = await deliveredHandoff(api, slack, sender, {
    to: 'plain-recipient@acme',
    recipientSlackUser: ACCEPTER,
    summary: 'roles: accept beside a worker without Slack',
  });
  await worker!.stop();
  worker = undefined;
  const plain = await startTestRelay({ name: 'roles_plain', env: { RELAY_ROLES: 'worker', ...sameData() } });
  const verify = new Queue('verify', { connection, prefix: api.config.queuePrefix });
  const sync = new Queue('slack-sync', { connection, prefix: api.config.queuePrefix });
  try {
    expect((await press(bot!, dm.click('handoff_accept'))).status).toBe(200);
    // The worker without Slack takes the click's job off `verify` and hands it to the Slack sync lane, where it waits
    // (no worker with Slack runs); the handoff is still pending.
    const handed = await waitUntil(
      async () => (await sync.getJobs(['waiting'])).find((job) => job.data.thread_id === dm.threadId),
      'the accept handed to the Slack sync lane',
    );
    expect(handed.name).toBe('slack-accept');
    expect(await (await verify.getJob(handed.id!))?.getState()).toBe('completed');
    expect((await api.store.threads.findOne({ _id: dm.threadId }))!.status).toBe('pending');

    // A worker with Slack comes: it runs the accept, and the DM says so.
    worker = await startTestRelay({ name: 'roles_worker', slack, env: { RELAY_ROLES: 'worker', ...sameData() } });
    await waitUntil(
      async () => ((await api.store.threads.findOne({ _id: dm.threadId }))!.status === 'accepted' ? true : undefined),
      'the handoff accepted by the worker with Slack',
    );
    await slack.waitFor(
      'chat.update',
      (c) => c.args.ts === dm.ts && JSON.stringify(c.args.blocks).includes('Accepted'),
    );
  } finally {
    await verify.close();
    await sync.close();
    await plain.stop();
  }
});
