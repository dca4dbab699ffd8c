// The web inbox in a real browser (playwright-core driving Debian's Chromium): Bob signs in with a one-time link,
// finds Alice's handoff in "Waiting for me", accepts, replies and completes it, seeing each change; his second
// browser (a phone) sees the same thread update live; a cross-site form post is refused; a non-participant gets a
// 404 page; the search box finds a handoff by its words. Screenshots of the list and the thread at desktop and phone width go to the CI artifacts directory.
import { createServer, type Server } from 'node:http';
import { mkdir } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';

const CHROMIUM = '/usr/bin/chromium';
/** Git-ignored; CI keeps it as the run's artifacts. */
const ARTIFACTS = process.env.CI_ARTIFACTS_DIR ?? join(__dirname, '..', '..', 'ci-artifacts', 'web-inbox');
const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };

const DIFF = [
  'diff --git a/api/list.ts b/api/list.ts',
  '@@ -10,7 +10,9 @@ export async function list(req: Request) {',
  '-  const offset = Number(req.query.offset ?? 0); // the old offset paging that skipped rows under concurrent inserts',
  '+  const cursor = typeof req.query.cursor === "string" ? decodeCursor(req.query.cursor) : undefined; // resumes exactly',
  '+  const page = await store.page({ after: cursor, limit: 50 });',
  '   return page;',
].join('\n');

let relay: TestRelay;
let alice: string;
let bob: string;
let mallory: string;
let threadId: string;
let browser: Browser;
let desk: BrowserContext;
let phone: BrowserContext;
let evil: Server;
/** Every error the pages print in the browser's console (a policy refusal, a resource that failed to load). */
const consoleErrors: string[] = [];

beforeAll(async () => {
  relay = await startTestRelay({ name: 'web_inbox_browser' });
  alice = await relay.register({ handle: 'alice@acme', name: 'Alice Liddell' });
  bob = await relay.register({ handle: 'bob@acme', name: 'Bob Builder' });
  mallory = await relay.register({ handle: 'mallory@acme', name: 'Mallory' });
  const created = await relay.rpc(alice, 'message/send', {
    recipient: 'bob@acme',
    intent: 'ask_question',
    message: {
      parts: [
        {
          text:
            'Paging in /api/list moved from offset to cursor. Clients that keep sending ?offset= will get the first page ' +
            'forever, so the mobile app needs the new next_cursor field before Friday’s release.',
        },
      ],
    },
    metadata: {
      question: 'Can you switch the mobile client to next_cursor, or should I keep offset working a week longer?',
    },
    artifacts: [
      { type: 'file_diff', path: 'api/list.ts', diff: DIFF },
      { type: 'link', url: 'https://example.com/rfc/cursor-paging', title: 'RFC: cursor paging' },
    ],
  });
  expect(created.body.error).toBeUndefined();
  threadId = created.body.result.task_id;
  // An older one, so the list shows its order.
  await relay.rpc(alice, 'message/send', {
    recipient: 'bob@acme',
    intent: 'inform',
    message: { parts: [{ text: 'FYI: the staging database moves to the new cluster on Monday at 09:00.' }] },
  });
  await mkdir(ARTIFACTS, { recursive: true });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  desk = await browser.newContext({ viewport: DESKTOP, timezoneId: 'Europe/Berlin', locale: 'en-GB' });
  phone = await browser.newContext({
    viewport: PHONE,
    timezoneId: 'America/New_York',
    locale: 'en-US',
    isMobile: true,
  });
  for (const context of [desk, phone])
    context.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push(`${m.text()} (${m.location().url})`);
    });
});

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => (evil ? evil.close(resolve) : resolve(undefined)));
  await relay?.stop();
});

async function signInLink(key: string): Promise<string> {
  const { status, body } = await relay.rest('POST', '/agents/me/web-link', key);
  expect(status).toBe(201);
  const url = new URL(body.url as string);
  return `${relay.url}${url.pathname}${url.search}`;
}

async function signIn(context: BrowserContext, key: string, handle: string): Promise<Page> {
  const page = await context.newPage();
  await page.goto(await signInLink(key));
  await page.getByRole('button', { name: `Sign in as ${handle}` }).click();
  await page.waitForURL(`${relay.url}/inbox`);
  return page;
}

const shot = (page: Page, name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });

