// The push configs port's contract (relay-core/store/push-configs.ts PushConfigRecords): what service/push-configs.ts
// and the A2A push methods rely on. Run against the in-memory fake (test/unit/) and PushConfigStore on the real
// server (test/integration/).
import { randomUUID } from 'node:crypto';
import type { PushConfigEntry, PushConfigRecords } from '../../relay-core/store/push-configs';

const AT = new Date('2026-03-02T10:00:00Z');
const config = (id: string, owner = 'rita@acme'): PushConfigEntry => ({
  id,
  owner,
  url: `https://agent.test/hooks/${id}`,
  secret: `whsec_${id}`,
  created_at: AT,
});

export function pushConfigRecordsContract(name: string, subject: () => PushConfigRecords): void {
  describe(`push configs port contract: ${name}`, () => {
    test('a task never changed has no configs', async () => {
      expect(await subject().of(randomUUID())).toEqual([]);
    });

    test('a change stores the configs it answers, which a read then returns', async () => {
      const configs = subject();
      const task = randomUUID();
      const after = await configs.change(task, (doc) => ({ ...doc, configs: [...doc.configs, config('a')] }));
      expect(after).toEqual([config('a')]);
      expect(await configs.of(task)).toEqual([config('a')]);
    });

    test('a change that answers undefined writes nothing and answers the configs as they are', async () => {
      const configs = subject();
      const task = randomUUID();
      await configs.change(task, (doc) => ({ ...doc, configs: [config('a')] }));
      expect(await configs.change(task, () => undefined)).toEqual([config('a')]);
      expect(await configs.of(task)).toEqual([config('a')]);
    });

    test('each change sees the one before it: concurrent changes lose none', async () => {
      const configs = subject();
      const task = randomUUID();
      await Promise.all(
        ['a', 'b', 'c', 'd'].map((id) =>
          configs.change(task, (doc) => ({ ...doc, configs: [...doc.configs, config(id, `${id}@acme`)] })),
        ),
      );
      expect((await configs.of(task)).map((c) => c.id).sort()).toEqual(['a', 'b', 'c', 'd']);
    });

    test("one task's configs are not another's", async () => {
      const configs = subject();
      const [one, two] = [randomUUID(), randomUUID()];
      await configs.change(one, (doc) => ({ ...doc, configs: [config('a')] }));
      expect(await configs.of(two)).toEqual([]);
    });
  });
}
