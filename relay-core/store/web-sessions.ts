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

/** What the sessions page shows of a session. */
export type SessionListing = Pick<
  WebSessionDoc,
  'public_id' | 'created_at' | 'expires_at' | 'revoked_at' | 'user_agent'
>;

/**
 * Port used by service/web-sessions.ts: links and sessions by the keyed hash of their secret (adapter:
 * WebSessionStore; in memory: test/fakes/in-memory-web-sessions.ts; both pass test/contracts/web-session-records-contract.ts).
 */
export interface WebSessionRecords {
  insertLink(link: SignInLinkDoc): Promise<void>;
  /** The link if it is unused and unexpired at `now`. */
  usableLink(hash: string, now: Date): Promise<SignInLinkDoc | null>;
  /** Uses the link if it is unused and unexpired at `now` (one conditional update): the link as used, or null. */
  useLink(hash: string, now: Date): Promise<SignInLinkDoc | null>;
  insertSession(session: WebSessionDoc): Promise<void>;
  session(hash: string): Promise<WebSessionDoc | null>;
  /** Ends the session if it is open. */
  endSession(hash: string, at: Date): Promise<void>;
  /** The teammate's sessions, newest first, at most `limit`. */
  sessionsOf(handle: string, limit: number): Promise<SessionListing[]>;
  /** Revokes the teammate's open session with this public id; false when there is none. */
  revoke(handle: string, publicId: string, at: Date): Promise<boolean>;
}

export class WebSessionStore implements WebSessionRecords {
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

  async insertLink(link: SignInLinkDoc): Promise<void> {
    await this.signIns.insertOne(link);
  }

  usableLink(hash: string, now: Date): Promise<SignInLinkDoc | null> {
    return this.signIns.findOne({ _id: hash, used_at: null, expires_at: { $gt: now } });
  }

  useLink(hash: string, now: Date): Promise<SignInLinkDoc | null> {
    return this.signIns.findOneAndUpdate(
      { _id: hash, used_at: null, expires_at: { $gt: now } },
      { $set: { used_at: now } },
      { returnDocument: 'after' },
    );
  }

  async insertSession(session: WebSessionDoc): Promise<void> {
    await this.sessions.insertOne(session);
  }

  session(hash: string): Promise<WebSessionDoc | null> {
    return this.sessions.findOne({ _id: hash });
  }

  async endSession(hash: string, at: Date): Promise<void> {
    await this.sessions.updateOne({ _id: hash, revoked_at: null }, { $set: { revoked_at: at } });
  }

  async sessionsOf(handle: string, limit: number): Promise<SessionListing[]> {
    return this.sessions
      .find(
        { handle },
        { projection: { _id: 0, public_id: 1, created_at: 1, expires_at: 1, revoked_at: 1, user_agent: 1 } },
      )
      .sort({ created_at: -1 })
      .limit(limit)
      .toArray() as Promise<SessionListing[]>;
  }

  async revoke(handle: string, publicId: string, at: Date): Promise<boolean> {
    const result = await this.sessions.updateOne(
      { public_id: publicId, handle, revoked_at: null },
      { $set: { revoked_at: at } },
    );
    return result.modifiedCount === 1;
  }
}
