// GET /inbox/:thread_id: the link in every DM and API answer shows its participant the whole thread, escaped,
// read-only; a link that is not genuine shows nothing of the thread.
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';

let relay: TestRelay;
let alice: string;
let bob: string;
let threadId: string;
/** Alice's own link, from the create answer (reading the thread over the API would mark it read). */
let aliceUrl: string;

const LONG_DIFF = Array.from({ length: 400 }, (_, i) => `+line ${i} <b>&amp;</b>`).join('\n');
const HOSTILE = '</pre><script>alert(1)</script><img src=x onerror=alert(2)>';

beforeAll(async () => {
  relay = await startTestRelay({ name: 'inbox_page' });
  alice = await relay.register({ handle: 'alice@acme', name: 'Alice' });
  bob = await relay.register({ handle: 'bob@acme', name: 'Bob' });
  await relay.register({ handle: 'mallory@acme' });
  const created = await relay.rpc(alice, 'message/send', {
    recipient: 'bob@acme',
    intent: 'ask_question',
    message: { parts: [{ text: `Paging changed ${HOSTILE}` }] },
    metadata: { question: 'Cursor or offset?' },
    artifacts: [
      { type: 'file_diff', path: 'api/list.ts', diff: LONG_DIFF },
      { type: 'link', url: 'https://example.com/spec', title: 'Spec' },
    ],
  });
  expect(created.body.error).toBeUndefined();
  threadId = created.body.result.task_id;
  aliceUrl = created.body.result.inbox_url;
  const reply = await relay.rpc(bob, 'message/send', {
    task_id: threadId,
    message: { parts: [{ text: 'Cursor, please' }] },
  });
  expect(reply.body.error).toBeUndefined();
});

afterAll(async () => {
  await relay?.stop();
});

async function inboxUrlFor(key: string): Promise<string> {
  const { body } = await relay.rpc(key, 'tasks/get', { task_id: threadId });
  return body.result.inbox_url as string;
}

/** inbox_url uses RELAY_PUBLIC_URL; the test relay answers on its own port. */
function local(url: string): string {
  const u = new URL(url);
  return `${relay.url}${u.pathname}${u.search}`;
}

test('the recipient link shows the whole thread: full diff, question, messages, history', async () => {
  const response = await fetch(local(await inboxUrlFor(bob)));
  expect(response.status).toBe(200);
  expect(response.headers.get('content-security-policy')).toContain("default-src 'none'");
  expect(response.headers.get('cache-control')).toBe('no-store');
  expect(response.headers.get('referrer-policy')).toBe('no-referrer');
  const html = await response.text();
  expect(html).toContain('Cursor or offset?');
  expect(html).toContain('+line 399 &lt;b&gt;&amp;amp;&lt;/b&gt;');
  expect(html).toContain('Cursor, please');
  expect(html).toContain('<a href="https://example.com/spec" rel="noopener noreferrer nofollow">Spec</a>');
  expect(html).toContain('you are bob@acme');
  // Text wraps; the diff scrolls in its own box, a row per line with its number; times are <time> elements.
  expect(html).toContain('white-space:pre-wrap');
  expect(html).toContain('<tr class="add"><td class="n">400</td><td class="l">+line 399');
  expect(html).toMatch(
    /<time datetime="\d{4}-\d\d-\d\dT[^"]+Z" title="[^"]+">\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC<\/time>/,
  );
});

test("a teammate's text cannot become markup", async () => {
  const html = await (await fetch(local(await inboxUrlFor(bob)))).text();
  expect(html).not.toContain('<script>');
  expect(html).not.toContain('<img');
  expect(html).toContain('&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;');
});

test('the sender gets a link of their own from the create answer, and it works', async () => {
  const created = await relay.rpc(alice, 'message/send', {
    recipient: 'bob@acme',
    intent: 'inform',
    message: { parts: [{ text: 'fyi' }] },
  });
  const url = created.body.result.inbox_url as string;
  expect(url).toContain('as=alice%40acme');
  const html = await (await fetch(local(url))).text();
  expect(html).toContain('you are alice@acme');
});

test('a link that is not genuine shows nothing of the thread', async () => {
  const genuine = new URL(local(await inboxUrlFor(bob)));
  const forged = new URL(genuine);
  forged.searchParams.set('as', 'mallory@acme');
  const tampered = new URL(genuine);
  // A signature one character off (its first: the last characters of a base64url digest carry fewer bits, and
  // overwriting them with 'AA' left one genuine signature in a thousand as it was).
  const sig = genuine.searchParams.get('sig')!;
  tampered.searchParams.set('sig', `${sig[0] === 'A' ? 'B' : 'A'}${sig.slice(1)}`);
  const otherThread = new URL(genuine);
  otherThread.pathname = `/inbox/${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}`;
  for (const url of [forged, tampered, otherThread]) {
    const response = await fetch(url);
    expect(response.status).toBe(403);
    expect(await response.text()).not.toContain('Paging changed');
  }
  const bare = await fetch(`${relay.url}/inbox/${threadId}`);
  expect(bare.status).toBe(200);
  expect(await bare.text()).not.toContain('Paging changed');
  expect((await fetch(`${relay.url}/inbox/not-a-thread`)).status).toBe(404);
});

test("reading the page marks nothing as read (Bob's reply stays unread for Alice)", async () => {
  const page = await fetch(local(aliceUrl));
  expect(await page.text()).toContain('Cursor, please');
  const list = await relay.rpc(alice, 'tasks/list', { filter: { role: 'sender' } });
  const item = list.body.result.items.find((t: { thread_id: string }) => t.thread_id === threadId);
  expect(item.unread_messages).toBe(1);
});
