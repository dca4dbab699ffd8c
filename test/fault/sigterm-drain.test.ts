// Graceful shutdown of the built CLI: SIGTERM while a Slack DM is in flight stops new HTTP at once, lets the
// running delivery finish and record itself, then exits 0.
import { randomBytes } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { startFakeSlack, type FakeSlack } from '../../scripts/fake-slack/fake-slack-api';
import { testMongoUrl, testRedisUrl, uniqueName } from '../helpers/test-env';
import { waitUntil } from '../helpers/wait-until';
import { killRelayProcess, startRelayProcess, type RelayProcess } from './relay-process';
import { startSlowSlackProxy, type SlowSlackProxy } from './slow-slack-proxy';
import { queuePrefix } from '../helpers/queue-keys';

const RECIPIENT = 'U0DRAIN01';
const adminKey = `hra_${randomBytes(24).toString('base64url')}`;
const db = uniqueName('sigterm');
let slack: FakeSlack;
let proxy: SlowSlackProxy;
let relay: RelayProcess | undefined;
let mongo: MongoClient;

beforeAll(async () => {
  slack = await startFakeSlack();
  slack.addUser(RECIPIENT);
  proxy = await startSlowSlackProxy({ target: slack.url, slowMethods: ['chat.postMessage'], delayMs: Infinity });
  mongo = await MongoClient.connect(testMongoUrl());
  relay = await startRelayProcess({
    MONGODB_URL: testMongoUrl(),
    MONGODB_DB: db,
    REDIS_URL: testRedisUrl(),
    RELAY_QUEUE_PREFIX: queuePrefix('sigterm'),
    RELAY_ADMIN_KEY: adminKey,
    RELAY_KEY_PEPPER: randomBytes(32).toString('hex'),
    SLACK_BOT_TOKEN: slack.token,
    SLACK_SIGNING_SECRET: randomBytes(16).toString('hex'),
    SLACK_API_URL: proxy.url,
    RELAY_DIGEST_AT: 'off', // no daily digest DMs in this test's Slack
  });
});

afterAll(async () => {
  await killRelayProcess(relay);
  await proxy?.close();
  await slack?.close();
  await mongo
    ?.db(db)
    .dropDatabase()
    .catch(() => {});
  await mongo?.close();
});

async function post(path: string, key: string, body: unknown) {
  const response = await fetch(`${relay!.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return (await response.json()) as any;
}

test('SIGTERM mid-delivery: new connections are refused, the running DM is posted and recorded, exit status 0', async () => {
  const sender = (await post('/admin/agents', adminKey, { handle: 'sender@acme', name: 'S', role: 'engineer' }))
    .api_key as string;
  await post('/admin/agents', adminKey, {
    handle: 'recipient@acme',
    name: 'R',
    role: 'engineer',
    slack_user_id: RECIPIENT,
  });
  const sent = await post('/a2a', sender, {
    jsonrpc: '2.0',
    id: 1,
    method: 'message/send',
    params: { recipient: 'recipient@acme', intent: 'inform', message: { parts: [{ type: 'text', text: 'drain me' }] } },
  });
  const threadId = sent.result.task_id as string;
  await waitUntil(async () => proxy.held() === 1, 'the DM to be in flight');

  relay!.child.kill('SIGTERM');
  await waitUntil(
    async () =>
      fetch(`${relay!.url}/healthz`).then(
        () => false,
        () => true,
      ),
    'the relay to stop accepting connections',
  );
  // Still running: it is waiting for the delivery it started.
  expect(relay!.child.exitCode).toBeNull();
  expect(relay!.output()).toContain('SIGTERM: draining');

  proxy.release();
  expect(await relay!.exited).toBe(0);
  expect(relay!.output()).not.toContain('exiting with running work unfinished');
  expect(slack.callsTo('chat.postMessage').map((c) => c.args.text)).toEqual([expect.stringContaining('drain me')]);
  const thread = await mongo.db(db).collection<{ _id: string; slack: unknown }>('threads').findOne({ _id: threadId });
  expect(thread?.slack).toMatchObject({ ts: expect.any(String), channel: expect.any(String) });
}, 60_000);
