// Inbox links (relay-core/service/inbox-links.ts): the URL a DM or API answer carries to a thread's inbox page, signed
// for one participant so the page opens without a login; a link this relay did not sign, or signed for someone else,
// opens nothing; and the thread a pasted URL points at. The page behind it: test/integration/inbox-page.test.ts.
import { InboxLinks, parseInboxUrl } from '../../relay-core/service/inbox-links';

const PUBLIC = 'https://relay.test';
const THREAD = '0b8e8c1e-3f0a-4d7e-9b1a-2c3d4e5f6a7b';
const links = new InboxLinks(PUBLIC, 'fast-tier-secret');

/** The `sig` a link carries. */
const sigOf = (url: string) => new URL(url).searchParams.get('sig')!;

test('a link for a participant names the thread and the viewer, and its signature is accepted for them', () => {
  const url = links.url(THREAD, 'rita@acme');
  expect(url).toMatch(new RegExp(`^${PUBLIC}/inbox/${THREAD}\\?as=rita%40acme&sig=[A-Za-z0-9_-]+$`));
  expect(links.isGenuine(THREAD, 'rita@acme', sigOf(url))).toBe(true);
});

test('a link without a viewer is the bare page, which carries no signature', () => {
  expect(links.url(THREAD)).toBe(`${PUBLIC}/inbox/${THREAD}`);
});

test('a signature opens only the thread and viewer it was made for, and only on the relay that made it', () => {
  const sig = sigOf(links.url(THREAD, 'rita@acme'));
  const otherThread = '1b8e8c1e-3f0a-4d7e-9b1a-2c3d4e5f6a7b';
  expect(links.isGenuine(THREAD, 'sam@acme', sig)).toBe(false);
  expect(links.isGenuine(otherThread, 'rita@acme', sig)).toBe(false);
  expect(new InboxLinks(PUBLIC, 'another-relay-secret').isGenuine(THREAD, 'rita@acme', sig)).toBe(false);
  const tampered = `${sig.slice(0, -1)}${sig.endsWith('A') ? 'B' : 'A'}`;
  expect(links.isGenuine(THREAD, 'rita@acme', tampered)).toBe(false);
  expect(links.isGenuine(THREAD, 'rita@acme', '')).toBe(false);
});

test('a pasted link of this relay names its thread (lower-cased), viewer and signature', () => {
  const url = links.url(THREAD.toUpperCase(), 'rita@acme');
  expect(parseInboxUrl(PUBLIC, url)).toEqual({ threadId: THREAD, viewer: 'rita@acme', signature: sigOf(url) });
  expect(parseInboxUrl(PUBLIC, `${PUBLIC}/inbox/${THREAD}/`)).toEqual({
    threadId: THREAD,
    viewer: null,
    signature: null,
  });
});

test('a relay under a path prefix parses its own links', () => {
  const prefixed = new InboxLinks(`${PUBLIC}/relay`, 'fast-tier-secret');
  expect(parseInboxUrl(prefixed.publicUrl, prefixed.url(THREAD, 'rita@acme'))).toMatchObject({ threadId: THREAD });
  expect(parseInboxUrl(prefixed.publicUrl, `${PUBLIC}/inbox/${THREAD}`)).toBeNull();
});

test.each([
  ['another host', `https://evil.test/inbox/${THREAD}`],
  ['another path', `${PUBLIC}/threads/${THREAD}`],
  ['a malformed id', `${PUBLIC}/inbox/not-a-thread`],
  ['an id with more after it', `${PUBLIC}/inbox/${THREAD}/messages`],
  ['not a URL', 'inbox/' + THREAD],
])('a pasted URL on %s names no thread', (_what, url) => {
  expect(parseInboxUrl(PUBLIC, url)).toBeNull();
});
