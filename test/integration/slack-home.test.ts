// App Home through signed app_home_opened events and Home-tab button clicks into the real Bolt receiver: what waits
// for the user and what they sent, newest first, within Slack's view limits, paged with "Show older".
import { checkViewLimits } from '../../scripts/fake-slack/block-limits';
import { startFakeSlack, type FakeSlack } from '../../scripts/fake-slack/fake-slack-api';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import {
  clickButton,
  postSignedEvent,
  sendSlashCommand,
  slackSignature,
} from '../../scripts/fake-slack/slack-requests';
import { sendHandoff } from '../helpers/handoffs';

const HANA = 'U0HANA'; // linked; receives and sends many handoffs
const IVAN = 'U0IVAN'; // linked; the other side
const JO = 'U0JO'; // in the workspace, never linked
const WAITING = 45;
const SENT = 25;
let slack: FakeSlack;
let relay: TestRelay;
let eventsUrl: string;
const waitingIds: string[] = []; // oldest first
const sentIds: string[] = [];

beforeAll(async () => {
  slack = await startFakeSlack();
  for (const id of [HANA, IVAN, JO]) slack.addUser(id);
  // No worker role: this file needs no DMs, and skipping them keeps 70 handoffs quick on a busy machine.
  relay = await startTestRelay({ name: 'slack_home', slack, env: { RELAY_ROLES: 'api,bot' } });
  eventsUrl = `${relay.url}/slack/events`;
  const hanaKey = await relay.register({ handle: 'hana@acme', slack_user_id: HANA });
  const ivanKey = await relay.register({ handle: 'ivan@acme', slack_user_id: IVAN });
  const send = (key: string, to: string, summary: string) => sendHandoff(relay, key, to, summary);
  const batch = async (n: number, one: (i: number) => Promise<string>) => {
    for (let i = 0; i < n; i += 10)
      await Promise.all(Array.from({ length: Math.min(10, n - i) }, (_, j) => one(i + j)));
  };
  await batch(WAITING, (i) => send(ivanKey, 'hana@acme', `waiting #${i}`));
  await batch(SENT, (i) => send(hanaKey, 'ivan@acme', `sent #${i}`));
  // Newest first is the relay's order (handoffs sent at the same moment may come in either order); the lists below
  // are read back in that order from tasks/list, oldest first.
  const hana = (await relay.relay.teammates.get('hana@acme'))!;
  const ordered = async (role: 'recipient' | 'sender') =>
    (await relay.relay.reads.listThreads(hana, { role, limit: 100 })).items.map((t) => t.thread_id).reverse();
  waitingIds.push(...(await ordered('recipient')));
  sentIds.push(...(await ordered('sender')));
  // One waiting handoff accepted (still waits), one declined (waits no more), one sent completed (still listed as sent).
  for (const [key, id, transition] of [
    [hanaKey, waitingIds[WAITING - 1], 'accept'],
    [hanaKey, waitingIds[WAITING - 2], 'decline'],
    [ivanKey, sentIds[SENT - 1], 'accept'],
    [ivanKey, sentIds[SENT - 1], 'complete'],
  ] as const) {
    const { body } = await relay.rpc(key, 'tasks/update', {
      task_id: id,
      transition,
      ...(transition === 'decline' ? { reason: 'not mine' } : {}),
    });
    expect(body.error).toBeUndefined();
  }
}, 120_000);

afterAll(async () => {
  await relay?.stop();
  await slack?.close();
});

async function openHome(user: string, tab = 'home') {
  const before = slack.callsTo('views.publish').length;
  const answer = await postSignedEvent(eventsUrl, relay.signingSecret, {
    type: 'app_home_opened',
    user,
    channel: `D${user.slice(1)}`,
    tab,
  });
  expect(answer.status).toBe(200);
  return before;
}

async function nextPublish(user: string, before: number) {
  return slack.waitFor(
    'views.publish',
    (c) => c.args.user_id === user && slack.callsTo('views.publish').indexOf(c) >= before,
  );
}

/** Thread ids in a Home view's item blocks, in order, split into the two lists. */
function lists(view: any): { waiting: string[]; sent: string[]; buttons: any[] } {
  const blocks = view.blocks as any[];
  const divider = blocks.findIndex((b) => b.type === 'divider');
  const ids = (part: any[]) =>
    part.filter((b) => String(b.block_id ?? '').startsWith('thread_')).map((b) => b.block_id.slice('thread_'.length));
  return {
    waiting: ids(blocks.slice(0, divider)),
    sent: ids(blocks.slice(divider)),
    buttons: blocks.flatMap((b) => (b.type === 'actions' ? b.elements : [])),
  };
}

test('an unlinked user gets a Home tab explaining /handoff link', async () => {
  const before = await openHome(JO);
  const published = await nextPublish(JO, before);
  const view = published.args.view as any;
  expect(view.type).toBe('home');
  expect(JSON.stringify(view.blocks)).toContain('/handoff link');
});

test('the Messages tab opening publishes nothing', async () => {
  const before = await openHome(IVAN, 'messages');
  await openHome(IVAN);
  await nextPublish(IVAN, before);
  expect(
    slack
      .callsTo('views.publish')
      .slice(before)
      .filter((c) => c.args.user_id === IVAN),
  ).toHaveLength(1);
});

