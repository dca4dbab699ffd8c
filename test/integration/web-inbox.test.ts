// The web inbox over HTTP against a real relay: one-time sign-in links (single use, expiry, rate limit), the session
// cookie (attributes, rotation, revoke), CSRF and cross-site refusals, a non-participant's 404, and each action
// through the same use cases as JSON-RPC, refusing bad input in words and changing nothing.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { TestClock } from '../helpers/test-clock';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { SseStream } from '../helpers/sse-client';
import { waitUntil } from '../helpers/wait-until';

const clock = new TestClock();
let relay: TestRelay;
let alice: string;
let bob: string;
let mallory: string;

beforeAll(async () => {
  relay = await startTestRelay({ name: 'web_inbox', clock, env: { RELAY_SIGN_IN_RATE_LIMIT_PER_MINUTE: '1000' } });
  alice = await relay.register({ handle: 'alice@acme', name: 'Alice' });
  bob = await relay.register({ handle: 'bob@acme', name: 'Bob' });
  mallory = await relay.register({ handle: 'mallory@acme', name: 'Mallory' });
});

afterAll(async () => {
  await relay?.stop();
});

/** The link's path and query on the test relay (the link itself names RELAY_PUBLIC_URL). */
async function signInLink(key: string, on: TestRelay = relay): Promise<string> {
  const { status, body } = await on.rest('POST', '/agents/me/web-link', key);
  expect(status).toBe(201);
  expect(Date.parse(body.expires_at) - clock.now().getTime()).toBeLessThanOrEqual(10 * 60_000);
  const url = new URL(body.url as string);
  expect(url.pathname).toBe('/inbox/sign-in');
  return `${url.pathname}${url.search}`;
}

function tokenOf(link: string): string {
  return new URL(link, 'http://x').searchParams.get('token')!;
}

