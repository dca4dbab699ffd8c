// "Open web inbox" in Slack (the DM's button and the App Home's), through signed clicks into the real Bolt receiver
// and the strict fake Slack: the click opens a modal with a fresh one-time link for the Slack-linked teammate, and
// that link signs a browser in as them; a Slack user with no teammate gets no link; and what the page does (accept,
// complete) redraws the DM as any other change does.
import { startFakeSlack, type FakeSlack } from '../../scripts/fake-slack/fake-slack-api';
import { clickButton, postSignedEvent } from '../../scripts/fake-slack/slack-requests';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { deliveredHandoff, dmText, press, threadDoc } from '../helpers/slack-dm';
import { waitUntil } from '../helpers/wait-until';

const HANA = 'U0HANA';
const JO = 'U0JO';
let slack: FakeSlack;
let relay: TestRelay;

beforeAll(async () => {
  slack = await startFakeSlack();
  for (const id of [HANA, JO]) slack.addUser(id);
  relay = await startTestRelay({ name: 'slack_web_inbox', slack, env: { RELAY_ROLES: 'api,bot' } });
  await relay.register({ handle: 'hana@acme', slack_user_id: HANA });
});

afterAll(async () => {
  await relay?.stop();
  await slack?.close();
});

async function click(user: string, surface: 'message' | 'home') {
  const triggerId = slack.triggerId();
  const answer = await clickButton(`${relay.url}/slack/events`, relay.signingSecret, {
    surface,
    user,
    channel: surface === 'home' ? '' : `D${user.slice(1)}`,
    messageTs: surface === 'home' ? '' : '1700000000.000100',
    actionId: 'web_inbox_open',
    value: 'open',
    triggerId,
    responseUrl: undefined,
  });
  expect(answer.status).toBe(200);
  return (await slack.waitFor('views.open', (c) => c.args.trigger_id === triggerId)).args.view as any;
}

function linkIn(view: any): string | undefined {
  return view.blocks.flatMap((b: any) => b.elements ?? []).find((e: any) => e.url)?.url;
}

test.each(['message', 'home'] as const)(
  'a click on Open web inbox (%s) opens a modal whose link signs the browser in as the linked teammate',
  async (surface) => {
    const view = await click(HANA, surface);
    expect(JSON.stringify(view)).toContain('hana@acme');
    const link = new URL(linkIn(view)!);
    expect(link.pathname).toBe('/inbox/sign-in');
    const signIn = await fetch(`${relay.url}/inbox/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: relay.url },
      body: new URLSearchParams({ token: link.searchParams.get('token')! }).toString(),
    });
    expect(signIn.status).toBe(303);
    const cookie = signIn.headers.get('set-cookie')!.split(';')[0]!;
    const inbox = await (await fetch(`${relay.url}/inbox`, { headers: { cookie } })).text();
    expect(inbox).toContain('Sign out hana@acme');
  },
);

test('the App Home carries the Open web inbox button', async () => {
  const before = slack.callsTo('views.publish').length;
  await postSignedEvent(`${relay.url}/slack/events`, relay.signingSecret, {
    type: 'app_home_opened',
    user: HANA,
    channel: 'D0HANA',
    tab: 'home',
  });
  const published = await slack.waitFor(
    'views.publish',
    (c) => c.args.user_id === HANA && slack.callsTo('views.publish').indexOf(c) >= before,
  );
  const buttons = (published.args.view as any).blocks.flatMap((b: any) => b.elements ?? []);
  expect(buttons.map((e: any) => e.action_id)).toContain('web_inbox_open');
});

test('each click makes a new link', async () => {
  expect(linkIn(await click(HANA, 'message'))).not.toBe(linkIn(await click(HANA, 'message')));
});

test('a Slack user with no teammate is told to link first, and gets no link', async () => {
  const view = await click(JO, 'home');
  expect(JSON.stringify(view)).toContain('not linked to a handoff-relay teammate');
  expect(linkIn(view)).toBeUndefined();
});

describe('what the page does shows in the Slack DM', () => {
  const SENDER = 'U0WISEND';
  const RECIPIENT = 'U0WIRECV';
  let full: TestRelay;
  let senderKey: string;

  beforeAll(async () => {
    for (const id of [SENDER, RECIPIENT]) slack.addUser(id);
    // Every role: the worker posts and redraws the DMs.
    full = await startTestRelay({ name: 'slack_web_inbox_dm', slack });
    senderKey = await full.register({ handle: 'sam@acme', slack_user_id: SENDER });
    await full.register({ handle: 'rita@acme', slack_user_id: RECIPIENT });
  });

  afterAll(async () => {
    await full?.stop();
  });

  test('accept and complete on the web page redraw the recipient’s DM, whose Open web inbox button signed them in', async () => {
    const dm = await deliveredHandoff(full, slack, senderKey, {
      to: 'rita@acme',
      recipientSlackUser: RECIPIENT,
      summary: 'Rotate the staging certificates',
    });
    // The DM's own button, pressed: the modal's link signs Rita in.
    const click = dm.click('web_inbox_open', { responseUrl: undefined });
    await press(full, click);
    const modal = (await slack.waitFor('views.open', (c) => c.args.trigger_id === click.triggerId)).args.view;
    const link = new URL(linkIn(modal)!);
    const origin = full.url;
    const form = (fields: Record<string, string>, cookie?: string) =>
      fetch(`${full.url}${fields.path}`, {
        method: 'POST',
        redirect: 'manual',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          origin,
          ...(cookie ? { cookie } : {}),
        },
        body: new URLSearchParams(Object.entries(fields).filter(([k]) => k !== 'path')).toString(),
      });
    const signedIn = await form({ path: '/inbox/sign-in', token: link.searchParams.get('token')! });
    const cookie = signedIn.headers.get('set-cookie')!.split(';')[0]!;
    const page = await (await fetch(`${full.url}/inbox/${dm.threadId}`, { headers: { cookie } })).text();
    const csrf = /name="csrf" value="([^"]+)"/.exec(page)![1]!;

    expect((await form({ path: `/inbox/${dm.threadId}/accept`, csrf, shown: 'pending' }, cookie)).status).toBe(303);
    await waitUntil(
      async () => dmText(slack, dm.channel, dm.ts).includes('Accepted — complete it when you are done'),
      'the DM redrawn as accepted',
    );
    expect(
      (await form({ path: `/inbox/${dm.threadId}/complete`, csrf, summary: 'Rotated; expiry now 2027-12' }, cookie))
        .status,
    ).toBe(303);
    await waitUntil(async () => dmText(slack, dm.channel, dm.ts).includes('Completed'), 'the DM redrawn as completed');
    expect((await threadDoc(full, dm.threadId)).status_history.map((s) => s.via)).toEqual(['a2a', 'web', 'web']);
  });
});
