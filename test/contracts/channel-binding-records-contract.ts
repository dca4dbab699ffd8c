// The channel bindings port's contract (relay-core/store/channel-binding-records.ts): what service/channel-bindings.ts
// relies on. Run against the in-memory fake (test/unit/) and MongoChannelBindings on the real server (test/integration/).
import type { ChannelBindingDoc } from '../../relay-core/domain/documents';
import type { ChannelBindingRecords } from '../../relay-core/store/channel-binding-records';

const AT = new Date('2026-03-02T10:00:00Z');
const binding = (target: string, channel: string, by = 'lead@acme'): ChannelBindingDoc => ({
  _id: target,
  target,
  channel,
  bound_by: by,
  at: AT,
});

/** `subject` answers a port with no bindings. */
export function channelBindingRecordsContract(name: string, subject: () => Promise<ChannelBindingRecords>): void {
  describe(`channel bindings port contract: ${name}`, () => {
    test('a stored binding reads back; a target never bound reads as null', async () => {
      const bindings = await subject();
      await bindings.put(binding('role:frontend', 'C0FRONT'));
      expect(await bindings.get('role:frontend')).toEqual(binding('role:frontend', 'C0FRONT'));
      expect(await bindings.get('role:backend')).toBeNull();
    });

    test('a second put of the same target replaces the first: one binding, the newer channel', async () => {
      const bindings = await subject();
      await bindings.put(binding('role:frontend', 'C0FRONT'));
      await bindings.put(binding('role:frontend', 'G0PRIVATE', 'ops@acme'));
      expect(await bindings.get('role:frontend')).toEqual(binding('role:frontend', 'G0PRIVATE', 'ops@acme'));
      expect(await bindings.list(10)).toHaveLength(1);
    });

    test('remove answers whether there was a binding, and a removed one is gone', async () => {
      const bindings = await subject();
      await bindings.put(binding('skill:react', 'C0REACT'));
      expect(await bindings.remove('skill:react')).toBe(true);
      expect(await bindings.get('skill:react')).toBeNull();
      expect(await bindings.remove('skill:react')).toBe(false);
    });

    test('list answers the bindings by target, up to the limit', async () => {
      const bindings = await subject();
      for (const target of ['skill:react', 'owner:apps/web', 'role:frontend'])
        await bindings.put(binding(target, 'C0SHARED'));
      expect((await bindings.list(10)).map((b) => b._id)).toEqual(['owner:apps/web', 'role:frontend', 'skill:react']);
      expect((await bindings.list(2)).map((b) => b._id)).toEqual(['owner:apps/web', 'role:frontend']);
    });
  });
}