async function post(
  path: string,
  fields: Record<string, string>,
  opts: { cookie?: string; origin?: string; on?: TestRelay } = {},
): Promise<Response> {
  const on = opts.on ?? relay;
  return fetch(`${on.url}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      origin: opts.origin ?? on.url,
      ...(opts.cookie ? { cookie: opts.cookie } : {}),
    },
    body: new URLSearchParams(fields).toString(),
  });
}

async function get(path: string, cookie?: string): Promise<{ status: number; html: string }> {
  const response = await fetch(`${relay.url}${path}`, { redirect: 'manual', headers: cookie ? { cookie } : {} });
  return { status: response.status, html: await response.text() };
}

/** Signs in with a fresh link; the cookie to send back. */
async function signIn(key: string, replacing?: string): Promise<string> {
  const response = await post('/inbox/sign-in', { token: tokenOf(await signInLink(key)) }, { cookie: replacing });
  expect(response.status).toBe(303);
  expect(response.headers.get('location')).toBe('/inbox');
  return response.headers.get('set-cookie')!.split(';')[0]!;
}

function csrfIn(html: string): string {
  return /name="csrf" value="([^"]+)"/.exec(html)![1]!;
}

async function newHandoff(summary = 'Paging changed: cursor now'): Promise<string> {
  const created = await relay.rpc(alice, 'message/send', {
    recipient: 'bob@acme',
    intent: 'inform',
    message: { parts: [{ text: summary }] },
  });
  expect(created.body.error).toBeUndefined();
  return created.body.result.task_id as string;
}

async function statusOf(threadId: string): Promise<{ status: string; messages: number }> {
  const { body } = await relay.rpc(alice, 'tasks/get', { task_id: threadId });
  return { status: body.result.status, messages: body.result.messages.length };
}

test('a sign-in link shows who it signs in without using it, then works exactly once', async () => {
  const link = await signInLink(bob);
  const page = await get(link);
  expect(page.status).toBe(200);
  expect(page.html).toContain('Sign in as bob@acme');
  // Looking at it twice (a link preview, say) does not use it.
  expect((await get(link)).status).toBe(200);

  const first = await post('/inbox/sign-in', { token: tokenOf(link) });
  expect(first.status).toBe(303);
  const second = await post('/inbox/sign-in', { token: tokenOf(link) });
  expect(second.status).toBe(410);
  expect(await second.text()).toContain('This sign-in link is used, expired or not one this relay issued');
  expect((await get(link)).status).toBe(410);
});

test('without the Slack app’s client id and secret there is no Sign in with Slack', async () => {
  expect((await get('/inbox')).html).not.toContain('Sign in with Slack');
  const answer = await get('/inbox/slack/sign-in');
  expect(answer.status).toBe(404);
  expect(answer.html).toContain('Sign in with Slack is not set up');
});

test('JSON-RPC inbox/sign_in_link gives the caller a link of their own; unknown params are refused', async () => {
  const { body } = await relay.rpc(bob, 'inbox/sign_in_link', {});
  expect(body.error).toBeUndefined();
  const url = new URL(body.result.url as string);
  expect((await get(`${url.pathname}${url.search}`)).html).toContain('Sign in as bob@acme');
  const bad = await relay.rpc(bob, 'inbox/sign_in_link', { handle: 'alice@acme' });
  expect(bad.body.error.message).toContain('handle');
  expect((await relay.rpc(undefined, 'inbox/sign_in_link', {})).status).toBe(401);
});

test('`handoff-relay open` prints a link for the teammate whose key it uses; a wrong key is refused in words', async () => {
  const cli = join(__dirname, '..', '..', 'dist', 'scripts', 'cli.js');
  const env = (key: string) => ({ PATH: process.env.PATH!, RELAY_URL: relay.url, RELAY_API_KEY: key });
  const { stdout } = await promisify(execFile)('node', [cli, 'open'], { env: env(bob) });
  expect(stdout).toContain('Open this link in your browser to sign in to your web inbox');
  const url = new URL(/(https?:\/\/\S+\/inbox\/sign-in\?token=\S+)/.exec(stdout)![1]!);
  expect((await get(`${url.pathname}${url.search}`)).html).toContain('Sign in as bob@acme');
  const refused = await promisify(execFile)('node', [cli, 'open'], {
    env: env(`hr_000000000000_${'A'.repeat(43)}`),
  }).catch((error: { code: number; stderr: string }) => error);
  expect(refused).toMatchObject({ code: 1 });
  expect((refused as { stderr: string }).stderr).toContain('the relay refused');
});

test('two redemptions of one link at once sign in once', async () => {
  const token = tokenOf(await signInLink(bob));
  const answers = await Promise.all([1, 2, 3].map(() => post('/inbox/sign-in', { token })));
  expect(answers.map((a) => a.status).sort()).toEqual([303, 410, 410]);
});

test('a sign-in link expires after ten minutes on the relay clock', async () => {
  const link = await signInLink(bob);
  clock.advance(10 * 60_000 + 1_000);
  const answer = await post('/inbox/sign-in', { token: tokenOf(link) });
  expect(answer.status).toBe(410);
  expect(await answer.text()).toContain('Ask for a new one');
});

test('a forged or malformed token is refused the same way', async () => {
  for (const token of ['hrw_' + 'A'.repeat(43), 'nonsense', '']) {
    const answer = await post('/inbox/sign-in', { token });
    expect(answer.status).toBe(410);
    expect(answer.headers.get('set-cookie')).toBeNull();
  }
});

test('the session cookie is HttpOnly, SameSite=Lax, for the whole site, not Secure over http', async () => {
  const response = await post('/inbox/sign-in', { token: tokenOf(await signInLink(bob)) });
  const cookie = response.headers.get('set-cookie')!;
  expect(cookie).toMatch(/^hr_session=[A-Za-z0-9_-]{43}; /);
  expect(cookie).toContain('HttpOnly');
  expect(cookie).toContain('SameSite=Lax');
  expect(cookie).toContain('Path=/');
  expect(cookie).toMatch(/Max-Age=604800/);
  expect(cookie).not.toContain('Secure');
});

test('signing in again replaces the session: a new id, and the old one no longer works', async () => {
  const first = await signIn(bob);
  expect((await get('/inbox', first)).html).toContain('Sign out bob@acme');
  const second = await signIn(bob, first);
  expect(second).not.toBe(first);
  expect((await get('/inbox', second)).html).toContain('Sign out bob@acme');
  expect((await get('/inbox', first)).html).toContain('Sign in with a one-time link');
});

test('the sessions page lists your sessions; revoking one signs that browser out, and sign-out ends your own', async () => {
  const laptop = await signIn(bob);
  const phone = await signIn(bob);
  const page = await get('/inbox/sessions', laptop);
  expect(page.html).toContain('(this browser)');
  const revokeForms = [...page.html.matchAll(/action="\/inbox\/sessions\/([^"/]+)\/revoke"/g)].map((m) => m[1]);
  expect(revokeForms.length).toBeGreaterThanOrEqual(2);
  // Find the phone's id: the phone's own page marks it as this browser.
  const phonePage = await get('/inbox/sessions', phone);
  const phoneId =
    /<tr><td><time[^>]*>[^<]*<\/time> <strong>\(this browser\)<\/strong><\/td>.*?sessions\/([^"/]+)\/revoke/.exec(
      phonePage.html,
    )![1]!;
  const revoked = await post(`/inbox/sessions/${phoneId}/revoke`, { csrf: csrfIn(page.html) }, { cookie: laptop });
  expect(revoked.status).toBe(303);
  expect((await get('/inbox', phone)).html).toContain('Sign in with a one-time link');
  expect((await get('/inbox', laptop)).html).toContain('Sign out bob@acme');
  // Another teammate cannot revoke bob's session.
  const mal = await signIn(mallory);
  const malPage = await get('/inbox/sessions', mal);
  const laptopId = revokeForms.find((id) => id !== phoneId)!;
  const refused = await post(`/inbox/sessions/${laptopId}/revoke`, { csrf: csrfIn(malPage.html) }, { cookie: mal });
  expect(refused.status).toBe(404);
  expect((await get('/inbox', laptop)).html).toContain('Sign out bob@acme');

  const out = await post('/inbox/sign-out', { csrf: csrfIn((await get('/inbox', laptop)).html) }, { cookie: laptop });
  expect(out.status).toBe(200);
  expect(out.headers.get('set-cookie')).toContain('Max-Age=0');
  expect((await get('/inbox', laptop)).html).toContain('Sign in with a one-time link');
});

test('a disabled teammate gets no sign-in link and their sessions end', async () => {
  const carol = await relay.register({ handle: 'carol@acme' });
  const cookie = await signIn(carol);
  const link = await signInLink(carol);
  await relay.rest('POST', '/admin/agents/carol@acme/disable', relay.adminKey);
  expect((await get('/inbox', cookie)).html).toContain('Sign in with a one-time link');
  expect((await post('/inbox/sign-in', { token: tokenOf(link) })).status).toBe(403);
  expect((await relay.rest('POST', '/agents/me/web-link', carol)).status).toBe(401);
});

test('Waiting for me lists pending and accepted handoffs oldest first with a count; Sent by me the sender side', async () => {
  const dave = await relay.register({ handle: 'dave@acme' });
  const erin = await relay.register({ handle: 'erin@acme' });
  const ids: string[] = [];
  for (const n of [1, 2, 3]) {
    const created = await relay.rpc(dave, 'message/send', {
      recipient: 'erin@acme',
      intent: 'inform',
      message: { parts: [{ text: `Waiting number ${n}` }] },
    });
    ids.push(created.body.result.task_id);
    clock.advance(1_000);
  }
  await relay.rpc(erin, 'tasks/update', { task_id: ids[2], transition: 'decline', reason: 'not mine' });
  const cookie = await signIn(erin);
  const waiting = (await get('/inbox?list=waiting', cookie)).html;
  expect(waiting.indexOf('Waiting number 1')).toBeLessThan(waiting.indexOf('Waiting number 2'));
  expect(waiting).not.toContain('Waiting number 3');
  expect(waiting).toMatch(/Waiting for me <span class="count" aria-label="2 handoffs">2<\/span>/);
  const declined = (await get('/inbox?list=received&status=declined', cookie)).html;
  expect(declined).toContain('Waiting number 3');
  expect(declined).not.toContain('Waiting number 1');
  expect(declined).toContain('declined (1)');
  const sent = (await get('/inbox?list=sent', await signIn(dave))).html;
  for (const n of [1, 2, 3]) expect(sent).toContain(`Waiting number ${n}`);
  // A cursor this relay did not issue is a page that says so, not a stack.
  const bad = await get('/inbox?list=sent&cursor=bogus', cookie);
  expect(bad.status).toBe(400);
  expect(bad.html).toContain('That page link is broken');
});

test('a full inbox counts to 99+: each count reads no more than a hundred threads, however many wait', async () => {
  const sender = await relay.register({ handle: 'busy-sender@acme' });
  const busy = await relay.register({ handle: 'busy@acme' });
  for (let n = 0; n < 101; n += 1) {
    const created = await relay.rpc(sender, 'message/send', {
      recipient: 'busy@acme',
      intent: 'inform',
      message: { parts: [{ text: `Queued number ${n}` }] },
    });
    expect(created.status).toBe(200);
  }
  const waiting = (await get('/inbox?list=waiting', await signIn(busy))).html;
  expect(waiting).toMatch(/Waiting for me <span class="count" aria-label="99\+ handoffs">99\+<\/span>/);
  expect(waiting).toContain('pending (99+)');
});

test('the lists filter by intent, by teammate or by both, with counts and pages of the filtered list', async () => {
  const fay = await relay.register({ handle: 'fay@acme' });
  const gus = await relay.register({ handle: 'gus@acme' });
  const hal = await relay.register({ handle: 'hal@acme' });
  const send = async (from: string, recipient: string, intent: string, text: string) => {
    const created = await relay.rpc(from, 'message/send', {
      recipient,
      intent,
      message: { parts: [{ text }] },
      ...(intent === 'ask_question' ? { metadata: { question: `${text}?` } } : {}),
    });
    expect(created.body.error).toBeUndefined();
    clock.advance(1_000);
  };
  await send(gus, 'fay@acme', 'inform', 'From gus, for info');
  await send(gus, 'fay@acme', 'ask_question', 'From gus, a question');
  await send(hal, 'fay@acme', 'inform', 'From hal, for info');
  await send(fay, 'gus@acme', 'inform', 'Fay to gus');
  await send(fay, 'hal@acme', 'inform', 'Fay to hal');
  const cookie = await signIn(fay);

  const byGus = (await get('/inbox?list=received&with=gus@acme', cookie)).html;
  expect(byGus).toContain('From gus, for info');
  expect(byGus).toContain('From gus, a question');
  expect(byGus).not.toContain('From hal');
  // The status counts are the filtered list's, and the filter stays on the status links.
  expect(byGus).toContain('pending (2)');
  expect(byGus).toContain('href="/inbox?list=received&amp;with=gus%40acme&amp;status=pending"');
  expect(byGus).toContain('value="gus@acme"');

  const informs = (await get('/inbox?list=received&intent=inform', cookie)).html;
  expect(informs).toContain('From gus, for info');
  expect(informs).toContain('From hal, for info');
  expect(informs).not.toContain('From gus, a question');
  expect(informs).toContain('pending (2)');
  expect(informs).toMatch(/<option value="inform" selected>/);

  // On Sent by me the teammate is the recipient; Waiting for me filters the same way.
  const toHal = (await get('/inbox?list=sent&with=hal@acme', cookie)).html;
  expect(toHal).toContain('Fay to hal');
  expect(toHal).not.toContain('Fay to gus');
  const waitingQuestions = (await get('/inbox?list=waiting&intent=ask_question', cookie)).html;
  expect(waitingQuestions).toContain('From gus, a question');
  expect(waitingQuestions).not.toContain('for info');
  // Blank filters (the form's "Any") are no filter.
  const blank = (await get('/inbox?list=received&intent=&with=', cookie)).html;
  for (const text of ['From gus, for info', 'From gus, a question', 'From hal, for info'])
    expect(blank).toContain(text);

  // Pages of a filtered list: walking the cursor returns each of them once.
  for (let n = 0; n < 26; n += 1) await send(hal, 'fay@acme', 'inform', `Note ${n} from hal`);
  const first = (await get('/inbox?list=received&with=hal@acme', cookie)).html;
  const next = /href="(\/inbox\?list=received&amp;with=hal%40acme&amp;cursor=[^"]+)"/.exec(first)![1]!;
  const second = (await get(next.replace(/&amp;/g, '&'), cookie)).html;
  const shown = [first, second].flatMap((html) => [...html.matchAll(/Note (\d+) from hal</g)].map((m) => Number(m[1])));
  expect(shown.sort((a, b) => a - b)).toEqual(Array.from({ length: 26 }, (_, n) => n));
  expect(first + second).toContain('From hal, for info');
  expect(first + second).not.toContain('From gus');

  // Both at once: what gus sent for information, not his question nor hal's notes; the counts and links keep both.
  const both = await get('/inbox?list=received&intent=inform&with=gus@acme', cookie);
  expect(both.status).toBe(200);
  expect(both.html).toContain('From gus, for info');
  expect(both.html).not.toContain('From gus, a question');
  expect(both.html).not.toContain('from hal');
  expect(both.html).toContain('pending (1)');
  expect(both.html).toContain('href="/inbox?list=received&amp;intent=inform&amp;with=gus%40acme&amp;status=pending"');
  const sentBoth = (await get('/inbox?list=sent&intent=ask_question&with=hal@acme', cookie)).html;
  expect(sentBoth).not.toContain('Fay to hal');
  expect(sentBoth).toContain('You have not sent any handoffs.');
});

test('pages are strict: CSP allows only the relay’s own script and style; the script and stylesheet are served', async () => {
  const cookie = await signIn(bob);
  const response = await fetch(`${relay.url}/inbox`, { headers: { cookie } });
  const csp = response.headers.get('content-security-policy')!;
  expect(csp).toContain("script-src 'self'");
  expect(csp).toContain("default-src 'none'");
  expect(csp).toContain("form-action 'self'");
  expect(csp).toContain("frame-ancestors 'none'");
  expect(response.headers.get('cache-control')).toBe('no-store');
  const html = await response.text();
  expect(html).not.toMatch(/<script(?![^>]*src="\/inbox\/app\.js")/);
  expect(html).not.toMatch(/https?:\/\/(?!127\.0\.0\.1|localhost)/);
  expect((await fetch(`${relay.url}/inbox/app.js`)).headers.get('content-type')).toMatch(/javascript/);
  expect((await fetch(`${relay.url}/inbox/app.css`)).headers.get('content-type')).toMatch(/text\/css/);
});

test('the pages’ event stream: the session’s own events, unnamed, resuming after Last-Event-ID; none without a session', async () => {
  const id = await newHandoff('Stream me');
  const anonymous = await SseStream.open(`${relay.url}/inbox/events`);
  expect(anonymous.status).toBe(401);
  const cookie = await signIn(bob);
  const stream = await SseStream.open(`${relay.url}/inbox/events`, { headers: { cookie } });
  expect(stream.status).toBe(200);
  await relay.rpc(alice, 'message/send', { task_id: id, message: { parts: [{ text: 'ping' }] } });
  const [first] = await stream.waitFor(1, 'the message event');
  stream.close();
  // Unnamed, so the page's EventSource.onmessage hears it; the thread it is about is in its data.
  expect(first!.event).toBe('message');
  expect(JSON.parse(first!.data)).toMatchObject({ type: 'thread.message', thread_id: id });

  // What happened while the page was away arrives when its EventSource reconnects with the last id it saw.
  await relay.rpc(alice, 'message/send', { task_id: id, message: { parts: [{ text: 'pong' }] } });
  const resumed = await SseStream.open(`${relay.url}/inbox/events`, {
    headers: { cookie, 'last-event-id': first!.id! },
  });
  const [next] = await resumed.waitFor(1, 'the event after the last one seen');
  resumed.close();
  expect(next!.id).not.toBe(first!.id);
  expect(JSON.parse(next!.data)).toMatchObject({ type: 'thread.message', thread_id: id });
});

describe('a thread and its actions', () => {
  let bobCookie: string;
  let bobCsrf: string;

  beforeAll(async () => {
    bobCookie = await signIn(bob);
    bobCsrf = csrfIn((await get('/inbox', bobCookie)).html);
  });

  test('teammate content is escaped and marked as the teammate’s words', async () => {
    const id = await newHandoff('Look </div><script>alert(1)</script> here');
    const { status, html } = await get(`/inbox/${id}`, bobCookie);
    expect(status).toBe(200);
    expect(html).toContain('&lt;/div&gt;&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).not.toContain('<script>alert(1)');
    expect(html).toContain('<p class="said">alice@acme wrote</p>');
  });

  test('accept, reply and complete through the forms: the same change JSON-RPC sees, recorded via web', async () => {
    const id = await newHandoff();
    const page = (await get(`/inbox/${id}`, bobCookie)).html;
    expect(page).toContain('>Accept</button>');
    const accepted = await post(`/inbox/${id}/accept`, { csrf: bobCsrf, shown: 'pending' }, { cookie: bobCookie });
    expect(accepted.status).toBe(303);
    expect(accepted.headers.get('location')).toBe(`/inbox/${id}?done=accept`);
    // This relay has no Slack: the page claims no DM.
    expect((await get(`/inbox/${id}?done=accept`, bobCookie)).html).toContain(
      '<div class="notice" role="status">Accepted. The sender sees it now.</div>',
    );
    expect(await statusOf(id)).toEqual({ status: 'accepted', messages: 0 });

    expect((await post(`/inbox/${id}/reply`, { csrf: bobCsrf, body: 'On it' }, { cookie: bobCookie })).status).toBe(
      303,
    );
    expect(await statusOf(id)).toEqual({ status: 'accepted', messages: 1 });

    const done = await post(
      `/inbox/${id}/complete`,
      { csrf: bobCsrf, summary: 'Shipped in #42', links: 'https://example.com/pr/42\n' },
      { cookie: bobCookie },
    );
    expect(done.status).toBe(303);
    const { body } = await relay.rpc(alice, 'tasks/get', { task_id: id });
    expect(body.result.status).toBe('completed');
    expect(body.result.completed_summary).toBe('Shipped in #42');
    expect(body.result.completion_artifacts).toEqual([{ type: 'link', url: 'https://example.com/pr/42' }]);
    expect(body.result.status_history.map((s: { via: string }) => s.via)).toEqual(['a2a', 'web', 'web']);
  });

  test('a pending handoff says whom it waits for; a question answered by a reply still waits for the accept', async () => {
    const created = await relay.rpc(alice, 'message/send', {
      recipient: 'bob@acme',
      intent: 'ask_question',
      message: { parts: [{ text: 'Staging database version' }] },
      metadata: { question: 'Which Postgres version does staging run?' },
    });
    const id = created.body.result.task_id as string;
    const aliceCookie = await signIn(alice);
    // The line under the title, as read: the badge's meta words, their times as text.
    const line = (html: string) =>
      /<span class="badge pending">pending<\/span> <span class="meta">([\s\S]*?)<\/span><\/p>/
        .exec(html)?.[1]
        ?.replace(/<[^>]+>/g, '');
    expect(line((await get(`/inbox/${id}`, bobCookie)).html)).toMatch(/^waiting for you to accept or decline · /);
    expect(line((await get(`/inbox/${id}`, aliceCookie)).html)).toMatch(/^waiting for Bob to accept or decline · /);

    expect(
      (await post(`/inbox/${id}/reply`, { csrf: bobCsrf, body: 'Postgres 15' }, { cookie: bobCookie })).status,
    ).toBe(303);
    const answered = line((await get(`/inbox/${id}`, bobCookie)).html)!;
    expect(answered).toMatch(
      /^waiting for you to accept or decline · Asks a question · sent .* · answered by bob@acme /,
    );
    expect(answered).not.toContain('waiting for an answer');
    expect(await statusOf(id)).toEqual({ status: 'pending', messages: 1 });
  });

  test('Accept and hand to my agent accepts and queues a run for the recipient’s runner, as tasks/update run: true does', async () => {
    const id = await newHandoff();
    const page = (await get(`/inbox/${id}`, bobCookie)).html;
    expect(page).toContain('>Accept and hand to my agent</button>');
    const answer = await post(`/inbox/${id}/agent`, { csrf: bobCsrf, shown: 'pending' }, { cookie: bobCookie });
    expect(answer.status).toBe(303);
    const doc = (await relay.relay.reads.threadById(id))!;
    expect(doc.status).toBe('accepted');
    expect(doc.run).toMatchObject({ status: 'queued' });
    const after = (await get(`/inbox/${id}?done=agent`, bobCookie)).html;
    expect(after).toContain('Handed to your agent');
    // While the run is open there is nothing more to hand over.
    expect(after).not.toMatch(/[Hh]and to my agent<\/button>/);
  });

  test('Snooze, as Slack’s Snooze buttons: the recipient moves the next reminder, the page shows when it comes, and the other open pages hear of it', async () => {
    const id = await newHandoff();
    const page = (await get(`/inbox/${id}`, bobCookie)).html;
    for (const label of ['1 hour from now', 'Tomorrow morning', 'Next week'])
      expect(page).toContain(`>${label}</button>`);
    // The sender is not offered Snooze, and a post of theirs is refused by the use case, changing nothing.
    const aliceCookie = await signIn(alice);
    const alicePage = (await get(`/inbox/${id}`, aliceCookie)).html;
    expect(alicePage).not.toContain('Snooze the reminders');
    const bySender = await post(
      `/inbox/${id}/snooze`,
      { csrf: csrfIn(alicePage), choice: '1h' },
      { cookie: aliceCookie },
    );
    expect(bySender.status).toBe(403);
    expect(await bySender.text()).toContain('Only the recipient (bob@acme) can snooze');
    // A choice Slack does not offer is refused in words.
    const odd = await post(`/inbox/${id}/snooze`, { csrf: bobCsrf, choice: '10y' }, { cookie: bobCookie });
    expect(odd.status).toBe(400);
    expect(await odd.text()).toContain('Snooze: choose 1 hour, tomorrow morning or next week');
    expect((await relay.relay.reads.threadById(id))!.timers?.snoozed_until ?? null).toBeNull();

    // The sender's open page and the recipient's other browser listen to their live streams.
    const streams = await Promise.all([
      SseStream.open(`${relay.url}/inbox/events`, { headers: { cookie: aliceCookie } }),
      SseStream.open(`${relay.url}/inbox/events`, { headers: { cookie: await signIn(bob) } }),
    ]);
    const snoozedOn = (stream: SseStream) =>
      stream.dataEvents().find((e) => {
        const data = JSON.parse(e.data) as { type?: string; thread_id?: string };
        return data.type === 'thread.snoozed' && data.thread_id === id;
      });
    const before = clock.now().getTime();
    const answer = await post(`/inbox/${id}/snooze`, { csrf: bobCsrf, choice: '1h' }, { cookie: bobCookie });
    expect(answer.status).toBe(303);
    expect(answer.headers.get('location')).toBe(`/inbox/${id}?done=snooze`);
    // An hour from when it was pressed (the relay clock runs on from the test's), as Slack's "Snooze 1 hour".
    const stored = new Date((await relay.relay.reads.threadById(id))!.timers!.snoozed_until!);
    expect(stored.getTime()).toBeGreaterThanOrEqual(before + 3_600_000);
    expect(stored.getTime()).toBeLessThanOrEqual(clock.now().getTime() + 3_600_000);
    const until = stored.toISOString();
    const after = (await get(`/inbox/${id}?done=snooze`, bobCookie)).html;
    expect(after).toContain('Snoozed: the reminders wait until the time shown above.');
    expect(after).toContain(`Reminders snoozed: the next one comes <time datetime="${until}"`);
    // An event of its own (by the recipient, via web), recorded on the thread like any other (the outbox sweep
    // enqueues it if Redis was away): each open page fetches itself again on it.
    expect((await relay.relay.reads.threadById(id))!.outbox.map((e) => e.type)).toContain('thread.snoozed');
    for (const stream of streams) {
      const event = await waitUntil(async () => snoozedOn(stream), 'the thread.snoozed event on a live stream');
      expect(JSON.parse(event.data)).toMatchObject({ by: 'bob@acme', via: 'web' });
      stream.close();
    }

    // Once accepted there are no reminders to snooze: not offered, and a stale form is refused in words.
    await relay.rpc(bob, 'tasks/update', { task_id: id, transition: 'accept' });
    const accepted = (await get(`/inbox/${id}`, bobCookie)).html;
    expect(accepted).not.toContain('Snooze the reminders');
    expect(accepted).not.toContain('Reminders snoozed');
    const stale = await post(`/inbox/${id}/snooze`, { csrf: bobCsrf, choice: 'week' }, { cookie: bobCookie });
    expect(await stale.text()).toMatch(
      /Not done: The handoff is accepted; there are no reminders to snooze\. Nothing was changed/,
    );
  });

  test('each action refuses bad input with a message and changes nothing', async () => {
    const id = await newHandoff();
    const cases: Array<[string, Record<string, string>, number, string]> = [
      ['reply', { body: '   ' }, 400, 'The reply: write something first'],
      ['decline', { reason: '' }, 400, 'The reason to decline: write something first'],
      ['complete', { summary: 'done' }, 409, 'Nothing was changed'],
      ['cancel', {}, 403, 'Nothing was changed'],
      ['frobnicate', {}, 404, 'No such handoff'],
    ];
    for (const [action, fields, status, words] of cases) {
      const answer = await post(`/inbox/${id}/${action}`, { csrf: bobCsrf, ...fields }, { cookie: bobCookie });
      const html = await answer.text();
      expect([action, answer.status]).toEqual([action, status]);
      expect(html).toContain(words);
    }
    await post(`/inbox/${id}/accept`, { csrf: bobCsrf }, { cookie: bobCookie });
    const badLink = await post(
      `/inbox/${id}/complete`,
      { csrf: bobCsrf, summary: 'done', links: 'javascript:alert(1)' },
      { cookie: bobCookie },
    );
    expect(badLink.status).toBe(400);
    const html = await badLink.text();
    expect(html).toContain('is not a web link');
    // What was typed is kept in the form.
    expect(html).toMatch(/<textarea id="complete-summary" name="summary">done<\/textarea>/);
    expect(await statusOf(id)).toEqual({ status: 'accepted', messages: 0 });
  });

  test('a state that moved on elsewhere is refused in words', async () => {
    const id = await newHandoff();
    await relay.rpc(alice, 'tasks/cancel', { task_id: id });
    const answer = await post(`/inbox/${id}/accept`, { csrf: bobCsrf, shown: 'pending' }, { cookie: bobCookie });
    expect(answer.status).toBeGreaterThanOrEqual(400);
    expect(await answer.text()).toMatch(/Not done: .*cancel.*Nothing was changed/s);
    expect((await statusOf(id)).status).toBe('cancelled');
  });

  test('CSRF: a form without the session token, with another session’s, or from another site changes nothing', async () => {
    const id = await newHandoff();
    const mal = await signIn(mallory);
    const malCsrf = csrfIn((await get('/inbox', mal)).html);
    const refusals = [
      await post(`/inbox/${id}/accept`, {}, { cookie: bobCookie }),
      await post(`/inbox/${id}/accept`, { csrf: 'x'.repeat(43) }, { cookie: bobCookie }),
      await post(`/inbox/${id}/accept`, { csrf: malCsrf }, { cookie: bobCookie }),
      await post(`/inbox/${id}/accept`, { csrf: bobCsrf }, { cookie: bobCookie, origin: 'https://evil.example' }),
      await post(`/inbox/${id}/accept`, { csrf: bobCsrf }, { cookie: bobCookie, origin: 'null' }),
    ];
    for (const answer of refusals) {
      expect(answer.status).toBe(403);
      expect(await answer.text()).toContain('nothing was changed');
    }
    // No session at all.
    const anonymous = await post(`/inbox/${id}/accept`, { csrf: bobCsrf });
    expect(anonymous.status).toBe(401);
    expect((await statusOf(id)).status).toBe('pending');
    // A sign-in posted from another site does not sign in.
    const loginCsrf = await post(
      '/inbox/sign-in',
      { token: tokenOf(await signInLink(bob)) },
      { origin: 'https://evil.example' },
    );
    expect(loginCsrf.status).toBe(403);
    expect(loginCsrf.headers.get('set-cookie')).toBeNull();
  });

  test('a non-participant gets a 404 page for the thread and its forms, and changes nothing', async () => {
    const id = await newHandoff();
    const mal = await signIn(mallory);
    const malCsrf = csrfIn((await get('/inbox', mal)).html);
    const page = await get(`/inbox/${id}`, mal);
    expect(page.status).toBe(404);
    expect(page.html).toContain('No such handoff');
    expect(page.html).not.toContain('Paging changed');
    const answer = await post(`/inbox/${id}/accept`, { csrf: malCsrf }, { cookie: mal });
    expect(answer.status).toBe(404);
    expect((await statusOf(id)).status).toBe('pending');
    // The signed read-only link still works without a session.
    const { body } = await relay.rpc(bob, 'tasks/get', { task_id: id });
    const url = new URL(body.result.inbox_url as string);
    const signed = await get(`${url.pathname}${url.search}`);
    expect(signed.status).toBe(200);
    expect(signed.html).toContain('Paging changed');
  });

  test('the sender can cancel with a reason; the recipient is not offered Cancel', async () => {
    const id = await newHandoff();
    expect((await get(`/inbox/${id}`, bobCookie)).html).not.toContain('Cancel this handoff');
    const aliceCookie = await signIn(alice);
    const page = (await get(`/inbox/${id}`, aliceCookie)).html;
    expect(page).toContain('Cancel this handoff');
    const answer = await post(
      `/inbox/${id}/cancel`,
      { csrf: csrfIn(page), reason: 'wrong person' },
      { cookie: aliceCookie },
    );
    expect(answer.status).toBe(303);
    expect((await statusOf(id)).status).toBe('cancelled');
  });
});

describe('on a relay served over https, with a small sign-in limit', () => {
  let strict: TestRelay;
  beforeAll(async () => {
    strict = await startTestRelay({
      name: 'web_inbox_https',
      env: {
        RELAY_PUBLIC_URL: 'https://relay.example.com',
        RELAY_SIGN_IN_RATE_LIMIT_PER_MINUTE: '4',
        RELAY_RATE_LIMIT_PER_MINUTE: '2',
      },
    });
  });
  afterAll(async () => {
    await strict?.stop();
  });

  test('changes from the page count against the teammate’s own limit, the same as their JSON-RPC calls', async () => {
    const sender = await strict.register({ handle: 'gina@acme' });
    const key = await strict.register({ handle: 'hal@acme' });
    const created = await strict.rpc(sender, 'message/send', {
      recipient: 'hal@acme',
      intent: 'inform',
      message: { parts: [{ text: 'Count my replies' }] },
    });
    const id = created.body.result.task_id as string;
    const origin = 'https://relay.example.com';
    const signedIn = await post(
      '/inbox/sign-in',
      { token: tokenOf(await signInLink(key, strict)) },
      { on: strict, origin },
    );
    const cookie = signedIn.headers.get('set-cookie')!.split(';')[0]!;
    const page = await (await fetch(`${strict.url}/inbox/${id}`, { headers: { cookie } })).text();
    const reply = (text: string) =>
      post(`/inbox/${id}/reply`, { csrf: csrfIn(page), body: text }, { on: strict, origin, cookie });
    expect((await reply('one')).status).toBe(303);
    expect((await reply('two')).status).toBe(303);
    const third = await reply('three');
    expect(third.status).toBe(429);
    expect(await third.text()).toContain('Nothing was changed');
    // The same count as the key's JSON-RPC calls.
    const rpc = await strict.rpc(key, 'message/send', { task_id: id, message: { parts: [{ text: 'four' }] } });
    expect(rpc.body.error.data?.code ?? rpc.body.error.message).toMatch(/rate_limited|Too many/);
    const { body } = await strict.rpc(sender, 'tasks/get', { task_id: id });
    expect(body.result.messages.map((m: { body: string }) => m.body)).toEqual(['one', 'two']);
  });

  test('the cookie is Secure, and sign-in attempts past the limit are refused with Retry-After', async () => {
    const key = await strict.register({ handle: 'frank@acme' });
    const token = tokenOf(await signInLink(key, strict));
    const ok = await post('/inbox/sign-in', { token }, { on: strict, origin: 'https://relay.example.com' });
    expect(ok.status).toBe(303);
    expect(ok.headers.get('set-cookie')).toContain('; Secure');
    // The first test signed in once: this is the 2nd attempt, the guesses the 3rd and 4th, then the limit.
    await post('/inbox/sign-in', { token: 'guess' }, { on: strict, origin: 'https://relay.example.com' });
    await post('/inbox/sign-in', { token: 'guess' }, { on: strict, origin: 'https://relay.example.com' });
    const limited = await post(
      '/inbox/sign-in',
      { token: 'guess' },
      { on: strict, origin: 'https://relay.example.com' },
    );
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await limited.text()).toContain('Too many web inbox sign-in attempts from your address');
    // Even a good link waits: the limit counts attempts, not failures.
    const good = await post('/inbox/sign-in', { token: tokenOf(await signInLink(key, strict)) }, { on: strict });
    expect(good.status).toBe(429);
  });
});

describe('approvals and claims from the page', () => {
  const POLICY = `
rules:
  - id: held-create
    match: { action: handoff.create, recipient: { handle: held@acme } }
    effect: require_approval
    approvers: [gate@acme]
  - id: held-accept
    match: { action: handoff.accept, recipient: { handle: gated@acme } }
    effect: require_approval
    approvers: [gate@acme]
`;
  let gate: string;
  let held: string;
  let gated: string;

  beforeAll(async () => {
    gate = await relay.register({ handle: 'gate@acme', name: 'Gate Keeper' });
    held = await relay.register({ handle: 'held@acme' });
    gated = await relay.register({ handle: 'gated@acme' });
    const applied = await relay.rest('PUT', '/admin/policy', relay.adminKey, { source: POLICY });
    expect(applied.status).toBe(200);
  });

  afterAll(async () => {
    await relay.rest('PUT', '/admin/policy', relay.adminKey, { source: 'rules: []\n' });
  });

  test('an approver finds a held handoff in Approvals for me, sees the thread, must give a reason to reject, approves', async () => {
    const created = await relay.rpc(alice, 'message/send', {
      recipient: 'held@acme',
      intent: 'inform',
      message: { parts: [{ text: 'Held until the gate approves' }] },
    });
    const id = created.body.result.task_id as string;
    const cookie = await signIn(gate);
    const list = (await get('/inbox?list=approvals', cookie)).html;
    expect(list).toContain(`href="/inbox/${id}"`);
    expect(list).toContain('alice@acme asks to handoff.create');
    const page = await get(`/inbox/${id}`, cookie);
    expect(page.status).toBe(200);
    expect(page.html).toContain('Held until the gate approves');
    expect(page.html).toContain('you are an approver');
    const approveAction = /action="(\/inbox\/approvals\/[^"]+\/approve)"/.exec(page.html)![1]!;
    const rejectAction = approveAction.replace(/approve$/, 'reject');
    const noReason = await post(rejectAction, { csrf: csrfIn(page.html), reason: '' }, { cookie });
    expect(noReason.status).toBe(400);
    expect(await noReason.text()).toContain('Write why you reject it first');
    // Not an approver: refused in words, nothing decided.
    const bobCookie = await signIn(bob);
    const notYours = await post(
      approveAction,
      { csrf: csrfIn((await get('/inbox', bobCookie)).html) },
      { cookie: bobCookie },
    );
    expect(notYours.status).toBe(404);
    expect((await relay.rpc(alice, 'tasks/get', { task_id: id })).body.result.status).toBe('awaiting_approval');

    const approved = await post(approveAction, { csrf: csrfIn(page.html) }, { cookie });
    expect(approved.status).toBe(303);
    expect((await relay.rpc(alice, 'tasks/get', { task_id: id })).body.result.status).toBe('pending');
    expect((await get('/inbox?list=waiting', await signIn(held))).html).toContain('Held until the gate approves');
    // Decided: it leaves the approver's list, and a second vote is refused in words.
    expect((await get('/inbox?list=approvals', cookie)).html).not.toContain(`href="/inbox/${id}"`);
    const again = await post(approveAction, { csrf: csrfIn(page.html) }, { cookie });
    expect(again.status).toBe(409);
    expect(await again.text()).toContain('Nothing was changed');
  });

  test('an accept a policy holds says who must approve it; the approver’s Approve applies it', async () => {
    const created = await relay.rpc(alice, 'message/send', {
      recipient: 'gated@acme',
      intent: 'inform',
      message: { parts: [{ text: 'Accept needs the gate' }] },
    });
    const id = created.body.result.task_id as string;
    const cookie = await signIn(gated);
    const page = (await get(`/inbox/${id}`, cookie)).html;
    const accept = await post(`/inbox/${id}/accept`, { csrf: csrfIn(page), shown: 'pending' }, { cookie });
    expect(accept.status).toBe(202);
    const html = await accept.text();
    expect(html).toContain('Held for approval');
    expect(html).toContain('gate@acme');
    expect((await relay.rpc(alice, 'tasks/get', { task_id: id })).body.result.status).toBe('pending');

    const gateCookie = await signIn(gate);
    const gatePage = (await get(`/inbox/${id}`, gateCookie)).html;
    const approveAction = /action="(\/inbox\/approvals\/[^"]+\/approve)"/.exec(gatePage)![1]!;
    expect((await post(approveAction, { csrf: csrfIn(gatePage) }, { cookie: gateCookie })).status).toBe(303);
    const { body } = await relay.rpc(alice, 'tasks/get', { task_id: id });
    expect(body.result.status).toBe('accepted');
    expect(body.result.status_history.at(-1)).toMatchObject({ status: 'accepted', by: 'gated@acme', via: 'web' });
  });

  test('a routed handoff is listed for its candidates; Claim makes it yours; the other candidate no longer sees it', async () => {
    const ana = await relay.register({ handle: 'ana@acme', role: 'designer' });
    const ben = await relay.register({ handle: 'ben@acme', role: 'designer' });
    const created = await relay.rpc(alice, 'message/send', {
      recipient: 'role:designer',
      intent: 'inform',
      message: { parts: [{ text: 'Any designer: new empty states' }] },
    });
    const id = created.body.result.task_id as string;
    expect((await relay.rpc(alice, 'tasks/get', { task_id: id })).body.result.status).toBe('unclaimed');
    const anaCookie = await signIn(ana);
    const benCookie = await signIn(ben);
    expect((await get('/inbox?list=claimable', anaCookie)).html).toContain('Any designer: new empty states');
    const page = (await get(`/inbox/${id}`, anaCookie)).html;
    expect(page).toContain('>Claim it</button>');
    expect(page).not.toContain('>Accept</button>');
    expect((await post(`/inbox/${id}/claim`, { csrf: csrfIn(page) }, { cookie: anaCookie })).status).toBe(303);
    const { body } = await relay.rpc(alice, 'tasks/get', { task_id: id });
    expect(body.result).toMatchObject({ status: 'pending', recipient: { handle: 'ana@acme' } });
    expect((await get(`/inbox/${id}`, anaCookie)).html).toContain('>Accept</button>');
    expect((await get(`/inbox/${id}`, benCookie)).status).toBe(404);
    expect((await get('/inbox?list=claimable', benCookie)).html).not.toContain('Any designer');
  });
});
