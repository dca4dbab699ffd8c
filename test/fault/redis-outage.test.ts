// Fault: Redis dies while handoffs are sent. The API still answers "pending" (the thread and its outbox event
// are stored), and once Redis is back the outbox sweep delivers every DM exactly once.
import { startRedis } from '../../scripts/local-services';
import { startFakeSlack, type FakeSlack } from '../fake-slack/fake-slack-api';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { waitUntil } from '../helpers/wait-until';

const RECIPIENT = 'U0OUTAGE1';
let slack: FakeSlack;
let relay: TestRelay;
let redis: Awaited<ReturnType<typeof startRedis>>;

beforeAll(async () => {
  redis = await startRedis({ log: () => {} });
  slack = await startFakeSlack();
  slack.addUser(RECIPIENT);
  relay = await startTestRelay({ name: 'redis_outage', slack, env: { REDIS_URL: redis.url } });
});

afterAll(async () => {
  await relay?.stop();
  await slack?.close();
  await redis?.stop();
});

test('handoffs sent while Redis is down are all answered, then each DM is delivered once after Redis returns', async () => {
  const sender = await relay.register({ handle: 'sender@acme' });
  await relay.register({ handle: 'recipient@acme', slack_user_id: RECIPIENT });

  await redis.kill();
  const answers = await Promise.all(
    Array.from({ length: 30 }, (_, i) =>
      relay.rpc(sender, 'message/send', { recipient: 'recipient@acme', intent: 'inform', message: { parts: [{ type: 'text', text: `during outage ${i}` }] } }),
    ),
  );
  expect(answers.map((a) => a.body.error ?? a.body.result.status.state)).toEqual(Array(30).fill('pending'));
  const ids = answers.map((a) => a.body.result.task_id as string);
  expect(await relay.store.threads.countDocuments({ _id: { $in: ids }, outbox_dirty: true })).toBe(30);
  expect(slack.callsTo('chat.postMessage')).toHaveLength(0);

  redis = await startRedis({ port: redis.port, log: () => {} });
  await waitUntil(async () => slack.callsTo('chat.postMessage').length >= 30 || undefined, '30 DMs after Redis returned', 30_000);
  // Give any duplicate a chance to show up before counting.
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  const posted = slack.callsTo('chat.postMessage').map((c) => String((c.args.text as string).match(/during outage \d+/)?.[0]));
  expect(posted.sort()).toEqual(Array.from({ length: 30 }, (_, i) => `during outage ${i}`).sort());
  const threads = await relay.store.threads.find({ _id: { $in: ids } }).toArray();
  expect(threads.every((t) => t.slack !== null)).toBe(true);
  await waitUntil(async () => (await relay.store.threads.countDocuments({ _id: { $in: ids }, outbox_dirty: true })) === 0 || undefined, 'the outbox to be clean', 10_000);
}, 90_000);
