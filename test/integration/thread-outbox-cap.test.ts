// A long thread's document stays the same size: every write keeps its newest OUTBOX_KEPT events (store/outbox-cap.ts),
// and webhook deliveries carry the event they deliver, so a retry or a re-drive after the thread dropped the event
// still sends the right body; a delivery job queued by an older relay (no event in its data) still reads the thread.
import { Queue } from 'bullmq';
import { BSON } from 'mongodb';
import { OUTBOX_KEPT } from '../../relay-core/store/outbox-cap';
import { deliveryId } from '../../relay-core/webhooks/deliveries';
import { DELIVER_JOB, WebhookQueues } from '../../relay-core/webhooks/webhook-queues';
import type { OutboxEvent, ThreadDoc, WebhookDeliveryDoc } from '../../relay-core/domain/documents';
import { echoChallenge, verifyWebhook, WebhookReceiver, type ReceivedRequest } from '../../scripts/webhook-receiver';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { sendHandoff, text } from '../helpers/handoffs';
import { testRedisUrl } from '../helpers/test-env';
import { waitUntil } from '../helpers/wait-until';

/**
 * The tests that append past OUTBOX_KEPT messages: 40 appends and their deliveries took over 60 s on FerretDB 2 +
 * DocumentDB beside the rest of the suite on two cores (as outbox-cap-redis-outage's 73 did); room like the outage tests'.
 */
const APPENDS_MS = 150_000;

let relay: TestRelay;
let webhooks: Queue;
const receivers: WebhookReceiver[] = [];
let n = 0;

beforeAll(async () => {
  // Three attempts: a failed first one, then retries 100 and 200 ms later.
  relay = await startTestRelay({
    name: 'thread_outbox_cap',
    env: { RELAY_WEBHOOK_ALLOW_PRIVATE: '1', RELAY_WEBHOOK_RETRY_SCHEDULE: '100ms,200ms' },
  });
  webhooks = new Queue('webhooks', { connection: { url: testRedisUrl() }, prefix: relay.config.queuePrefix });
});

afterAll(async () => {
  await webhooks?.close();
  await relay?.stop();
  await Promise.all(receivers.map((r) => r.stop()));
});

const thread = async (id: string): Promise<ThreadDoc> => (await relay.store.threads.findOne({ _id: id }))!;
const deliveries = () => relay.store.db.collection<WebhookDeliveryDoc>('webhook_deliveries');

/** A teammate whose verified endpoint is a fresh receiver (answering 200 unless the test says otherwise). */
async function withHook(): Promise<{ handle: string; key: string; secret: string; hook: WebhookReceiver }> {
  const hook = await new WebhookReceiver().start();
  receivers.push(hook);
  const handle = `t${(n += 1)}@acme`;
  const key = await relay.register({ handle });
  const put = await relay.rest('PUT', '/agents/me/card', key, { notification_url: hook.url() });
  await waitUntil(
    async () => (await relay.rest('GET', '/agents/me', key)).body.notification?.verified,
    `${handle} verified`,
  );
  return { handle, key, secret: put.body.notification_secret, hook };
}

/** Appends `count` messages of the same length, each once the outbox entries of earlier events are gone (as the 200 ms batch has them by then). */
async function append(
  key: string,
  threadId: string,
  count: number,
  after: (i: number) => Promise<void> = async () => {},
): Promise<void> {
  for (let i = 0; i < count; i += 1) {
    await relay.store.outbox.flush();
    const { body } = await relay.rpc(key, 'message/send', {
      task_id: threadId,
      message: text(`message ${String(i).padStart(4, '0')}`),
    });
    if (!body.result) throw new Error(`append ${i}: ${JSON.stringify(body.error)}`);
    await after(i);
  }
}

/** Appends past OUTBOX_KEPT messages, until the thread no longer holds `event` (its first, thread.created). */
async function appendUntilTrimmed(key: string, threadId: string, event: OutboxEvent): Promise<void> {
  await append(key, threadId, OUTBOX_KEPT + 8);
  await waitUntil(
    async () => !(await thread(threadId)).outbox.some((e) => e.id === event.id),
    'thread.created trimmed from the thread',
  );
}

/** What a webhook body says of its event. */
function bodyEvent(secret: string, request: ReceivedRequest) {
  const body = verifyWebhook(secret, request) as { type: string; timestamp: string; data: Record<string, unknown> };
  return {
    type: body.type,
    timestamp: body.timestamp,
    event_id: body.data.event_id,
    by: body.data.by,
    via: body.data.via,
    message_id: body.data.message_id,
  };
}

