// Web inbox sign-in (relay-core/service/web-sessions.ts) on the in-memory links and sessions: a one-time link for an
// active teammate signs in once within ten minutes and starts a session (replacing the browser's old one); a session
// ends when signed out, revoked from the sessions page, expired or its teammate disabled; a used, expired or forged
// link is refused in the same words. In a browser: test/integration/web-inbox*.test.ts.
import type { AgentDoc } from '../../relay-core/domain/documents';
import { SIGN_IN_LINK_TTL_MS, WebSessions } from '../../relay-core/service/web-sessions';
import { InMemoryWebSessions } from '../fakes/in-memory-web-sessions';
import { agent, NOW } from '../fakes/use-case-ports';
import { refusal } from '../helpers/refusal';

const rita = agent('rita@acme');
const gone = { ...agent('gone@acme'), status: 'disabled' as const };
const DAY = 24 * 3_600_000;
const REFUSED =
  'This sign-in link is used, expired or not one this relay issued. Ask for a new one: `handoff-relay open`, or "Open web inbox" in your Slack DM or App Home.';

function setup() {
  const team = new Map<string, AgentDoc>([
    [rita.handle, rita],
    [gone.handle, gone],
  ]);
  const clock = { at: NOW.getTime(), now: () => new Date(clock.at) };
  const sessions = new WebSessions({
    store: new InMemoryWebSessions(),
    teammates: { get: async (handle) => team.get(handle) ?? null },
    pepper: 'fast-tier-pepper',
    publicUrl: 'https://relay.test',
    clock,
    sessionTtlMs: DAY,
  });
  const tokenOf = (url: string) => new URL(url).searchParams.get('token')!;
  const signIn = async (userAgent = 'Firefox', replacing?: string) => {
    const { url } = await sessions.issueLink(rita.handle, 'api');
    return sessions.redeem(tokenOf(url), { userAgent, ...(replacing ? { replacing } : {}) });
  };
  return { sessions, clock, team, tokenOf, signIn };
}

test('a link for an active teammate names them until used; used, it starts a session its cookie opens', async () => {
  const { sessions, tokenOf } = setup();
  const link = await sessions.issueLink(rita.handle, 'slack');
  expect(link.url).toMatch(/^https:\/\/relay\.test\/inbox\/sign-in\?token=hrw_[A-Za-z0-9_-]{43}$/);
  expect(link.expires_at).toBe(new Date(NOW.getTime() + SIGN_IN_LINK_TTL_MS).toISOString());
  expect(await sessions.peekLink(tokenOf(link.url))).toBe(rita.handle);
  const signedIn = await sessions.redeem(tokenOf(link.url), { userAgent: 'Firefox' });
  expect(signedIn.expires_at).toEqual(new Date(NOW.getTime() + DAY));
  expect(await sessions.session(signedIn.sessionId)).toEqual({
    agent: rita,
    publicId: signedIn.session.publicId,
    csrf: signedIn.session.csrf,
  });
});

test('a link signs in once: used again, or peeked after, it is refused in the same words', async () => {
  const { sessions, tokenOf } = setup();
  const token = tokenOf((await sessions.issueLink(rita.handle, 'api')).url);
  await sessions.redeem(token, { userAgent: 'Firefox' });
  expect(await refusal(sessions.redeem(token, { userAgent: 'Chrome' }))).toMatchObject({
    code: 'unauthenticated',
    message: REFUSED,
  });
  expect((await refusal(sessions.peekLink(token))).message).toBe(REFUSED);
  expect(await sessions.list(rita.handle)).toHaveLength(1);
});

test('an expired or forged link is refused; no session starts', async () => {
  const { sessions, tokenOf, clock } = setup();
  const token = tokenOf((await sessions.issueLink(rita.handle, 'api')).url);
  clock.at += SIGN_IN_LINK_TTL_MS;
  expect((await refusal(sessions.redeem(token, { userAgent: 'Firefox' }))).message).toBe(REFUSED);
  for (const forged of [`hrw_${'A'.repeat(43)}`, 'not-a-token'])
    expect((await refusal(sessions.redeem(forged, { userAgent: 'Firefox' }))).message).toBe(REFUSED);
  expect(await sessions.list(rita.handle)).toEqual([]);
});

test('no link for a teammate who is not active, nor a session', async () => {
  const { sessions } = setup();
  expect(await refusal(sessions.issueLink(gone.handle, 'api'))).toMatchObject({
    code: 'forbidden',
    message: 'gone@acme is not an active teammate: no sign-in link',
  });
  expect(await refusal(sessions.issueLink('ghost@acme', 'api'))).toMatchObject({ code: 'forbidden' });
  expect(await refusal(sessions.start(gone.handle, { userAgent: 'Firefox' }))).toMatchObject({
    message: 'gone@acme is not an active teammate any more',
  });
});

test('signing in again from the same browser replaces its session; signing out ends it', async () => {
  const { sessions, signIn } = setup();
  const first = await signIn('Firefox');
  const second = await signIn('Firefox', first.sessionId);
  expect(second.sessionId).not.toBe(first.sessionId);
  expect(await sessions.session(first.sessionId)).toBeNull();
  await sessions.signOut(second.sessionId);
  await sessions.signOut(second.sessionId);
  expect(await sessions.session(second.sessionId)).toBeNull();
});

test('a session ends when it expires or its teammate is disabled', async () => {
  const { sessions, signIn, clock, team } = setup();
  const { sessionId } = await signIn();
  clock.at += DAY - 1;
  expect(await sessions.session(sessionId)).not.toBeNull();
  team.set(rita.handle, { ...rita, status: 'disabled' });
  expect(await sessions.session(sessionId)).toBeNull();
  team.set(rita.handle, rita);
  clock.at += 1;
  expect(await sessions.session(sessionId)).toBeNull();
  expect(await sessions.session('not-a-session-id')).toBeNull();
});

test('the sessions page lists them newest first (the browser as it named itself); one is revoked by its public id', async () => {
  const { sessions, signIn, clock } = setup();
  const laptop = await signIn('Firefox on a laptop');
  clock.at += 60_000;
  const phone = await signIn('Safari on a phone');
  expect((await sessions.list(rita.handle)).map((s) => [s.user_agent, s.revoked_at])).toEqual([
    ['Safari on a phone', null],
    ['Firefox on a laptop', null],
  ]);
  expect(await sessions.revoke('gone@acme', laptop.session.publicId)).toBe(false);
  expect(await sessions.revoke(rita.handle, laptop.session.publicId)).toBe(true);
  expect(await sessions.revoke(rita.handle, laptop.session.publicId)).toBe(false);
  expect(await sessions.session(laptop.sessionId)).toBeNull();
  expect(await sessions.session(phone.sessionId)).not.toBeNull();
  expect((await sessions.list(rita.handle))[1]!.revoked_at).toEqual(new Date(clock.at));
});
