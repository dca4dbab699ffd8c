// Socket Mode end to end: with SLACK_APP_TOKEN the relay's Bolt app connects out to (fake) Slack over a
// WebSocket instead of serving POST /slack/events; a button click arrives as an envelope and is acked by id.
import { startFakeSlack, type FakeSlack } from '../../scripts/fake-slack/fake-slack-api';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { blockActionPayload } from '../../scripts/fake-slack/slack-requests';
import { waitUntil } from '../helpers/wait-until';

const RECIPIENT = 'U0SOCKRCP';
let slack: FakeSlack;
let relay: TestRelay;
let senderKey: string;

beforeAll(async () => {
  slack = await startFakeSlack();
  slack.addUser(RECIPIENT);
  relay = await startTestRelay({ name: 'socket_mode', slack, env: { SLACK_APP_TOKEN: slack.appToken } });
  senderKey = await relay.register({ handle: 'sock-sender@acme' });
  await relay.register({ handle: 'sock-recipient@acme', slack_user_id: RECIPIENT });
});

afterAll(async () => {
  await relay?.stop();
  await slack?.close();
});

test('the relay opens a Socket Mode connection with the app-level token and serves no /slack/events', async () => {
  await slack.socketConnected();
  const [open] = slack.callsTo('apps.connections.open');
  expect(open).toBeDefined();
  const posted = await fetch(`${relay.url}/slack/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  });
  expect(posted.status).toBe(404);
});

test('an Accept click sent as an interactive envelope is acked by envelope id and accepts the handoff', async () => {
  await slack.socketConnected();
  const { body } = await relay.rpc(senderKey, 'message/send', {
    recipient: 'sock-recipient@acme',
    intent: 'inform',
    message: { parts: [{ type: 'text', text: 'over the socket' }] },
  });
  const threadId = body.result.task_id as string;
  const thread = await waitUntil(async () => {
    const doc = await relay.store.threads.findOne({ _id: threadId });
    return doc?.slack ? doc : undefined;
  }, 'the DM to be recorded');
  const dm = slack.messages.get(thread.slack!.channel)!.find((m) => m.ts === thread.slack!.ts)!;
  const accept = (dm.blocks as any[])
    .flatMap((b) => (b.type === 'actions' ? b.elements : []))
    .find((e) => e.action_id === 'handoff_accept');

  const payload = blockActionPayload({
    user: RECIPIENT,
    channel: thread.slack!.channel,
    messageTs: thread.slack!.ts,
    actionId: 'handoff_accept',
    value: accept.value,
    responseUrl: slack.responseUrl('socket'),
  });
  const ack = await slack.sendEnvelope('interactive', payload);
  expect(ack.envelope_id).toMatch(/^[0-9a-f-]{36}$/);

  const accepted = await waitUntil(async () => {
    const doc = await relay.store.threads.findOne({ _id: threadId });
    return doc?.status === 'accepted' ? doc : undefined;
  }, 'the thread to be accepted');
  expect(accepted.status_history.at(-1)).toMatchObject({ status: 'accepted', by: 'sock-recipient@acme', via: 'slack' });
  await slack.waitFor(
    'chat.update',
    (c) => c.args.ts === thread.slack!.ts && JSON.stringify(c.args.blocks).includes('Accepted by'),
  );
});
