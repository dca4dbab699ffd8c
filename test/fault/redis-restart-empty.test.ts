// Fault: Redis restarts empty while delivery jobs of a burst of handoffs wait in it: Slack rate-limits a DM for a
// minute, which holds the first Slack lane (one workspace: BullMQ's limiter) with the DMs not posted yet waiting
// behind it, and every webhook receiver answers 503. Nothing is lost: the outbox still holds each event whose jobs
// had not finished and the sweep enqueues them again, the webhook deliveries still pending get their jobs back
// (also those of events whose own jobs had finished), and each DM is posted once and each webhook delivered once.
import { Queue } from 'bullmq';
import { SLACK_FIRST_LANE, SLACK_LANE_LIMITER, SLACK_LANES } from '../../relay-core/queues/slack-lanes';
import { startRedis } from '../../scripts/local-services/redis';
import { startFakeSlack, type FakeSlack } from '../../scripts/fake-slack/fake-slack-api';
import { verifyWebhook, WebhookReceiver, echoChallenge, type ReceivedRequest } from '../../scripts/webhook-receiver';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { waitUntil } from '../helpers/wait-until';
import { withVerifiedHook } from '../helpers/verified-hook';

const RECIPIENT = 'U0EMPTY01';
const COUNT = 40;
let slack: FakeSlack;
let relay: TestRelay;
let redis: Awaited<ReturnType<typeof startRedis>>;
let hooks: WebhookReceiver;
/** Until Redis is back, every event is answered 503; then 200, and each webhook-id answered 200 is counted. */
let receiving = false;
const acknowledged: string[] = [];

beforeAll(async () => {
  redis = await startRedis({ log: () => {} });
  slack = await startFakeSlack();
  slack.addUser(RECIPIENT);
  hooks = await new WebhookReceiver().start();
  hooks.answer = (request: ReceivedRequest) => {
    if (request.json?.type === 'endpoint.challenge') return echoChallenge(request);
    if (!receiving) return { status: 503 };
    acknowledged.push(String(request.headers['webhook-id']));
    return { status: 200, body: '{}' };
  };
  relay = await startTestRelay({
    name: 'redis_empty',
    slack,
    // The first retry is far off: a delivery's job sits delayed in Redis until Redis is restarted.
    env: { REDIS_URL: redis.url, RELAY_WEBHOOK_ALLOW_PRIVATE: '1', RELAY_WEBHOOK_RETRY_SCHEDULE: '10m,10m' },
  });
});

afterAll(async () => {
  await relay?.stop();
  await slack?.close();
  await hooks?.stop();
  await redis?.stop();
});

test(`${COUNT} handoffs whose jobs all wait in Redis when it restarts empty: each DM posted once, each webhook delivered once`, async () => {
  const sender = await withVerifiedHook(relay, hooks, 'sender@acme');
  const recipient = await withVerifiedHook(relay, hooks, 'recipient@acme', { slack_user_id: RECIPIENT });
  const secrets: Record<string, string> = { '/sender': sender.secret, '/recipient': recipient.secret };
  // One of the first DMs is rate-limited for a minute: the first lane holds, and the DMs not posted by then wait in
  // Redis. The events whose DMs went out leave the outbox, and only their webhook deliveries wait.
  slack.rateLimitNext('chat.postMessage', { times: 1, retryAfterSeconds: 60 });

  const answers = await Promise.all(
    Array.from({ length: COUNT }, (_, i) =>
      relay.rpc(sender.key, 'message/send', {
        recipient: 'recipient@acme',
        intent: 'inform',
        message: { parts: [{ type: 'text', text: `before the restart #${i}#` }] },
      }),
    ),
  );
  const ids = answers.map((a) => a.body.result.task_id as string);
  const threads = await relay.store.threads.find({ _id: { $in: ids } }).toArray();
  const created = threads.map((t) => t.outbox.find((e) => e.type === 'thread.created')!.id);
  const expectedIds = created.flatMap((eventId) => [`${eventId}.sender@acme`, `${eventId}.recipient@acme`]).sort();

  // The lane held with no DM in flight, every webhook tried once; the events whose DMs went out have left the outbox.
  const postedDms = () => slack.calls.filter((c) => c.method === 'chat.postMessage' && c.response.ok === true).length;
  const firstLane = new Queue(SLACK_FIRST_LANE, { connection: { url: redis.url }, prefix: relay.config.queuePrefix });
  await waitUntil(
    async () =>
      slack.calls.some((c) => c.response.error === 'ratelimited') &&
      (await firstLane.getRateLimitTtl(SLACK_LANE_LIMITER.max)) > 0 &&
      (await firstLane.getActiveCount()) === 0 &&
      new Set(hooks.events().map((r) => String(r.headers['webhook-id']))).size >= expectedIds.length &&
      (await relay.store.outbox.count()) === COUNT - postedDms(),
    'a DM rate-limited with the lane held, every webhook refused, the unposted DMs’ events in the outbox',
    60_000,
  ).finally(() => firstLane.close());
  expect(postedDms()).toBeLessThan(COUNT);
  expect(acknowledged).toHaveLength(0);

  await redis.kill();
  redis = await startRedis({ port: redis.port, log: () => {} });
  receiving = true;

  const queues = [...SLACK_LANES, 'webhooks'].map(
    (name) => new Queue(name, { connection: { url: redis.url }, prefix: relay.config.queuePrefix }),
  );
  let progress = 'nothing yet';
  await waitUntil(
    async () => {
      const posts = slack.callsTo('chat.postMessage').length;
      progress = `${posts} DMs posted, ${acknowledged.length} webhooks acknowledged`;
      if (posts < COUNT || acknowledged.length < expectedIds.length) return false;
      const waiting = await relay.store.outbox.count();
      progress += `, ${waiting} events in the outbox`;
      if (waiting > 0) return false;
      // Nothing left that could still send: no job waiting, running or delayed.
      for (const queue of queues) {
        const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'waiting-children');
        progress = `all done, ${queue.name} still holds ${JSON.stringify(counts)}`;
        if (Object.values(counts).some((n) => n > 0)) return false;
      }
      return true;
    },
    'every DM posted, every webhook acknowledged, the outbox empty and no job left',
    90_000,
  )
    .catch((error: Error) => {
      throw new Error(`${error.message} (last seen: ${progress})`);
    })
    .finally(() => Promise.all(queues.map((q) => q.close())));

  // Slack: one DM per thread, none twice.
  const posted = slack
    .callsTo('chat.postMessage')
    .map((c) => String((c.args.text as string).match(/before the restart #\d+#/)?.[0]));
  expect(posted.sort()).toEqual(Array.from({ length: COUNT }, (_, i) => `before the restart #${i}#`).sort());
  // Webhooks: each (event, participant) acknowledged exactly once, signed for its owner, recorded delivered.
  expect([...acknowledged].sort()).toEqual(expectedIds);
  for (const request of hooks.events().filter((r) => acknowledged.includes(String(r.headers['webhook-id'])))) {
    expect(verifyWebhook(secrets[request.path]!, request)).toMatchObject({
      type: 'thread.created',
      data: { by: 'sender@acme' },
    });
  }
  const deliveries = relay.store.db.collection('webhook_deliveries');
  expect(await deliveries.countDocuments({ _id: { $in: expectedIds as any[] }, status: 'delivered' })).toBe(
    expectedIds.length,
  );
}, 180_000);
