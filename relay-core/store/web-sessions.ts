// The web inbox's sign-in links and sessions (service/web-sessions.ts), each stored under the keyed hash of its secret.
import type { Collection, Db } from 'mongodb';

/** A one-time sign-in link: redeemed by one conditional update that sets `used_at`. */
export interface SignInLinkDoc {
  /** HMAC-SHA-256 of the link's token under the key pepper. */
  _id: string;
  handle: string;
  /** Where it was asked for: the CLI / REST (`api`), or Slack. */
  issued_via: 'api' | 'slack';
  created_at: Date;
  expires_at: Date;
  used_at: Date | null;
}

/** A signed-in browser: the cookie holds the session id, the store its hash. */
export interface WebSessionDoc {
  /** HMAC-SHA-256 of the session id under the key pepper. */
  _id: string;
  /** What the sessions page names and revokes it by (the id itself is never shown). */
  public_id: string;
  handle: string;
  /** The synchronizer token every form of this session carries. */
  csrf: string;
  created_at: Date;
  expires_at: Date;
  revoked_at: Date | null;
  /** The browser that signed in, as it described itself (shortened), for the sessions page. */
  user_agent: string;
}

export class WebSessionStore {
  readonly signIns: Collection<SignInLinkDoc>;
  readonly sessions: Collection<WebSessionDoc>;

  constructor(db: Db) {
    this.signIns = db.collection<SignInLinkDoc>('web_sign_ins');
    this.sessions = db.collection<WebSessionDoc>('web_sessions');
  }

  /** The indexes: a teammate's sessions (the sessions page), and each collection by age (the cleanup). */
  async ensureIndexes(): Promise<void> {
    await this.sessions.createIndex({ handle: 1, created_at: -1 }, { name: 'by_handle' });
    await this.sessions.createIndex({ public_id: 1 }, { name: 'by_public_id', unique: true });
    await this.sessions.createIndex({ expires_at: 1 }, { name: 'age' });
    await this.signIns.createIndex({ expires_at: 1 }, { name: 'age' });
  }
}
