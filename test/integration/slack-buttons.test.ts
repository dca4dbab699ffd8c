// Signed Slack requests into the real Bolt receiver: signature and timestamp checks, and racing Accept clicks.
import { startFakeSlack, type FakeSlack } from '../fake-slack/fake-slack-api';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { clickButton, type ButtonClick } from '../helpers/slack-requests';
import { waitUntil } from '../helpers/wait-until';

const RECIPIENT = 'U0RECIPIENT';
let slack: FakeSlack;
let relay: TestRelay;
let senderKey: string;

beforeAll(async () => {
  slack = await startFakeSlack();
  slack.addUser(RECIPIENT);
  relay = await startTestRelay({ name: 'slack_buttons', slack });
  senderKey = await relay.register({ handle: 'sender@acme' });
  await relay.register({ handle: 'recipient@acme', slack_user_id: RECIPIENT });
});

afterAll(async () => {
  await relay?.stop();
  await slack?.close();
});

/** Sends a handoff and waits until its DM is posted and recorded; returns a click on its Accept button. */
async function deliveredHandoff(summary: string): Promise<{ threadId: string; click: ButtonClick }> {
  const { body } = await relay.rpc(senderKey, 'message/send', { recipient: 'recipient@acme', intent: 'inform', message: { parts: [{ type: 'text', text: summary }] } });
  const threadId = body.result.task_id as string;
  const thread = await waitUntil(async () => {
    const doc = await relay.store.threads.findOne({ _id: threadId });
    return doc?.slack ? doc : undefined;
  }, 'the DM to be posted');
  const post = slack.callsTo('chat.postMessage').find((c) => c.response.ts === thread.slack!.ts)!;
  const accept = (post.args.blocks as any[]).flatMap((b) => (b.type === 'actions' ? b.elements : [])).find((e) => e.action_id === 'handoff_accept');
  return {
    threadId,
    click: { user: RECIPIENT, channel: thread.slack!.channel, messageTs: thread.slack!.ts, actionId: 'handoff_accept', value: accept.value, responseUrl: slack.responseUrl(RECIPIENT) },
  };
}

test('10 concurrent Accept clicks make exactly one transition and one in-place update to accepted', async () => {
  const { threadId, click } = await deliveredHandoff('click race');
  const answers = await Promise.all(Array.from({ length: 10 }, () => clickButton(`${relay.url}/slack/events`, relay.signingSecret, click)));
  expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
  const doc = await waitUntil(async () => {
    const d = await relay.store.threads.findOne({ _id: threadId });
    return d?.status === 'accepted' ? d : undefined;
  }, 'the accept');
  expect(doc.status_history.filter((h) => h.status === 'accepted')).toHaveLength(1);
  expect(doc.outbox.filter((e) => e.type === 'thread.accepted')).toHaveLength(1);
  await waitUntil(async () => slack.calls.filter((c) => c.method === 'response_url').length >= 9 || undefined, '9 ephemeral explanations');
  const explanations = slack.calls.filter((c) => c.method === 'response_url' && c.args.response_type === 'ephemeral');
  expect(explanations.length).toBeGreaterThanOrEqual(9);
  await slack.waitFor('chat.update', (c) => c.args.ts === click.messageTs && JSON.stringify(c.args.blocks).includes('Accepted by'));
});

describe('requests Slack did not sign are refused with 401 and change nothing', () => {
  let threadId: string;
  let click: ButtonClick;
  beforeAll(async () => {
    ({ threadId, click } = await deliveredHandoff('unsigned'));
  });

  test.each([
    ['no signature', { unsigned: true }],
    ['the wrong secret', { secret: 'not-the-signing-secret' }],
    ['a timestamp 6 minutes old', { timestamp: Math.floor(Date.now() / 1000) - 360 }],
    ['a timestamp 6 minutes in the future', { timestamp: Math.floor(Date.now() / 1000) + 360 }],
  ])('%s', async (_name, opts) => {
    const answer = await clickButton(`${relay.url}/slack/events`, relay.signingSecret, click, opts);
    expect(answer.status).toBe(401);
    expect((await relay.store.threads.findOne({ _id: threadId }))!.status).toBe('pending');
  });
});
