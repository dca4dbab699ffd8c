// Fault: Redis dies while handoffs are sent. The API still answers "pending" (the thread and its outbox event
// are stored), and once Redis is back the outbox sweep delivers every DM exactly once and every webhook (to
// sender and recipient) once per webhook-id, each verifying with standardwebhooks.
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { startRedis } from '../../scripts/local-services/redis';
import { startFakeSlack, type FakeSlack } from '../../scripts/fake-slack/fake-slack-api';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { waitUntil } from '../helpers/wait-until';
import { withVerifiedHook } from '../helpers/verified-hook';
import { verifyWebhook, WebhookReceiver } from '../../scripts/webhook-receiver';

const RECIPIENT = 'U0OUTAGE1';
const COUNT = 100;
let slack: FakeSlack;
let relay: TestRelay;
let redis: Awaited<ReturnType<typeof startRedis>>;
let hooks: WebhookReceiver;

beforeAll(async () => {
  redis = await startRedis({ log: () => {} });
  slack = await startFakeSlack();
  slack.addUser(RECIPIENT);
  hooks = await new WebhookReceiver().start();
  relay = await startTestRelay({
    name: 'redis_outage',
    slack,
    env: {
      REDIS_URL: redis.url,
      RELAY_WEBHOOK_ALLOW_PRIVATE: '1',
      RELAY_WEBHOOK_RETRY_SCHEDULE: '100ms,200ms,300ms,500ms,1s,2s',
    },
  });
});

afterAll(async () => {
  await relay?.stop();
  await slack?.close();
  await hooks?.stop();
  await redis?.stop();
});

test(`${COUNT} handoffs sent while Redis is down are all answered; after it returns each DM is posted once and each webhook arrives once per webhook-id`, async () => {
  const sender = await withVerifiedHook(relay, hooks, 'sender@acme');
  const recipient = await withVerifiedHook(relay, hooks, 'recipient@acme', { slack_user_id: RECIPIENT });
  const secrets: Record<string, string> = { '/sender': sender.secret, '/recipient': recipient.secret };

  await redis.kill();
  const answers = await Promise.all(
    Array.from({ length: COUNT }, (_, i) =>
      relay.rpc(sender.key, 'message/send', {
        recipient: 'recipient@acme',
        intent: 'inform',
        message: { parts: [{ type: 'text', text: `during outage #${i}#` }] },
      }),
    ),
  );
  expect(answers.map((a) => a.body.error ?? a.body.result.status.state)).toEqual(Array(COUNT).fill('pending'));
  const ids = answers.map((a) => a.body.result.task_id as string);
  const waiting = await relay.store.threads.find({ pending_since: { $gte: new Date(0) } }).toArray();
  expect(new Set(waiting.map((t) => t._id))).toEqual(new Set(ids));
  expect(slack.callsTo('chat.postMessage')).toHaveLength(0);
  expect(hooks.events()).toHaveLength(0);

  const outageEnded = Date.now();
  redis = await startRedis({ port: redis.port, log: () => {} });
  const threads = await relay.store.threads.find({ _id: { $in: ids } }).toArray();
  const created = threads.map((t) => t.outbox.find((e) => e.type === 'thread.created')!.id);
  const expectedIds = created.flatMap((eventId) => [`${eventId}.sender@acme`, `${eventId}.recipient@acme`]).sort();
  const deliveries = relay.store.db.collection('webhook_deliveries');

  // Done means: every DM and every delivery recorded, the outbox clean, and no job left that could still send.
  const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
  const queues = ['slack', 'webhooks'].map((name) => new Queue(name, { connection, prefix: relay.config.queuePrefix }));
  let progress = 'nothing yet';
  try {
    await waitUntil(
      async () => {
        // Cheap checks first: polling the database all along would slow the deliveries it waits for.
        const posts = slack.callsTo('chat.postMessage').length;
        const events = hooks.events().length;
        progress = `${posts} DMs and ${events} webhooks received`;
        if (posts < COUNT || events < expectedIds.length) return false;
        const dms = await relay.store.threads.countDocuments({ _id: { $in: ids }, slack: { $ne: null } });
        const delivered = await deliveries.countDocuments({ _id: { $in: expectedIds as any[] }, status: 'delivered' });
        const dirty = await relay.store.outbox.count();
        progress = `${dms} DMs and ${delivered} webhooks recorded, ${dirty} events in the outbox`;
        if (dms < COUNT || delivered < expectedIds.length || dirty > 0) return false;
        for (const queue of queues) {
          const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'waiting-children');
          progress = `all recorded, ${queue.name} still holds ${JSON.stringify(counts)}`;
          if (Object.values(counts).some((n) => n > 0)) return false;
        }
        return true;
      },
      `${COUNT} DMs and ${expectedIds.length} webhooks recorded, a clean outbox and empty queues`,
      // About 35 s on a 2-core machine under heavy load (FerretDB bound: ~3 handoffs a second); far less when idle.
      80_000,
    ).catch((error: Error) => {
      throw new Error(`${error.message} (last seen: ${progress})`);
    });
  } finally {
    await Promise.all(queues.map((q) => q.close()));
    connection.disconnect();
  }
  console.info(
    `redis-outage: everything delivered and settled ${Date.now() - outageEnded} ms after Redis was started again`,
  );

  // Slack: one DM per thread, none twice.
  const posted = slack
    .callsTo('chat.postMessage')
    .map((c) => String((c.args.text as string).match(/during outage #\d+#/)?.[0]));
  expect(posted.sort()).toEqual(Array.from({ length: COUNT }, (_, i) => `during outage #${i}#`).sort());

  // Webhooks: exactly the expected (event, participant) ids, none twice, each signed for its owner.
  const received = hooks.events();
  expect(received.map((r) => String(r.headers['webhook-id'])).sort()).toEqual(expectedIds);
  for (const request of received) {
    const payload = verifyWebhook(secrets[request.path]!, request);
    expect(String(request.headers['webhook-id'])).toBe(`${payload.data.event_id}.${request.path.slice(1)}@acme`);
    expect(payload).toMatchObject({
      type: 'thread.created',
      data: { thread_id: expect.any(String), by: 'sender@acme' },
    });
    expect(ids).toContain(payload.data.thread_id);
  }
}, 110_000);