const expected = (event: OutboxEvent) => ({
  type: event.type,
  timestamp: event.at.toISOString(),
  event_id: event.id,
  by: event.by,
  via: event.via,
  message_id: event.message_id,
});

test(
  `a thread with 100 appended messages holds at most ${OUTBOX_KEPT} events, and its document stays the same size from message 40 on`,
  async () => {
    const alice = await relay.register({ handle: 'alice@acme' });
    await relay.register({ handle: 'bob@acme' });
    const id = await sendHandoff(relay, alice, 'bob@acme');
    // Bytes of the document from message 40 on, without its jobs in flight (`jobs_pending`: as many as the workers
    // have not finished at that moment, bounded by them, not by history), and without `recent_messages` (the open
    // message block's tail on FerretDB, which grew and emptied every 16 messages on its own bound).
    const sizes: number[] = [];
    const withoutTail: number[] = [];
    await append(alice, id, 100, async (i) => {
      if (i + 1 < 40) return;
      const { jobs_pending: _jobs, pending_since: _since, ...doc } = await thread(id);
      sizes.push(BSON.calculateObjectSize(doc));
      withoutTail.push(BSON.calculateObjectSize({ ...doc, recent_messages: [] }));
    });
    await relay.store.outbox.flush();
    await append(alice, id, 1);
    const doc = await thread(id);
    expect(doc.message_seq).toBe(101);
    expect(doc.outbox.length).toBeLessThanOrEqual(OUTBOX_KEPT);
    // The newest events are the ones kept, in order.
    expect(doc.outbox.at(-1)!.type).toBe('thread.message');
    expect(doc.outbox.map((e) => e.at.getTime())).toEqual(
      [...doc.outbox.map((e) => e.at.getTime())].sort((a, b) => a - b),
    );
    // Without the bound every message adds an event of about 150 bytes (61 of them here: some 9 kB).
    expect(Math.max(...withoutTail) - Math.min(...withoutTail)).toBeLessThanOrEqual(64);
    expect(Math.max(...sizes.slice(-20))).toBeLessThanOrEqual(Math.max(...sizes.slice(0, 20)) + 64);
  },
  APPENDS_MS,
);

test(
  'a webhook delivery retried after its event was trimmed from the thread delivers the right body',
  async () => {
    const sender = await withHook();
    const recipient = await withHook();
    const createdAttempts: Array<{ request: ReceivedRequest; inThread: boolean }> = [];
    let threadId = '';
    recipient.hook.answer = async (req) => {
      if (req.json?.type === 'endpoint.challenge') return echoChallenge(req);
      if (req.json?.type !== 'thread.created') return { status: 200 };
      const inThread = (await thread(threadId)).outbox.some((e) => e.type === 'thread.created');
      createdAttempts.push({ request: req, inThread });
      if (createdAttempts.length > 1) return { status: 200 };
      // The first attempt fails at once, and its retry waits in the paused queue until the thread no longer holds the
      // event. (Holding this answer until then outlasted the relay's 15 s delivery timeout on a slow box: failed, null.)
      await webhooks.pause();
      return { status: 500 };
    };
    let created: OutboxEvent;
    try {
      threadId = await sendHandoff(relay, sender.key, recipient.handle);
      created = (await thread(threadId)).outbox[0]!;
      await waitUntil(async () => createdAttempts.length === 1, 'the first attempt of thread.created');
      await appendUntilTrimmed(sender.key, threadId, created);
    } finally {
      await webhooks.resume();
    }

    const done = await waitUntil(async () => {
      const doc = await deliveries().findOne({ _id: deliveryId(created.id, recipient.handle) });
      return doc?.status === 'delivered' ? doc : undefined;
    }, 'the retry delivered');
    expect(done.attempts.map((a) => [a.outcome, a.http_status])).toEqual([
      ['failed', 500],
      ['delivered', 200],
    ]);
    expect(createdAttempts.map((a) => a.inThread)).toEqual([true, false]);
    expect(bodyEvent(recipient.secret, createdAttempts[1]!.request)).toEqual(expected(created));
  },
  APPENDS_MS,
);