test('a user with many threads sees the newest waiting and sent ones within the view limits, with the DM buttons', async () => {
  const before = await openHome(HANA);
  const view = (await nextPublish(HANA, before)).args.view as any;
  expect(checkViewLimits(view, 'home')).toBeNull();
  expect(view.blocks.length).toBeLessThanOrEqual(100);
  const { waiting, sent, buttons } = lists(view);
  // Waiting: pending and accepted only, newest first (the declined one is gone).
  const stillWaiting = waitingIds.filter((id) => id !== waitingIds[WAITING - 2]).reverse();
  expect(waiting).toEqual(stillWaiting.slice(0, 20));
  expect(sent).toEqual([...sentIds].reverse().slice(0, 20));
  const forThread = (id: string) =>
    view.blocks.find((b: any) => b.block_id === `thread_${id}`).elements.map((e: any) => e.action_id);
  expect(forThread(waitingIds[WAITING - 1]!)).toEqual(['handoff_complete', 'handoff_reply', 'handoff_open_inbox']);
  expect(forThread(stillWaiting[1]!)).toEqual([
    'handoff_accept',
    'handoff_decline',
    'handoff_reply',
    'handoff_open_inbox',
  ]);
  // The sender sees no transition buttons; a completed one has no Reply either.
  expect(forThread(sentIds[SENT - 1]!)).toEqual(['handoff_open_inbox']);
  expect(forThread(sentIds[SENT - 2]!)).toEqual(['handoff_reply', 'handoff_open_inbox']);
  expect(JSON.stringify(view.blocks)).toContain(':tada: completed');
  expect(buttons.filter((b) => b.action_id === 'handoff_home_page').map((b) => b.text.text)).toEqual([
    'Show older waiting',
    'Show older sent',
  ]);
});

test('"Show older" pages each list on from where it ended, and "Back to newest" returns', async () => {
  const before = await openHome(HANA);
  const first = (await nextPublish(HANA, before)).args.view as any;
  const older = lists(first).buttons.find((b) => b.text.text === 'Show older waiting');

  const clickPage = async (value: string) => {
    const count = slack.callsTo('views.publish').length;
    const answer = await clickButton(eventsUrl, relay.signingSecret, {
      surface: 'home',
      user: HANA,
      channel: '',
      messageTs: '',
      actionId: 'handoff_home_page',
      value,
    });
    expect(answer.status).toBe(200);
    return (await nextPublish(HANA, count)).args.view as any;
  };
  const second = await clickPage(older.value);
  expect(checkViewLimits(second, 'home')).toBeNull();
  const stillWaiting = waitingIds.filter((id) => id !== waitingIds[WAITING - 2]).reverse();
  expect(lists(second).waiting).toEqual(stillWaiting.slice(20, 40));
  expect(lists(second).sent).toEqual(lists(first).sent);

  const third = await clickPage(lists(second).buttons.find((b) => b.text.text === 'Show older waiting').value);
  expect(lists(third).waiting).toEqual(stillWaiting.slice(40));
  expect(lists(third).buttons.map((b) => b.text.text)).not.toContain('Show older waiting');
  const thirdSentPage = await clickPage(lists(third).buttons.find((b) => b.text.text === 'Show older sent').value);
  expect(lists(thirdSentPage).sent).toEqual([...sentIds].reverse().slice(20));
  expect(lists(thirdSentPage).waiting).toEqual(stillWaiting.slice(40));

  const newest = await clickPage(lists(thirdSentPage).buttons.find((b) => b.text.text === 'Back to newest').value);
  expect(lists(newest).waiting).toEqual(lists(first).waiting);
  expect(lists(newest).buttons.map((b) => b.text.text)).not.toContain('Back to newest');
});

test('a forged paging value falls back to the newest page', async () => {
  const count = slack.callsTo('views.publish').length;
  await clickButton(eventsUrl, relay.signingSecret, {
    surface: 'home',
    user: HANA,
    channel: '',
    messageTs: '',
    actionId: 'handoff_home_page',
    value: JSON.stringify({ w: 'bm90IGEgY3Vyc29y' }),
  });
  const view = (await nextPublish(HANA, count)).args.view as any;
  expect(lists(view).waiting).toHaveLength(20);
  expect(view.blocks[2].text.text).toBe('Waiting for you');
});

test('without RELAY_TEAM, /handoff link explains that linking from Slack is off and creates nothing', async () => {
  const answer = await sendSlashCommand(eventsUrl, relay.signingSecret, {
    user: JO,
    text: 'link',
    responseUrl: slack.responseUrl('jo-link'),
    triggerId: slack.triggerId(),
  });
  expect(answer.status).toBe(200);
  const reply = await slack.waitFor('response_url', (c) => c.args.response_url === 'jo-link');
  expect(reply.args.text).toContain('needs RELAY_TEAM');
  expect(await relay.relay.teammates.bySlackUser(JO)).toBeNull();
});

test("Slack's url_verification of the event request URL is answered with the challenge (the manifest's request_url works)", async () => {
  const body = JSON.stringify({
    token: 'legacy-verification-token',
    challenge: 'c5b1a2d3e4f5',
    type: 'url_verification',
  });
  const timestamp = Math.floor(Date.now() / 1000);
  const response = await fetch(eventsUrl, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-slack-request-timestamp': String(timestamp),
      'x-slack-signature': slackSignature(relay.signingSecret, timestamp, body),
    },
    body,
  });
  expect(response.status).toBe(200);
  expect(await response.text()).toContain('c5b1a2d3e4f5');
});
