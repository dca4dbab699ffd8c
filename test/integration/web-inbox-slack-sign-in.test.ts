// Sign in with Slack on the web inbox (OpenID Connect) against a real relay and the strict fake Slack: the authorize
// redirect with state and nonce, the code exchanged once with the app's client id and secret, the teammate linked to
// the Slack user signed in with the same session as a link sign-in; a wrong state, a nonce of another sign-in, a
// replayed code, a cancelled sign-in and an unlinked Slack user are refused in words and sign nobody in.
import { startFakeSlack, type FakeSlack } from '../../scripts/fake-slack/fake-slack-api';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';

let slack: FakeSlack;
let relay: TestRelay;

beforeAll(async () => {
  slack = await startFakeSlack();
  slack.addUser('U0BOB', { real_name: 'Bob' });
  slack.addUser('U0STRANGER', { real_name: 'Stranger' });
  relay = await startTestRelay({
    name: 'web_inbox_slack',
    slack,
    env: {
      SLACK_CLIENT_ID: slack.clientId,
      SLACK_CLIENT_SECRET: slack.clientSecret,
      RELAY_SIGN_IN_RATE_LIMIT_PER_MINUTE: '1000',
    },
  });
  await relay.register({ handle: 'bob@acme', name: 'Bob', slack_user_id: 'U0BOB' });
});

afterAll(async () => {
  await relay?.stop();
  await slack?.close();
});

beforeEach(() => slack.signInAs(null));

/** A GET on the relay (its own address, whatever host RELAY_PUBLIC_URL names), without following redirects. */
async function get(pathAndQuery: string, cookies: string[] = []): Promise<globalThis.Response> {
  return fetch(`${relay.url}${pathAndQuery}`, {
    redirect: 'manual',
    headers: cookies.length ? { cookie: cookies.join('; ') } : {},
  });
}

function cookiesOf(response: globalThis.Response): Map<string, string> {
  const found = new Map<string, string>();
  for (const line of response.headers.getSetCookie()) {
    const [pair] = line.split(';');
    const at = pair!.indexOf('=');
    found.set(pair!.slice(0, at), line);
  }
  return found;
}

/** Presses "Sign in with Slack": the flow cookie and where Slack's authorize page sends the browser back to. */
async function startSignIn(): Promise<{ flowCookie: string; authorize: URL }> {
  const start = await get('/inbox/slack/sign-in');
  expect(start.status).toBe(303);
  const flow = cookiesOf(start).get('hr_slack_flow')!;
  expect(flow).toMatch(/HttpOnly/);
  expect(flow).toMatch(/SameSite=Lax/);
  expect(flow).toMatch(/Path=\/inbox\/slack/);
  return { flowCookie: flow.split(';')[0]!, authorize: new URL(start.headers.get('location')!) };
}

/** The browser at Slack's authorize page: where Slack redirects it back to (the relay's callback). */
async function atSlack(authorize: URL): Promise<URL> {
  const answer = await fetch(authorize, { redirect: 'manual' });
  expect(answer.status).toBe(302);
  return new URL(answer.headers.get('location')!);
}

function onRelay(url: URL): string {
  expect(url.pathname).toBe('/inbox/slack/callback');
  return `${url.pathname}${url.search}`;
}

test('the inbox page offers Sign in with Slack; pressing it goes to Slack’s authorize page with state and nonce', async () => {
  expect(await (await get('/inbox')).text()).toContain(
    '<a class="button" href="/inbox/slack/sign-in">Sign in with Slack</a>',
  );
  const { authorize } = await startSignIn();
  expect(authorize.origin).toBe(new URL(slack.url).origin);
  expect(authorize.pathname).toBe('/openid/connect/authorize');
  const q = authorize.searchParams;
  expect(q.get('response_type')).toBe('code');
  expect(q.get('scope')).toBe('openid');
  expect(q.get('client_id')).toBe(slack.clientId);
  expect(q.get('redirect_uri')).toMatch(/\/inbox\/slack\/callback$/);
  expect(q.get('state')).toMatch(/^[A-Za-z0-9_-]{32}$/);
  expect(q.get('nonce')).toMatch(/^[A-Za-z0-9_-]{32}$/);
  // The fake Slack's page (nobody signed in there yet) lists whom to continue as: what `npm run slack:local` shows.
  const page = await (await fetch(authorize, { redirect: 'manual' })).text();
  expect(page).toContain('Continue as Bob (U0BOB)');
});

test('a linked Slack user is signed in as their teammate, with the same session cookie a link gives', async () => {
  const { flowCookie, authorize } = await startSignIn();
  slack.signInAs('U0BOB');
  const back = await get(onRelay(await atSlack(authorize)), [flowCookie]);
  expect(back.status).toBe(303);
  expect(back.headers.get('location')).toBe('/inbox');
  const cookies = cookiesOf(back);
  const session = cookies.get('hr_session')!;
  expect(session).toMatch(/^hr_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=\d+/);
  // The flow is used up.
  expect(cookies.get('hr_slack_flow')).toMatch(/^hr_slack_flow=; .*Max-Age=0/);
  const inbox = await (await get('/inbox', [session.split(';')[0]!])).text();
  expect(inbox).toContain('bob@acme');
  expect(inbox).toContain('Waiting for me');
  // The code went to Slack once, with the app's credentials and the same redirect_uri.
  const [exchange] = slack.callsTo('openid.connect.token');
  expect(exchange!.args).toMatchObject({
    client_id: slack.clientId,
    client_secret: slack.clientSecret,
    redirect_uri: authorize.searchParams.get('redirect_uri'),
  });
});