test('sign in, find the handoff waiting, accept, reply, complete; the phone sees each change live', async () => {
  const page = await signIn(desk, bob, 'bob@acme');
  await expect(page.getByRole('heading', { name: /Waiting for me/ })).toBeTruthy();
  const entry = page.getByRole('link', { name: /Paging in \/api\/list moved/ });
  await entry.waitFor();
  await page.getByText('FYI: the staging database').waitFor();
  // Oldest first: the handoff sent first is listed first.
  const titles = await page.locator('ul.threads a.title').allTextContents();
  expect(titles[0]).toMatch(/Paging in/);
  expect(await page.locator('nav[aria-label=Inbox] .count').first().textContent()).toBe('2');
  await shot(page, 'list-desktop');

  // The phone keeps the list open in one tab and the thread in another.
  const phoneList = await signIn(phone, bob, 'bob@acme');
  await phoneList.screenshot({ path: join(ARTIFACTS, 'list-phone.png'), fullPage: true });
  const mobile = await phone.newPage();
  await mobile.goto(`${relay.url}/inbox/${threadId}`);
  await mobile.getByText('waiting for you to accept or decline').waitFor();

  await entry.click();
  await page.waitForURL(`${relay.url}/inbox/${threadId}`);
  await page.getByText('Can you switch the mobile client to next_cursor').waitFor();
  // Times in the reader's zone, the exact instant on hover.
  const when = page.locator('time').first();
  expect(await when.getAttribute('title')).toMatch(/\(\d{4}-\d\d-\d\dT.*Z\)$/);
  expect(await when.textContent()).not.toContain('UTC');
  // The diff scrolls in its own box with line numbers; the page itself does not scroll sideways.
  const diff = page.getByRole('region', { name: 'Diff of api/list.ts' });
  expect(await diff.locator('td.n').first().textContent()).toBe('1');
  await shot(page, 'thread-desktop');
  await mobile.screenshot({ path: join(ARTIFACTS, 'thread-phone.png'), fullPage: true });
  expect(await mobile.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);

  // Keyboard only: the first Tab reaches the skip link, more Tabs reach Accept, Enter presses it.
  await page.keyboard.press('Tab');
  expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
  let reached = false;
  for (let i = 0; i < 40 && !reached; i += 1) {
    await page.keyboard.press('Tab');
    reached = await page.evaluate(() => document.activeElement?.textContent === 'Accept');
  }
  expect(reached).toBe(true);
  await page.keyboard.press('Enter');
  await page.getByRole('status').filter({ hasText: 'Accepted.' }).waitFor();
  await page.locator('.badge.accepted').first().waitFor();
  await mobile.locator('#thread .badge.accepted').first().waitFor();

  await page.getByLabel('Reply').fill('Yes — I will ship next_cursor in the mobile app today.');
  await page.getByRole('button', { name: 'Send reply' }).click();
  await page.getByText('Reply sent.').waitFor();
  await page.getByText('I will ship next_cursor in the mobile app today').waitFor();
  await mobile.getByText('I will ship next_cursor in the mobile app today').waitFor();

  // A change made elsewhere (Alice's agent) shows up on both without a reload.
  await relay.rpc(alice, 'message/send', {
    task_id: threadId,
    message: { parts: [{ text: 'Thanks! Ping me when it is out.' }] },
  });
  await page.getByText('Thanks! Ping me when it is out.').waitFor();
  await mobile.getByText('Thanks! Ping me when it is out.').waitFor();

  await page.getByLabel('What was done').fill('Mobile app 4.2 reads next_cursor; offset removed from the client.');
  await page.getByLabel('Links (optional)').fill('https://example.com/mobile/pull/812');
  await page.getByRole('button', { name: 'Complete', exact: true }).click();
  await page.getByText('Completed. The sender was told').waitFor();
  await mobile.locator('#thread .badge.completed').first().waitFor();
  await mobile.getByText('Mobile app 4.2 reads next_cursor').waitFor();
  await shot(page, 'thread-completed-desktop');

  const { body } = await relay.rpc(alice, 'tasks/get', { task_id: threadId });
  expect(body.result.status).toBe('completed');
  expect(body.result.status_history.map((s: { via: string }) => s.via)).toEqual(['a2a', 'web', 'web']);
  // The open list on the phone followed without a reload: one handoff waits now, the completed one is gone.
  await phoneList.locator('nav[aria-label=Inbox] .count').filter({ hasText: /^1$/ }).waitFor();
  await phoneList.locator('ul.threads a.title', { hasText: 'Paging in' }).waitFor({ state: 'detached' });
  expect(await phoneList.locator('ul.threads a.title').allTextContents()).toEqual([
    'FYI: the staging database moves to the new cluster on Monday at 09:00.',
  ]);
  expect(consoleErrors).toEqual([]);
});

