// The web sign-in links and sessions port's contract (relay-core/store/web-sessions.ts WebSessionRecords): what
// service/web-sessions.ts relies on, above all that a link is used once. Run against the in-memory fake (test/unit/)
// and WebSessionStore on the real server (test/integration/).
import { randomUUID } from 'node:crypto';
import type { SignInLinkDoc, WebSessionDoc, WebSessionRecords } from '../../relay-core/store/web-sessions';

const minute = (n: number) => new Date(Date.UTC(2026, 2, 2, 10, n));

const link = (over: Partial<SignInLinkDoc> = {}): SignInLinkDoc => ({
  _id: `link-${randomUUID()}`,
  handle: 'rita@acme',
  issued_via: 'api',
  created_at: minute(0),
  expires_at: minute(10),
  used_at: null,
  ...over,
});

const session = (handle: string, n: number): WebSessionDoc => ({
  _id: `session-${randomUUID()}`,
  public_id: randomUUID().slice(0, 12),
  handle,
  csrf: 'csrf',
  created_at: minute(n),
  expires_at: minute(n + 60),
  revoked_at: null,
  user_agent: `browser ${n}`,
});

export function webSessionRecordsContract(name: string, subject: () => WebSessionRecords): void {
  describe(`web sessions port contract: ${name}`, () => {
    test('a link is usable until it expires; used once, of several uses at once exactly one gets it', async () => {
      const records = subject();
      const doc = link();
      await records.insertLink(doc);
      expect(await records.usableLink(doc._id, minute(9))).toEqual(doc);
      expect(await records.usableLink(doc._id, minute(10))).toBeNull();
      const uses = await Promise.all([1, 2, 3, 4].map(() => records.useLink(doc._id, minute(5))));
      expect(uses.filter((u) => u !== null)).toEqual([{ ...doc, used_at: minute(5) }]);
      expect(await records.usableLink(doc._id, minute(5))).toBeNull();
      expect(await records.useLink('link-unknown', minute(5))).toBeNull();
    });

    test('an expired link is not used', async () => {
      const records = subject();
      const doc = link({ expires_at: minute(1) });
      await records.insertLink(doc);
      expect(await records.useLink(doc._id, minute(1))).toBeNull();
    });

    test('a session reads back; ending it records when, once', async () => {
      const records = subject();
      const doc = session(`s${randomUUID().slice(0, 6)}@acme`, 0);
      await records.insertSession(doc);
      expect(await records.session(doc._id)).toEqual(doc);
      await records.endSession(doc._id, minute(3));
      await records.endSession(doc._id, minute(4));
      expect(await records.session(doc._id)).toEqual({ ...doc, revoked_at: minute(3) });
      expect(await records.session('session-unknown')).toBeNull();
    });

    test("a teammate's sessions, newest first, up to the limit, and only theirs revoked by public id", async () => {
      const records = subject();
      const handle = `s${randomUUID().slice(0, 6)}@acme`;
      const [older, newer] = [session(handle, 1), session(handle, 2)];
      await records.insertSession(older);
      await records.insertSession(newer);
      await records.insertSession(session(`other-${handle}`, 3));
      expect(await records.sessionsOf(handle, 10)).toEqual(
        [newer, older].map(({ public_id, created_at, expires_at, revoked_at, user_agent }) => ({
          public_id,
          created_at,
          expires_at,
          revoked_at,
          user_agent,
        })),
      );
      expect(await records.sessionsOf(handle, 1)).toHaveLength(1);
      expect(await records.revoke(`other-${handle}`, older.public_id, minute(5))).toBe(false);
      expect(await records.revoke(handle, older.public_id, minute(5))).toBe(true);
      expect(await records.revoke(handle, older.public_id, minute(6))).toBe(false);
      expect((await records.session(older._id))!.revoked_at).toEqual(minute(5));
    });
  });
}
