// The web sign-in links and sessions port (relay-core/store/web-sessions.ts WebSessionRecords) in memory, for the fast
// test of service/web-sessions.ts: a link is used by one check-and-set with nothing awaited in between
// (test/contracts/web-session-records-contract.ts, run against this and against WebSessionStore).
import type {
  SessionListing,
  SignInLinkDoc,
  WebSessionDoc,
  WebSessionRecords,
} from '../../relay-core/store/web-sessions';

export class InMemoryWebSessions implements WebSessionRecords {
  private readonly links = new Map<string, SignInLinkDoc>();
  private readonly sessions = new Map<string, WebSessionDoc>();

  async insertLink(link: SignInLinkDoc): Promise<void> {
    this.links.set(link._id, structuredClone(link));
  }

  async usableLink(hash: string, now: Date): Promise<SignInLinkDoc | null> {
    return this.usable(hash, now);
  }

  async useLink(hash: string, now: Date): Promise<SignInLinkDoc | null> {
    // Checked and set with nothing awaited in between, as the conditional update is one step.
    const link = this.usable(hash, now);
    if (!link) return null;
    const used = { ...link, used_at: now };
    this.links.set(hash, structuredClone(used));
    return used;
  }

  async insertSession(session: WebSessionDoc): Promise<void> {
    this.sessions.set(session._id, structuredClone(session));
  }

  async session(hash: string): Promise<WebSessionDoc | null> {
    const session = this.sessions.get(hash);
    return session ? structuredClone(session) : null;
  }

  async endSession(hash: string, at: Date): Promise<void> {
    const session = this.sessions.get(hash);
    if (session && session.revoked_at === null) session.revoked_at = at;
  }

  async sessionsOf(handle: string, limit: number): Promise<SessionListing[]> {
    return [...this.sessions.values()]
      .filter((s) => s.handle === handle)
      .sort((a, b) => b.created_at.getTime() - a.created_at.getTime())
      .slice(0, limit)
      .map(({ public_id, created_at, expires_at, revoked_at, user_agent }) =>
        structuredClone({ public_id, created_at, expires_at, revoked_at, user_agent }),
      );
  }

  async revoke(handle: string, publicId: string, at: Date): Promise<boolean> {
    const session = [...this.sessions.values()].find(
      (s) => s.public_id === publicId && s.handle === handle && s.revoked_at === null,
    );
    if (!session) return false;
    session.revoked_at = at;
    return true;
  }

  private usable(hash: string, now: Date): SignInLinkDoc | null {
    const link = this.links.get(hash);
    return link && link.used_at === null && link.expires_at > now ? structuredClone(link) : null;
  }
}
