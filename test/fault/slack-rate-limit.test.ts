// Fault: Slack answers 429 with Retry-After, or takes a post and the worker never learns its ts. Each DM and
// each reply still reaches Slack exactly once, replies in sequence order, after the wait, with no attempt spent.
// With one workspace (this relay's single token) a 429 holds the job's whole lane through BullMQ's rate limiter.
import { randomUUID } from 'node:crypto';
import { Queue, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import pino from 'pino';
import { slackWebClient } from '../../bot/slack-app';
import { createSlackDeliveryProcessor } from '../../bot/slack-delivery';
import { SlackPostLedger } from '../../bot/delivery/slack-post-ledger';
import { SLACK_FIRST_LANE, SLACK_LANE_LIMITER } from '../../relay-core/queues/slack-lanes';
import { mongoThreadWriter } from '../../relay-core/store/mongo-thread-writer';
import { startFakeSlack, type FakeSlack, type FakeSlackMessage } from '../../scripts/fake-slack/fake-slack-api';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { slackQueueProbe, type SlackQueueProbe } from '../helpers/slack-queue';
import { WAIT_MS, waitUntil } from '../helpers/wait-until';
import { sendHandoff } from '../helpers/handoffs';

const SENDER_SLACK = 'U0RLSENDER';
const RECIPIENT_SLACK = 'U0RLRECIP';
/** The most Retry-After any test here makes the worker wait out: six 429s of one second each. */
const RATE_LIMITED_MS = 6 * 1_000;

let slack: FakeSlack;
let relay: TestRelay;
let queue: SlackQueueProbe;
let linkedSenderKey: string;
let plainSenderKey: string;
let recipientKey: string;

beforeAll(async () => {
  slack = await startFakeSlack();
  slack.addUser(SENDER_SLACK);
  slack.addUser(RECIPIENT_SLACK);
  relay = await startTestRelay({ name: 'slack_rate_limit', slack });
  queue = slackQueueProbe(relay);
  linkedSenderKey = await relay.register({ handle: 'linked-sender@acme', slack_user_id: SENDER_SLACK });
  plainSenderKey = await relay.register({ handle: 'plain-sender@acme' });
  recipientKey = await relay.register({ handle: 'recipient@acme', slack_user_id: RECIPIENT_SLACK });
});

afterAll(async () => {
  await queue?.close();
  await relay?.stop();
  await slack?.close();
});

const recipientIm = () => slack.imChannelId(RECIPIENT_SLACK);

const send = (key: string, summary: string) => sendHandoff(relay, key, 'recipient@acme', summary);

async function append(key: string, threadId: string, text: string): Promise<void> {
  const { body } = await relay.rpc(key, 'message/send', {
    task_id: threadId,
    message: { parts: [{ type: 'text', text }] },
  });
  if (!body.result) throw new Error(`append failed: ${JSON.stringify(body)}`);
}

function dmsOf(channel: string, threadId: string): FakeSlackMessage[] {
  return (slack.messages.get(channel) ?? []).filter(
    (m) => !m.thread_ts && m.metadata?.event_payload.thread_id === threadId,
  );
}

function repliesUnder(channel: string, ts: string): string[] {
  return (slack.messages.get(channel) ?? []).filter((m) => m.thread_ts === ts).map((m) => m.text);
}

async function threadWhere(threadId: string, has: (t: any) => unknown, what: string): Promise<any> {
  return waitUntil(
    async () => {
      const doc = await relay.store.threads.findOne({ _id: threadId });
      return doc && has(doc) ? doc : undefined;
    },
    what,
    WAIT_MS + RATE_LIMITED_MS,
  );
}

async function jobsOf(threadId: string) {
  const ids = new Set((await relay.store.threads.findOne({ _id: threadId }))!.outbox.map((e) => e.id));
  return (await queue.finished()).filter((j) => ids.has(j.id));
}

test('a 429 on the DM: posted once after Retry-After, and the job spends no attempt on it', async () => {
  slack.rateLimitNext('chat.postMessage', { times: 2, retryAfterSeconds: 1 });
  const threadId = await send(plainSenderKey, 'rate limited DM');
  const thread = await threadWhere(threadId, (t) => t.slack, 'the DM recorded');
  await queue.settled();

  const posts = slack.calls.filter(
    (c) => c.method === 'chat.postMessage' && String(c.args.text).includes('rate limited DM'),
  );
  expect(posts.map((c) => c.response.error ?? 'ok')).toEqual(['ratelimited', 'ratelimited', 'ok']);
  // Each retry came no sooner than Slack asked.
  expect(posts[1].at - posts[0].at).toBeGreaterThanOrEqual(1_000);
  expect(posts[2].at - posts[1].at).toBeGreaterThanOrEqual(1_000);
  expect(dmsOf(recipientIm(), threadId)).toEqual([expect.objectContaining({ ts: thread.slack.ts })]);
  const [job] = await jobsOf(threadId);
  expect(job).toMatchObject({ type: 'thread.created', attemptsMade: 1, returnvalue: 'posted' });
  expect(job.failedReason).toBeFalsy();
});

test('one workspace: a 429 holds the whole lane for Retry-After, so a DM queued meanwhile waits too; each posted once', async () => {
  const connection = new Redis(relay.config.redisUrl, { maxRetriesPerRequest: null });
  const firstLane = new Queue(SLACK_FIRST_LANE, { connection, prefix: relay.config.queuePrefix });
  try {
    slack.rateLimitNext('chat.postMessage', { times: 1, retryAfterSeconds: 2 });
    const held = await send(plainSenderKey, 'lane held one');
    const limited = await waitUntil(
      async () =>
        slack.calls.find(
          (c) =>
            c.method === 'chat.postMessage' &&
            c.response.error === 'ratelimited' &&
            String(c.args.text).includes('lane held one'),
        ),
      'the first DM rate-limited',
    );
    // The lane's limit is in Redis (BullMQ's limiter key), for every worker of it.
    await waitUntil(
      async () => (await firstLane.getRateLimitTtl(SLACK_LANE_LIMITER.max)) > 0 || undefined,
      'the first lane to be held',
    );
    const other = await send(plainSenderKey, 'lane held two');
    await threadWhere(held, (t) => t.slack, 'the first DM recorded');
    await threadWhere(other, (t) => t.slack, 'the second DM recorded');
    await queue.settled();

    for (const [threadId, summary] of [
      [held, 'lane held one'],
      [other, 'lane held two'],
    ] as const) {
      const posts = slack.calls.filter(
        (c) => c.method === 'chat.postMessage' && c.response.ok && String(c.args.text).includes(summary),
      );
      expect(posts).toHaveLength(1);
      // Neither went out before Slack's Retry-After was over.
      expect(posts[0]!.at - limited.at).toBeGreaterThanOrEqual(2_000);
      expect(dmsOf(recipientIm(), threadId)).toHaveLength(1);
      const [job] = await jobsOf(threadId);
      expect(job).toMatchObject({ type: 'thread.created', attemptsMade: 1, returnvalue: 'posted' });
    }
  } finally {
    await firstLane.close();
    connection.disconnect();
  }
});

test('replies and updates while Slack answers 429: all arrive in sequence order under both DMs, none doubled', async () => {
  const threadId = await send(linkedSenderKey, 'a busy thread');
  const thread = await threadWhere(threadId, (t) => t.slack && t.slack_sender, 'both DMs recorded');
  await queue.settled();

  slack.rateLimitNext('chat.postMessage', { times: 4, retryAfterSeconds: 1 });
  slack.rateLimitNext('chat.update', { times: 2, retryAfterSeconds: 1 });
  for (let i = 1; i <= 6; i += 1) await append(linkedSenderKey, threadId, `note ${i}`);
  const { body } = await relay.rpc(recipientKey, 'tasks/update', { task_id: threadId, transition: 'accept' });
  expect(body.result).toMatchObject({ status: 'accepted' });
  await threadWhere(
    threadId,
    (t) => Object.keys(t.slack_replies ?? {}).filter((k) => /^(recipient|sender):\d+$/.test(k)).length === 12,
    'twelve replies recorded',
  );
  await queue.settled(WAIT_MS + RATE_LIMITED_MS);

  expect(slack.calls.filter((c) => c.response.error === 'ratelimited').length).toBeGreaterThanOrEqual(6);
  for (const dm of [thread.slack, thread.slack_sender]) {
    expect(dmsOf(dm.channel, threadId)).toHaveLength(1);
    const replies = repliesUnder(dm.channel, dm.ts).filter((text) => text.includes('replied'));
    expect(replies).toHaveLength(6);
    replies.forEach((text, i) => expect(text).toContain(`note ${i + 1}`));
    expect(JSON.stringify(dmsOf(dm.channel, threadId)[0].blocks)).toContain('Accepted by');
  }
  // The sender heard of the accept once, through the 429s.
  expect(
    repliesUnder(thread.slack_sender.channel, thread.slack_sender.ts).filter((t) =>
      t.includes('accepted your handoff'),
    ),
  ).toEqual(['recipient accepted your handoff “a busy thread”']);
  const jobs = await jobsOf(threadId);
  expect(jobs.filter((j) => j.failedReason)).toEqual([]);
  expect(jobs.every((j) => j.attemptsMade === 1)).toBe(true);
});

test('Slack took the DM but its answer was lost: the retry finds it by its marker and records it, one DM', async () => {
  slack.dropResponseNext('chat.postMessage');
  const threadId = await send(plainSenderKey, 'answer lost');
  const thread = await threadWhere(threadId, (t) => t.slack, 'the DM recorded');
  await queue.settled();

  const dms = dmsOf(recipientIm(), threadId);
  expect(dms).toHaveLength(1);
  expect(thread.slack.ts).toBe(dms[0].ts);
  expect(thread.slack_pending ?? {}).toEqual({});
  const posts = slack.calls.filter(
    (c) =>
      c.method === 'chat.postMessage' &&
      c.args.metadata &&
      (c.args.metadata as any).event_payload.thread_id === threadId,
  );
  expect(posts).toHaveLength(1);
  expect(
    slack
      .callsTo('conversations.history')
      .some((c) => c.args.channel === recipientIm() && c.args.include_all_metadata === 'true'),
  ).toBe(true);
});

test('a reply whose answer was lost is found under the DM by conversations.replies, not posted again', async () => {
  const threadId = await send(plainSenderKey, 'reply answer lost');
  const thread = await threadWhere(threadId, (t) => t.slack, 'the DM recorded');
  await queue.settled();
  slack.dropResponseNext('chat.postMessage');
  await append(plainSenderKey, threadId, 'only once please');
  const after = await threadWhere(threadId, (t) => t.slack_replies?.['recipient:1'], 'the reply recorded');
  await queue.settled();
  expect(repliesUnder(recipientIm(), thread.slack.ts)).toEqual([expect.stringContaining('only once please')]);
  const reply = (slack.messages.get(recipientIm()) ?? []).find((m) => m.thread_ts === thread.slack.ts)!;
  expect(after.slack_replies['recipient:1']).toBe(reply.ts);
  expect(slack.callsTo('conversations.replies').some((c) => c.args.ts === thread.slack.ts)).toBe(true);
});

describe('a worker that dies between chat.postMessage and recording the ts (processor run directly)', () => {
  let api: TestRelay;
  let key: string;
  beforeAll(async () => {
    // No worker role: the test plays the workers itself, with a client that "dies" right after Slack took the post.
    api = await startTestRelay({ name: 'slack_crash', slack, env: { RELAY_ROLES: 'api' } });
    key = await api.register({ handle: 'crash-sender@acme' });
    await api.register({ handle: 'crash-recipient@acme', slack_user_id: 'U0CRASHRCP' });
  });
  beforeAll(() => slack.addUser('U0CRASHRCP'));
  afterAll(() => api?.stop());

  function processor(opts: { dieAfterPost: boolean; claimLeaseMs?: number }) {
    const client = slackWebClient(api.config.slack!);
    const post = client.chat.postMessage.bind(client.chat);
    let armed = opts.dieAfterPost;
    client.chat.postMessage = (async (args: Parameters<typeof post>[0]) => {
      const answer = await post(args);
      if (armed) {
        armed = false;
        throw new Error('worker killed after Slack took the post');
      }
      return answer;
    }) as typeof client.chat.postMessage;
    return createSlackDeliveryProcessor({
      channels: api.relay.channels,
      links: api.relay.links,
      teammates: api.relay.teammates,
      threads: mongoThreadWriter(api.store),
      client,
      log: pino({ level: 'silent' }),
      claimLeaseMs: opts.claimLeaseMs,
    });
  }

  const job = (id: string, threadId: string, type: string) =>
    ({ id, data: { thread_id: threadId, event_id: randomUUID(), type } }) as unknown as Job;

  async function crashedThread(summary: string): Promise<string> {
    const { body } = await api.rpc(key, 'message/send', {
      recipient: 'crash-recipient@acme',
      intent: 'inform',
      message: { parts: [{ type: 'text', text: summary }] },
    });
    const threadId = body.result.task_id as string;
    await expect(processor({ dieAfterPost: true })(job('A', threadId, 'thread.created'))).rejects.toThrow(
      /worker killed/,
    );
    const doc = (await api.store.readThread(threadId))!;
    expect(doc.slack).toBeNull();
    expect(doc.slack_pending?.recipient).toMatchObject({ owner: 'A' });
    return threadId;
  }

  test('the same job run again finds its post and records it: one DM', async () => {
    const threadId = await crashedThread('crash then same job');
    await processor({ dieAfterPost: false })(job('A', threadId, 'thread.created'));
    const doc = (await api.store.readThread(threadId))!;
    const dms = dmsOf(slack.imChannelId('U0CRASHRCP'), threadId);
    expect(dms).toHaveLength(1);
    expect(doc.slack?.ts).toBe(dms[0].ts);
    expect(doc.slack_pending).toEqual({});
  });

  test('another job waits while the claim is fresh, then takes it over after the lease and still posts nothing twice', async () => {
    const threadId = await crashedThread('crash then another job');
    await expect(processor({ dieAfterPost: false })(job('B', threadId, 'thread.message'))).rejects.toThrow(
      /recipient is being posted by job A/,
    );
    expect(dmsOf(slack.imChannelId('U0CRASHRCP'), threadId)).toHaveLength(1);
    await processor({ dieAfterPost: false, claimLeaseMs: 0 })(job('B', threadId, 'thread.message'));
    const doc = (await api.store.readThread(threadId))!;
    const dms = dmsOf(slack.imChannelId('U0CRASHRCP'), threadId);
    expect(dms).toHaveLength(1);
    expect(doc.slack?.ts).toBe(dms[0].ts);
  });

  test('a claim whose post never reached Slack is taken over and posted once', async () => {
    const { body } = await api.rpc(key, 'message/send', {
      recipient: 'crash-recipient@acme',
      intent: 'inform',
      message: { parts: [{ type: 'text', text: 'claimed, never posted' }] },
    });
    const threadId = body.result.task_id as string;
    // A worker that died right after claiming: the claim exists, Slack never saw the post.
    const claim = await new SlackPostLedger({ threads: mongoThreadWriter(api.store) }).claim(
      threadId,
      'recipient',
      { channel: slack.imChannelId('U0CRASHRCP'), thread_ts: null, owner: 'dead' },
      null,
    );
    expect(claim).not.toBeNull();
    await expect(
      processor({ dieAfterPost: false, claimLeaseMs: 0 })(job('C', threadId, 'thread.created')),
    ).resolves.toBe('posted');
    const dms = dmsOf(slack.imChannelId('U0CRASHRCP'), threadId);
    expect(dms).toHaveLength(1);
    expect(dms[0].metadata?.event_payload.marker).toBe(claim!.post.marker);
  });
});
