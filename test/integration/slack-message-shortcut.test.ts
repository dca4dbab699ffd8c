// The message shortcut *Hand off this message*: a signed message_action payload into the real Bolt receiver opens the
// new-handoff modal prefilled with the message's text and its permalink (chat.getPermalink at the fake Slack), and
// submitting that modal sends the handoff with the permalink as a link artifact.
import { startFakeSlack, type FakeSlack } from '../../scripts/fake-slack/fake-slack-api';
import { MESSAGE_SHORTCUT_CALLBACK_ID, NEW_HANDOFF_CALLBACK_ID } from '../../bot/views/new-handoff-modal';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { sendMessageShortcut, submitViewState } from '../../scripts/fake-slack/slack-requests';
import { waitUntil } from '../helpers/wait-until';

const ALICE = 'U0ALICE';
const BOB = 'U0BOB';
const CAROL = 'U0CAROL'; // never linked
const CHANNEL = 'C0WEB';
let slack: FakeSlack;
let relay: TestRelay;
let eventsUrl: string;

beforeAll(async () => {
  slack = await startFakeSlack();
  for (const id of [ALICE, BOB, CAROL]) slack.addUser(id);
  slack.addChannel(CHANNEL);
  relay = await startTestRelay({ name: 'slack_shortcut', slack, env: { RELAY_ROLES: 'api,bot' } });
  eventsUrl = `${relay.url}/slack/events`;
  await relay.register({ handle: 'alice@acme', slack_user_id: ALICE });
  await relay.register({ handle: 'bob@acme', slack_user_id: BOB });
});

afterAll(async () => {
  await relay?.stop();
  await slack?.close();
});

function shortcut(user: string, message: { ts: string; text: string; user: string }, name: string) {
  return sendMessageShortcut(eventsUrl, relay.signingSecret, {
    user,
    channel: CHANNEL,
    message,
    callbackId: MESSAGE_SHORTCUT_CALLBACK_ID,
    triggerId: slack.triggerId(),
    responseUrl: slack.responseUrl(name),
  });
}

const field = (view: any, block: string) => view.blocks.find((b: any) => b.block_id === block).element;

test('opens the new-handoff modal with the message text (Slack markup undone) and its permalink, and the submission carries the link', async () => {
  const raw = 'The <https://acme.dev/api|users API> now pages &amp; <@U0BOB> knows why';
  const ts = slack.addUserMessage(CHANNEL, BOB, raw);
  const answer = await shortcut(ALICE, { ts, text: raw, user: BOB }, 'first');
  expect(answer.status).toBe(200);
  const permalink = await slack.waitFor('chat.getPermalink', (c) => c.args.message_ts === ts);
  expect(permalink.args.channel).toBe(CHANNEL);
  const link = String(permalink.response.permalink);
  expect(link).toBe(`https://handoff-relay-test.slack.com/archives/${CHANNEL}/p${ts.replace('.', '')}`);
  const opened = await slack.waitFor('views.open', (c) => (c.args.view as any).callback_id === NEW_HANDOFF_CALLBACK_ID);
  const view = opened.response.view as any;
  expect(field(view, 'summary').initial_value).toBe('The https://acme.dev/api now pages & @U0BOB knows why');
  expect(field(view, 'links').initial_value).toBe(link);

  // What the person then submits is the /handoff modal's submission: the handoff gets the permalink as a link artifact.
  const submitted = await submitViewState(eventsUrl, relay.signingSecret, {
    user: ALICE,
    viewId: String(view.id),
    callbackId: NEW_HANDOFF_CALLBACK_ID,
    values: {
      recipient: { recipient: { type: 'users_select', selected_user: BOB } },
      intent: {
        intent: {
          type: 'static_select',
          selected_option: { text: { type: 'plain_text', text: 'x' }, value: 'inform' },
        },
      },
      summary: { summary: { type: 'plain_text_input', value: field(view, 'summary').initial_value } },
      links: { links: { type: 'plain_text_input', value: field(view, 'links').initial_value } },
    },
  });
  expect(submitted.status).toBe(200);
  const thread = await waitUntil(
    () => relay.store.threads.findOne({ from: 'alice@acme', summary: /now pages/ }),
    'the handoff',
  );
  expect(thread).toMatchObject({ to: 'bob@acme', intent: 'inform', artifacts: [{ type: 'link', url: link }] });
});

test('a long message is cut to what a Slack input can start with; a thread reply links with its thread', async () => {
  const parent = slack.addUserMessage(CHANNEL, BOB, 'parent');
  const long = `${'line of text\n'.repeat(400)}end`;
  const ts = slack.addUserMessage(CHANNEL, BOB, long, { thread_ts: parent });
  await shortcut(ALICE, { ts, text: long, user: BOB }, 'long');
  const opened = await slack.waitFor('views.open', (c) =>
    field(c.args.view, 'links').initial_value?.includes(`p${ts.replace('.', '')}`),
  );
  const summary = field(opened.response.view, 'summary').initial_value as string;
  expect(summary.length).toBeLessThanOrEqual(3000);
  expect(summary.endsWith('…')).toBe(true);
  expect(field(opened.response.view, 'links').initial_value).toContain(`?thread_ts=${parent}&cid=${CHANNEL}`);
});

test('an unlinked user is told to link first, and no modal opens', async () => {
  const ts = slack.addUserMessage(CHANNEL, BOB, 'hello');
  const opens = slack.callsTo('views.open').length;
  await shortcut(CAROL, { ts, text: 'hello', user: BOB }, 'unlinked');
  const said = await slack.waitFor('response_url', (c) => c.args.response_url === 'unlinked');
  expect(String(said.args.text)).toContain('/handoff link');
  expect(slack.callsTo('views.open').length).toBe(opens);
});

test('a message Slack has no permalink for still opens the modal, with the text and no link', async () => {
  const answer = await shortcut(ALICE, { ts: '1700000001.000100', text: 'gone message', user: BOB }, 'gone');
  expect(answer.status).toBe(200);
  const opened = await slack.waitFor(
    'views.open',
    (c) => field(c.args.view, 'summary').initial_value === 'gone message',
  );
  expect(field(opened.response.view, 'links').initial_value).toBeUndefined();
  expect(slack.calls.some((c) => c.method === 'chat.getPermalink' && c.response.error === 'message_not_found')).toBe(
    true,
  );
});
