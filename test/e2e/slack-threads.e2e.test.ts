// End to end through the `slack` queue: A2A / MCP / Slack buttons → relay → BullMQ worker → fake Slack.
// Both linked participants get one DM per handoff, every thread message becomes a reply under each DM in
// sequence order (once), and a change from any surface redraws both DMs in place.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startFakeSlack, type FakeSlack, type FakeSlackMessage } from '../../scripts/fake-slack/fake-slack-api';
import { connectMcpHttp, toolOk } from '../helpers/mcp-http-client';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { slackQueueProbe, type SlackQueueProbe } from '../helpers/slack-queue';
import { waitUntil } from '../helpers/wait-until';
import { sendHandoff } from '../helpers/handoffs';

const SENDER_SLACK = 'U0THSENDER';
const RECIPIENT_SLACK = 'U0THRECIP';

let slack: FakeSlack;
let relay: TestRelay;
let queue: SlackQueueProbe;
let senderKey: string;
let recipientKey: string;
let lonerKey: string;
let recipientMcp: Client;

beforeAll(async () => {
  slack = await startFakeSlack();
  slack.addUser(SENDER_SLACK, { real_name: 'Sam Sender' });
  slack.addUser(RECIPIENT_SLACK, { real_name: 'Rita Recipient' });
  relay = await startTestRelay({ name: 'e2e_threads', slack });
  queue = slackQueueProbe(relay);
  senderKey = await relay.register({ handle: 'sam@acme', name: 'Sam', slack_user_id: SENDER_SLACK });
  recipientKey = await relay.register({ handle: 'rita@acme', name: 'Rita', slack_user_id: RECIPIENT_SLACK });
  lonerKey = await relay.register({ handle: 'loner@acme', name: 'Lone' });
  recipientMcp = await connectMcpHttp(relay.url, recipientKey);
});

afterAll(async () => {
  await recipientMcp?.close();
  await queue?.close();
  await relay?.stop();
  await slack?.close();
});

const senderIm = () => slack.imChannelId(SENDER_SLACK);
const recipientIm = () => slack.imChannelId(RECIPIENT_SLACK);

const send = (key: string, to: string, summary: string) =>
  sendHandoff(relay, key, to, summary, { intent: 'ask_question' });

async function append(key: string, threadId: string, text: string): Promise<number> {
  const { body } = await relay.rpc(key, 'message/send', {
    task_id: threadId,
    message: { parts: [{ type: 'text', text }] },
  });
  if (!body.result) throw new Error(`append failed: ${JSON.stringify(body)}`);
  return body.result.sequence_no as number;
}

/** The one top-level message of `channel` that is this thread's DM (by the metadata every post carries). */
function dmOf(channel: string, threadId: string): FakeSlackMessage[] {
  return (slack.messages.get(channel) ?? []).filter(
    (m) => !m.thread_ts && m.metadata?.event_payload.thread_id === threadId,
  );
}

function repliesUnder(channel: string, ts: string): string[] {
  return (slack.messages.get(channel) ?? []).filter((m) => m.thread_ts === ts).map((m) => m.text);
}

function buttonIds(message: FakeSlackMessage): string[] {
  return (message.blocks as any[]).flatMap((b) => (b.type === 'actions' ? b.elements : [])).map((e) => e.action_id);
}

async function recordedThread(threadId: string, has: (t: any) => boolean, what: string) {
  return waitUntil(async () => {
    const doc = await relay.store.threads.findOne({ _id: threadId });
    return doc && has(doc) ? doc : undefined;
  }, what);
}

test('a handoff between two linked teammates gives each one DM: buttons for the recipient, the state for the sender', async () => {
  const threadId = await send(senderKey, 'rita@acme', 'Please review the /users pagination change');
  const thread = await recordedThread(threadId, (t) => t.slack && t.slack_sender, 'both DMs recorded');
  await queue.settled();

  const [recipientDm] = dmOf(recipientIm(), threadId);
  const [senderDm] = dmOf(senderIm(), threadId);
  expect(dmOf(recipientIm(), threadId)).toHaveLength(1);
  expect(dmOf(senderIm(), threadId)).toHaveLength(1);
  expect(thread.slack).toMatchObject({ channel: recipientIm(), ts: recipientDm.ts });
  expect(thread.slack_sender).toMatchObject({ channel: senderIm(), ts: senderDm.ts });
  expect(thread.slack_pending ?? {}).toEqual({});
  expect(recipientDm.metadata).toEqual({
    event_type: 'handoff_relay',
    event_payload: expect.objectContaining({ thread_id: threadId, kind: 'recipient' }),
  });
  expect(senderDm.metadata).toEqual({
    event_type: 'handoff_relay',
    event_payload: expect.objectContaining({ thread_id: threadId, kind: 'sender' }),
  });

  expect(buttonIds(recipientDm)).toEqual(expect.arrayContaining(['handoff_accept', 'handoff_decline']));
  expect(buttonIds(senderDm)).not.toEqual(expect.arrayContaining(['handoff_accept']));
  expect(buttonIds(senderDm)).not.toContain('handoff_decline');
  expect(buttonIds(senderDm)).not.toContain('handoff_complete');
  expect(JSON.stringify(senderDm.blocks)).toContain('Waiting for');
});