test(
  'a dead-lettered delivery re-driven after its event was trimmed from the thread delivers the right body',
  async () => {
    const sender = await withHook();
    const recipient = await withHook();
    await recipient.hook.stop();
    const threadId = await sendHandoff(relay, sender.key, recipient.handle);
    const created = (await thread(threadId)).outbox[0]!;
    const id = deliveryId(created.id, recipient.handle);
    await waitUntil(async () => (await deliveries().findOne({ _id: id }))?.status === 'failed', 'the dead letter');

    await appendUntilTrimmed(sender.key, threadId, created);
    await recipient.hook.restart();
    expect((await relay.rest('POST', `/admin/deliveries/${id}/redrive`, relay.adminKey)).status).toBe(202);

    await waitUntil(
      async () => (await deliveries().findOne({ _id: id }))?.status === 'delivered',
      're-driven and delivered',
    );
    const received = recipient.hook.events().filter((r) => r.headers['webhook-id'] === id);
    expect(received).toHaveLength(1);
    expect(bodyEvent(recipient.secret, received[0]!)).toEqual(expected(created));
  },
  APPENDS_MS,
);

test(
  'a delivery job queued by an older relay (no event in its data) is delivered while the thread holds the event, and fails as before once it does not',
  async () => {
    const sender = await withHook();
    const recipient = await withHook();
    const threadId = await sendHandoff(relay, sender.key, recipient.handle);
    await append(sender.key, threadId, 1);
    const [created, message] = (await thread(threadId)).outbox;
    for (const event of [created!, message!]) {
      await waitUntil(
        async () =>
          (await deliveries().findOne({ _id: deliveryId(event.id, recipient.handle) }))?.status === 'delivered',
        `${event.type} delivered`,
      );
    }

    // As an older relay's re-drive left them: pending records without the event, and jobs whose data has none.
    const oldJob = async (event: OutboxEvent, redrive: number) => {
      const id = deliveryId(event.id, recipient.handle);
      await deliveries().updateOne(
        { _id: id },
        { $set: { status: 'pending', redrives: redrive }, $unset: { event: '' } },
      );
      const data = { event_id: event.id, thread_id: threadId, type: event.type, handle: recipient.handle, redrive };
      await webhooks.add(DELIVER_JOB, data, { attempts: 1, jobId: WebhookQueues.deliveryJobId(id, redrive) });
      return id;
    };
    const messageDelivery = await oldJob(message!, 1);
    await waitUntil(
      async () => (await deliveries().findOne({ _id: messageDelivery }))?.status === 'delivered',
      'the old job delivered',
    );
    const again = recipient.hook.events().filter((r) => r.headers['webhook-id'] === messageDelivery);
    expect(again).toHaveLength(2);
    expect(bodyEvent(recipient.secret, again[1]!)).toEqual(expected(message!));

    await append(sender.key, threadId, OUTBOX_KEPT + 4);
    await relay.store.outbox.flush();
    await append(sender.key, threadId, 1);
    expect((await thread(threadId)).outbox.some((e) => e.id === created!.id)).toBe(false);
    const createdDelivery = await oldJob(created!, 1);
    const failed = await waitUntil(async () => {
      const doc = await deliveries().findOne({ _id: createdDelivery });
      return doc?.status === 'failed' ? doc : undefined;
    }, 'the old job of a trimmed event failed');
    expect(failed.attempts.at(-1)).toMatchObject({ outcome: 'failed', error: 'the thread or event no longer exists' });
  },
  APPENDS_MS,
);

test('a delivery job whose event is malformed fails for good at its first attempt and sends nothing', async () => {
  const recipient = await withHook();
  const data = {
    event_id: '00000000-0000-4000-8000-0000000000e1',
    thread_id: '00000000-0000-4000-8000-0000000000e2',
    type: 'thread.message',
    handle: recipient.handle,
    redrive: 0,
    event: { at: '2026-12-01T10:00:00.000Z', by: 'alice@acme', via: 'carrier-pigeon' },
  };
  const job = await webhooks.add(DELIVER_JOB, data, { attempts: 5, backoff: { type: 'fixed', delay: 60_000 } });
  const failed = await waitUntil(
    async () => ((await webhooks.getJobState(job.id!)) === 'failed' ? webhooks.getJob(job.id!) : undefined),
    'the deliver job to fail for good',
  );
  expect(failed.failedReason).toMatch(/malformed deliver data/);
  expect(failed.attemptsMade).toBe(1);
  expect(recipient.hook.events()).toHaveLength(0);
});
