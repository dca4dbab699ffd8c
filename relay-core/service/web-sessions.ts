// Web inbox sign-in: a one-time link (a `hrw_` token, ten minutes, single use) becomes a session whose id lives in an
// HttpOnly cookie. Both are stored only as keyed hashes; redeeming a link is one conditional update, so a link used
// twice at once signs in once.
import { randomBytes } from 'node:crypto';
import type { Clock } from '../domain/clock';
import type { AgentDoc } from '../domain/documents';
import { RelayError } from '../domain/errors';
import { hashApiKey } from '../ops/api-keys';
import type { SessionListing, WebSessionDoc, WebSessionRecords } from '../store/web-sessions';
import type { Teammates } from './teammates';

/** How long a sign-in link can be used. */
export const SIGN_IN_LINK_TTL_MS = 10 * 60_000;
/** A sign-in token as this relay issues it; anything else is refused before any lookup. */
export const SIGN_IN_TOKEN_PATTERN = /^hrw_[A-Za-z0-9_-]{43}$/;
const SESSION_ID_PATTERN = /^[A-Za-z0-9_-]{43}$/;
/** Sessions a teammate's sessions page lists at most (newest first). */
const SESSIONS_LISTED = 50;

export interface WebSessionsDeps {
  store: WebSessionRecords;
  teammates: Pick<Teammates, 'get'>;
  /** The key pepper: tokens and session ids are stored as HMACs under it. */
  pepper: string;
  publicUrl: string;
  clock: Clock;
  /** How long a session lasts from sign-in (RELAY_WEB_SESSION_HOURS). */
  sessionTtlMs: number;
}

export interface SignInLink {
  url: string;
  expires_at: string;
}

/** A signed-in browser: who, and the synchronizer token its forms carry. */
export interface WebSession {
  agent: AgentDoc;
  publicId: string;
  csrf: string;
}

export type { SessionListing } from '../store/web-sessions';

const usedOrExpired = () =>
  new RelayError(
    'unauthenticated',
    'This sign-in link is used, expired or not one this relay issued. Ask for a new one: `handoff-relay open`, or "Open web inbox" in your Slack DM or App Home.',
  );

export class WebSessions {
  constructor(private readonly deps: WebSessionsDeps) {}

  private hash(secret: string): string {
    return hashApiKey(secret, this.deps.pepper);
  }

  /** A sign-in link for `handle` (an active teammate); its token is in this answer only. */
  async issueLink(handle: string, via: 'api' | 'slack'): Promise<SignInLink> {
    const agent = await this.deps.teammates.get(handle);
    if (!agent || agent.status !== 'active')
      throw new RelayError('forbidden', `${handle} is not an active teammate: no sign-in link`);
    const token = `hrw_${randomBytes(32).toString('base64url')}`;
    const now = this.deps.clock.now();
    const expires = new Date(now.getTime() + SIGN_IN_LINK_TTL_MS);
    await this.deps.store.insertLink({
      _id: this.hash(token),
      handle,
      issued_via: via,
      created_at: now,
      expires_at: expires,
      used_at: null,
    });
    return { url: `${this.deps.publicUrl}/inbox/sign-in?token=${token}`, expires_at: expires.toISOString() };
  }

  /** Who an unused, unexpired link signs in (without using it: the page that asks to confirm). */
  async peekLink(token: string): Promise<string> {
    if (!SIGN_IN_TOKEN_PATTERN.test(token)) throw usedOrExpired();
    const doc = await this.deps.store.usableLink(this.hash(token), this.deps.clock.now());
    if (!doc) throw usedOrExpired();
    return doc.handle;
  }

  /**
   * Uses the link (once: a conditional update) and starts a new session; `replacing` (the browser's current session,
   * if any) is revoked, so a sign-in always gets a fresh session id. Answers the new session id for the cookie.
   */
  async redeem(
    token: string,
    browser: { userAgent: string; replacing?: string },
  ): Promise<{ sessionId: string; session: WebSession; expires_at: Date }> {
    if (!SIGN_IN_TOKEN_PATTERN.test(token)) throw usedOrExpired();
    const now = this.deps.clock.now();
    const link = await this.deps.store.useLink(this.hash(token), now);
    if (!link) throw usedOrExpired();
    return this.start(link.handle, browser);
  }

  /**
   * A new session for an active teammate (a used sign-in link, or Sign in with Slack); `replacing` (the browser's
   * current session, if any) is revoked, so a sign-in always gets a fresh session id.
   */
  async start(
    handle: string,
    browser: { userAgent: string; replacing?: string },
  ): Promise<{ sessionId: string; session: WebSession; expires_at: Date }> {
    const now = this.deps.clock.now();
    const agent = await this.deps.teammates.get(handle);
    if (!agent || agent.status !== 'active')
      throw new RelayError('forbidden', `${handle} is not an active teammate any more`);
    if (browser.replacing) await this.signOut(browser.replacing);
    const sessionId = randomBytes(32).toString('base64url');
    const doc: WebSessionDoc = {
      _id: this.hash(sessionId),
      public_id: randomBytes(9).toString('base64url'),
      handle: agent.handle,
      csrf: randomBytes(32).toString('base64url'),
      created_at: now,
      expires_at: new Date(now.getTime() + this.deps.sessionTtlMs),
      revoked_at: null,
      user_agent: browser.userAgent.slice(0, 160),
    };
    await this.deps.store.insertSession(doc);
    return { sessionId, session: { agent, publicId: doc.public_id, csrf: doc.csrf }, expires_at: doc.expires_at };
  }

  /** The live session behind a cookie's id, or null (unknown, revoked, expired, or its teammate disabled). */
  async session(sessionId: string): Promise<WebSession | null> {
    if (!SESSION_ID_PATTERN.test(sessionId)) return null;
    const doc = await this.deps.store.session(this.hash(sessionId));
    if (!doc || doc.revoked_at || doc.expires_at <= this.deps.clock.now()) return null;
    const agent = await this.deps.teammates.get(doc.handle);
    if (!agent || agent.status !== 'active') return null;
    return { agent, publicId: doc.public_id, csrf: doc.csrf };
  }

  /** Ends the session behind a cookie's id (signing out); nothing happens for one already ended. */
  async signOut(sessionId: string): Promise<void> {
    if (!SESSION_ID_PATTERN.test(sessionId)) return;
    await this.deps.store.endSession(this.hash(sessionId), this.deps.clock.now());
  }

  /** The teammate's sessions, newest first. */
  async list(handle: string): Promise<SessionListing[]> {
    return this.deps.store.sessionsOf(handle, SESSIONS_LISTED);
  }

  /** Revokes one of the teammate's own sessions; false when they have no such session still open. */
  async revoke(handle: string, publicId: string): Promise<boolean> {
    return this.deps.store.revoke(handle, publicId, this.deps.clock.now());
  }
}