test('a callback whose state is not this browser’s (or with no flow at all) signs nobody in', async () => {
  const { authorize } = await startSignIn();
  const other = await startSignIn();
  slack.signInAs('U0BOB');
  const callback = onRelay(await atSlack(authorize));
  for (const cookies of [[other.flowCookie], []]) {
    const answer = await get(callback, cookies);
    expect(answer.status).toBe(400);
    expect(cookiesOf(answer).has('hr_session')).toBe(false);
    expect(await answer.text()).toContain('This Slack sign-in did not start in this browser');
  }
});

test('an id_token whose nonce is another sign-in’s is refused', async () => {
  const mine = await startSignIn();
  const theirs = await startSignIn();
  slack.signInAs('U0BOB');
  // Slack's answer for the other flow (its nonce), brought back with this browser's state.
  const url = await atSlack(theirs.authorize);
  url.searchParams.set('state', mine.authorize.searchParams.get('state')!);
  const answer = await get(onRelay(url), [mine.flowCookie]);
  expect(answer.status).toBe(400);
  expect(cookiesOf(answer).has('hr_session')).toBe(false);
  expect(await answer.text()).toContain('its nonce does not match');
});

test('a code is used once: a replayed callback signs nobody in', async () => {
  const { flowCookie, authorize } = await startSignIn();
  slack.signInAs('U0BOB');
  const callback = onRelay(await atSlack(authorize));
  expect((await get(callback, [flowCookie])).status).toBe(303);
  // The same address again, with the flow cookie kept (a replay): Slack refuses the used code.
  const again = await get(callback, [flowCookie]);
  expect(cookiesOf(again).has('hr_session')).toBe(false);
  expect(again.status).toBe(400);
  // And with a fresh flow of the browser's own, the old code still fails at Slack.
  const fresh = await startSignIn();
  const code = new URL(callback, 'http://x').searchParams.get('code')!;
  const replay = await get(
    `/inbox/slack/callback?code=${encodeURIComponent(code)}&state=${fresh.authorize.searchParams.get('state')}`,
    [fresh.flowCookie],
  );
  expect(replay.status).toBe(400);
  expect(cookiesOf(replay).has('hr_session')).toBe(false);
  expect(await replay.text()).toContain('Slack did not confirm this sign-in (invalid_code)');
});

test('a Slack user linked to no teammate gets a page saying how to link', async () => {
  const { flowCookie, authorize } = await startSignIn();
  slack.signInAs('U0STRANGER');
  const answer = await get(onRelay(await atSlack(authorize)), [flowCookie]);
  expect(answer.status).toBe(403);
  expect(cookiesOf(answer).has('hr_session')).toBe(false);
  const html = await answer.text();
  expect(html).toContain('Your Slack account (U0STRANGER) is not linked to a handoff-relay teammate');
  expect(html).toContain('/handoff link');
});

test('Cancel on Slack’s page comes back as a cancelled sign-in', async () => {
  const { flowCookie, authorize } = await startSignIn();
  authorize.searchParams.set('fake_user', 'deny');
  const answer = await get(onRelay(await atSlack(authorize)), [flowCookie]);
  expect(answer.status).toBe(400);
  expect(await answer.text()).toContain('Slack sign-in was cancelled (access_denied)');
});

test('the fake Slack’s token endpoint is strict: wrong client secret, wrong redirect_uri', async () => {
  const { authorize } = await startSignIn();
  slack.signInAs('U0BOB');
  const code = (await atSlack(authorize)).searchParams.get('code')!;
  const token = (fields: Record<string, string>) =>
    fetch(`${slack.url}openid.connect.token`, { method: 'POST', body: new URLSearchParams(fields) }).then(
      (r) => r.json() as Promise<Record<string, unknown>>,
    );
  const redirect = authorize.searchParams.get('redirect_uri')!;
  const base = { client_id: slack.clientId, client_secret: slack.clientSecret, code, redirect_uri: redirect };
  expect(await token({ ...base, client_secret: 'not-the-secret' })).toEqual({ ok: false, error: 'bad_client_secret' });
  expect(await token({ ...base, client_id: '1.2' })).toEqual({ ok: false, error: 'invalid_client_id' });
  expect(await token({ ...base, redirect_uri: 'https://evil.example/cb' })).toEqual({
    ok: false,
    error: 'bad_redirect_uri',
  });
  expect(await token(base)).toMatchObject({ ok: true, token_type: 'Bearer' });
  expect(await token(base)).toEqual({ ok: false, error: 'invalid_code' });
});