test('messages from either side and any surface become replies under both DMs, in sequence order, each once', async () => {
  const threadId = await send(senderKey, 'rita@acme', 'Which endpoints page?');
  const thread = await recordedThread(threadId, (t) => t.slack && t.slack_sender, 'both DMs recorded');
  expect(await append(senderKey, threadId, 'first from Sam (A2A)')).toBe(1);
  const viaMcp = toolOk(
    await recipientMcp.callTool({
      name: 'send_message',
      arguments: { thread_id: threadId, body: 'second from Rita (MCP)' },
    }),
  );
  expect(viaMcp.sequence_no).toBe(2);
  expect(await append(senderKey, threadId, 'third from Sam (A2A)')).toBe(3);
  await recordedThread(threadId, (t) => Object.keys(t.slack_replies ?? {}).length === 6, 'six replies recorded');
  await queue.settled();

  const expected = [/first from Sam \(A2A\)/, /second from Rita \(MCP\)/, /third from Sam \(A2A\)/];
  for (const dm of [thread.slack!, thread.slack_sender!]) {
    const replies = repliesUnder(dm.channel, dm.ts);
    expect(replies).toHaveLength(3);
    replies.forEach((text, i) => expect(text).toMatch(expected[i]));
    expect(dmOf(dm.channel, threadId)).toHaveLength(1);
  }
  const recorded = (await relay.store.threads.findOne({ _id: threadId }))!;
  const recipientReplies = (slack.messages.get(recipientIm()) ?? [])
    .filter((m) => m.thread_ts === thread.slack!.ts)
    .map((m) => m.ts);
  expect([1, 2, 3].map((n) => recorded.slack_replies![`recipient:${n}`])).toEqual(recipientReplies);
  expect(recorded.slack_pending ?? {}).toEqual({});
});

test('accepting through MCP and completing through A2A redraw both DMs in place', async () => {
  const threadId = await send(senderKey, 'rita@acme', 'Ship the client fix');
  await recordedThread(threadId, (t) => t.slack && t.slack_sender, 'both DMs recorded');
  await queue.settled();

  const accepted = toolOk(await recipientMcp.callTool({ name: 'accept_handoff', arguments: { thread_id: threadId } }));
  expect(accepted).toMatchObject({ accepted: true, status: 'accepted' });
  await queue.settled();
  const [recipientDm] = dmOf(recipientIm(), threadId);
  const [senderDm] = dmOf(senderIm(), threadId);
  expect(JSON.stringify(recipientDm.blocks)).toMatch(/Accepted by .*via MCP/);
  expect(JSON.stringify(senderDm.blocks)).toMatch(/Accepted by .*via MCP/);
  expect(buttonIds(recipientDm)).toContain('handoff_complete');
  expect(buttonIds(senderDm)).not.toContain('handoff_complete');

  // Complete opens a modal in Slack (its listener's own tests cover it); here the agent completes over A2A.
  const { body } = await relay.rpc(recipientKey, 'tasks/update', {
    task_id: threadId,
    transition: 'complete',
    result_summary: 'Shipped in #42',
  });
  expect(body.result).toMatchObject({ status: 'completed' });
  await waitUntil(
    async () =>
      [recipientIm(), senderIm()].every((c) =>
        dmOf(c, threadId).some((m) => JSON.stringify(m.blocks).includes('Completed by')),
      ) || undefined,
    'both DMs to show the completion',
    15_000,
  );
  await queue.settled();
  for (const channel of [recipientIm(), senderIm()]) {
    const dms = dmOf(channel, threadId);
    expect(dms).toHaveLength(1);
    expect(JSON.stringify(dms[0].blocks)).toMatch(/Completed by .*via A2A/);
    expect(buttonIds(dms[0])).not.toContain('handoff_complete');
  }
});

test('a teammate without Slack gets no DM, while the linked side still gets its own with the replies', async () => {
  const toLoner = await send(senderKey, 'loner@acme', 'FYI for someone not on Slack');
  await recordedThread(toLoner, (t) => t.slack_sender, 'the sender DM recorded');
  await append(lonerKey, toLoner, 'answer from the loner');
  await recordedThread(toLoner, (t) => t.slack_replies?.['sender:1'], 'the reply recorded');
  await queue.settled();
  const doc = (await relay.store.threads.findOne({ _id: toLoner }))!;
  expect(doc.slack).toBeNull();
  expect(dmOf(senderIm(), toLoner)).toHaveLength(1);
  expect(repliesUnder(senderIm(), doc.slack_sender!.ts)).toEqual([expect.stringMatching(/answer from the loner/)]);
  expect(doc.slack_replies).toEqual({ 'sender:1': expect.any(String) });

  const fromLoner = await send(lonerKey, 'rita@acme', 'From someone not on Slack');
  const other = await recordedThread(fromLoner, (t) => t.slack, 'the recipient DM recorded');
  await queue.settled();
  expect(other.slack_sender ?? null).toBeNull();
  expect(dmOf(recipientIm(), fromLoner)).toHaveLength(1);
});

test('a reply sent before its DM could be posted waits for the DM and lands under it, once', async () => {
  // Slack holds back every post for a second: the created job and the message job both find no DM yet.
  slack.rateLimitNext('chat.postMessage', { times: 2, retryAfterSeconds: 1 });
  const threadId = await send(senderKey, 'rita@acme', 'Quick one');
  await append(senderKey, threadId, 'and a follow-up right away');
  const thread = await recordedThread(
    threadId,
    (t) => t.slack_replies?.['recipient:1'] && t.slack_replies?.['sender:1'],
    'both replies recorded',
  );
  await queue.settled();
  for (const dm of [thread.slack!, thread.slack_sender!]) {
    expect(dmOf(dm.channel, threadId)).toHaveLength(1);
    expect(repliesUnder(dm.channel, dm.ts)).toEqual([expect.stringMatching(/and a follow-up right away/)]);
  }
  const jobs = (await queue.finished()).filter((j) => j.failedReason);
  expect(jobs).toEqual([]);
});