test('typing words into the search box finds the handoff that holds them, whatever their case and accents', async () => {
  const page = await signIn(desk, bob, 'bob@acme');
  await page.goto(`${relay.url}/inbox?list=received`);
  const box = page.getByRole('searchbox', { name: 'Search' });
  await box.fill('STAGING clüster');
  await box.press('Enter');
  await page.waitForURL(/[?&]q=STAGING/);
  await page.getByText('Search results for “STAGING clüster”').waitFor();
  expect(await page.locator('ul.threads a.title').allTextContents()).toEqual([
    'FYI: the staging database moves to the new cluster on Monday at 09:00.',
  ]);
  // A word of a reply finds its thread too; one nobody wrote finds nothing, and says so.
  await page.getByRole('searchbox', { name: 'Search' }).fill('ship today');
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  await page.locator('ul.threads a.title', { hasText: 'Paging in' }).waitFor();
  await page.getByRole('searchbox', { name: 'Search' }).fill('kangaroo');
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  await page.getByText('Nothing in this list holds every word of “kangaroo”').waitFor();
  await shot(page, 'search-desktop');
  expect(consoleErrors).toEqual([]);
});

test('a form posted from another site is refused and changes nothing', async () => {
  const page = await desk.newPage();
  await page.goto(`${relay.url}/inbox/${threadId}`);
  const other = await relay.rpc(alice, 'message/send', {
    recipient: 'bob@acme',
    intent: 'inform',
    message: { parts: [{ text: 'Another one to accept' }] },
  });
  const target = other.body.result.task_id as string;
  // Another origin (same host name, another port: the browser still sends the Lax cookie, as for a sibling site).
  evil = createServer((_req, res) => {
    res.setHeader('content-type', 'text/html');
    res.end(
      `<form id="f" method="post" action="${relay.url}/inbox/${target}/accept"><input name="csrf" value="guessed"></form>` +
        `<script>document.getElementById('f').submit()</script>`,
    );
  });
  await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
  const evilUrl = `http://127.0.0.1:${(evil.address() as AddressInfo).port}/`;
  const answer = page.waitForResponse((r) => r.url() === `${relay.url}/inbox/${target}/accept`);
  await page.goto(evilUrl);
  const response = await answer;
  expect(response.status()).toBe(403);
  await page.getByText('This form was sent from another site, so nothing was changed.').waitFor();
  const { body } = await relay.rpc(alice, 'tasks/get', { task_id: target });
  expect(body.result.status).toBe('pending');

  // The same action from the page itself, with a field left empty: refused in words, on the page.
  await page.goto(`${relay.url}/inbox/${target}`);
  await page.getByRole('button', { name: 'Decline', exact: true }).click();
  await page.getByRole('alert').filter({ hasText: 'The reason to decline: write something first' }).waitFor();
  await shot(page, 'thread-refused-desktop');
  expect((await relay.rpc(alice, 'tasks/get', { task_id: target })).body.result.status).toBe('pending');
  // Snooze, as on the Slack reminder: the page says when the next reminder comes.
  await page.getByRole('button', { name: 'Tomorrow morning' }).click();
  await page.getByText('Snoozed: the reminders wait until the time shown above.').waitFor();
  await page.getByText('Reminders snoozed: the next one comes').waitFor();
  await shot(page, 'thread-snoozed-desktop');
  // The Received list filtered by the sender: the filter form keeps it, the chips count it.
  await page.goto(`${relay.url}/inbox?list=received`);
  await page.getByLabel('From (handle)').fill('alice@acme');
  await page.getByRole('button', { name: 'Filter' }).click();
  await page.waitForURL(/with=alice%40acme/);
  await page.getByRole('link', { name: 'Another one to accept' }).waitFor();
  await shot(page, 'list-filtered-desktop');
  await page.goto(`${relay.url}/inbox/sessions`);
  await page.getByText('(this browser)').waitFor();
  await shot(page, 'sessions-desktop');
});

test('someone who is not in the thread gets a 404 page', async () => {
  const context = await browser.newContext({ viewport: DESKTOP });
  try {
    const page = await signIn(context, mallory, 'mallory@acme');
    const response = await page.goto(`${relay.url}/inbox/${threadId}`);
    expect(response!.status()).toBe(404);
    await page.getByRole('heading', { name: 'No such handoff' }).waitFor();
    expect(await page.content()).not.toContain('Paging in');
  } finally {
    await context.close();
  }
});
