// The invitations port's contract (relay-core/store/invite-records.ts): what service/invites.ts relies on, above all
// that each change of a redemption is conditional, so one taking wins. Run against the in-memory fake (test/unit/) and
// MongoInvites on the real server (test/integration/).
import { randomUUID } from 'node:crypto';
import type { InviteDoc } from '../../relay-core/domain/documents';
import type { InviteRecords } from '../../relay-core/store/invite-records';

export interface InviteRecordsUnderTest {
  invites: InviteRecords;
  /** Registers the teammate `handle` at `at`, as Teammates.register stores one. */
  register(handle: string, at: Date): Promise<void>;
}

const minute = (n: number) => new Date(Date.UTC(2026, 2, 2, 10, n));

function invitation(over: Partial<InviteDoc> = {}): InviteDoc {
  return {
    _id: `inv_${randomUUID().replace(/-/g, '').slice(0, 16)}`,
    token_hash: 'hash',
    status: 'open',
    preset: { team: 'acme' },
    created_by: 'admin',
    created_at: minute(0),
    expires_at: minute(60),
    ...over,
  };
}

export function inviteRecordsContract(name: string, subject: () => Promise<InviteRecordsUnderTest>): void {
  describe(`invitations port contract: ${name}`, () => {
    test('an invitation reads back; the newest come first, without their code hashes', async () => {
      const { invites } = await subject();
      const older = invitation({ created_at: minute(1) });
      const newer = invitation({ created_at: minute(2), note: 'for the new SRE' });
      await invites.insert(older);
      await invites.insert(newer);
      expect(await invites.get(older._id)).toEqual(older);
      expect(await invites.get('inv_missing')).toBeNull();
      const { token_hash: _, ...shown } = newer;
      expect(await invites.newest(1)).toEqual([shown]);
      expect((await invites.newest(10)).map((d) => d._id)).toEqual([newer._id, older._id]);
    });

    test('of several takings at once exactly one wins; an expired invitation is never taken', async () => {
      const { invites } = await subject();
      const doc = invitation();
      await invites.insert(doc);
      const won = await Promise.all(
        ['a', 'b', 'c', 'd'].map((h) => invites.take(doc._id, { handle: `${h}@acme`, at: minute(5) }, minute(7))),
      );
      expect(won.filter(Boolean)).toHaveLength(1);
      expect(await invites.get(doc._id)).toMatchObject({
        status: 'redeemed',
        redeemed_at: minute(5),
        redeeming_until: minute(7),
      });
      const expired = invitation({ expires_at: minute(5) });
      await invites.insert(expired);
      expect(await invites.take(expired._id, { handle: 'a@acme', at: minute(5) }, minute(7))).toBe(false);
      expect(await invites.get(expired._id)).toMatchObject({ status: 'open' });
    });

    test('a taking past its deadline is taken over; the one taken over can neither confirm nor give it back', async () => {
      const { invites } = await subject();
      const doc = invitation();
      await invites.insert(doc);
      const first = { handle: 'first@acme', at: minute(1) };
      const second = { handle: 'second@acme', at: minute(4) };
      expect(await invites.take(doc._id, first, minute(3))).toBe(true);
      expect(await invites.take(doc._id, { handle: 'early@acme', at: minute(2) }, minute(4))).toBe(false);
      expect(await invites.take(doc._id, second, minute(6))).toBe(true);
      expect(await invites.confirm(doc._id, first)).toBe(false);
      await invites.giveBack(doc._id, first);
      expect(await invites.get(doc._id)).toMatchObject({ status: 'redeemed', redeemed_by: 'second@acme' });
      expect(await invites.confirm(doc._id, second)).toBe(true);
      const confirmed = await invites.get(doc._id);
      expect(confirmed).toMatchObject({ status: 'redeemed', redeemed_by: 'second@acme' });
      expect(confirmed!.redeeming_until).toBeUndefined();
    });

    test('a taking given back leaves the invitation open as it was', async () => {
      const { invites } = await subject();
      const doc = invitation();
      await invites.insert(doc);
      const taking = { handle: 'a@acme', at: minute(1) };
      await invites.take(doc._id, taking, minute(3));
      await invites.giveBack(doc._id, taking);
      expect(await invites.get(doc._id)).toEqual(doc);
    });

    test('revoking: an open invitation is revoked; a confirmed one is not', async () => {
      const { invites } = await subject();
      const open = invitation();
      const used = invitation();
      await invites.insert(open);
      await invites.insert(used);
      await invites.take(used._id, { handle: 'a@acme', at: minute(1) }, minute(3));
      await invites.confirm(used._id, { handle: 'a@acme', at: minute(1) });
      await invites.revokeOpen(open._id, minute(2));
      await invites.revokeOpen(used._id, minute(2));
      expect(await invites.get(open._id)).toMatchObject({ status: 'revoked', revoked_at: minute(2) });
      expect(await invites.get(used._id)).toMatchObject({ status: 'redeemed', redeemed_by: 'a@acme' });
    });

    test('revoking a stale taking drops it; one taken over since it was read is left alone', async () => {
      const { invites } = await subject();
      const doc = invitation();
      await invites.insert(doc);
      await invites.take(doc._id, { handle: 'a@acme', at: minute(1) }, minute(3));
      const stale = (await invites.get(doc._id))!;
      await invites.take(doc._id, { handle: 'b@acme', at: minute(4) }, minute(6));
      await invites.revokeStale(stale, minute(4));
      expect(await invites.get(doc._id)).toMatchObject({ status: 'redeemed', redeemed_by: 'b@acme' });
      const current = (await invites.get(doc._id))!;
      await invites.revokeStale(current, minute(5));
      expect(await invites.get(doc._id)).toMatchObject({ status: 'redeemed' });
      await invites.revokeStale(current, minute(6));
      const revoked = await invites.get(doc._id);
      expect(revoked).toMatchObject({ status: 'revoked', revoked_at: minute(6) });
      expect(revoked!.redeemed_by).toBeUndefined();
      expect(revoked!.redeeming_until).toBeUndefined();
    });

    test('registeredSince: only a teammate registered at or after the instant', async () => {
      const { invites, register } = await subject();
      const handle = `r${randomUUID().slice(0, 8)}@acme`;
      await register(handle, minute(5));
      expect(await invites.registeredSince(handle, minute(5))).toBe(true);
      expect(await invites.registeredSince(handle, minute(6))).toBe(false);
      expect(await invites.registeredSince('nobody@acme', minute(0))).toBe(false);
    });
  });
}
