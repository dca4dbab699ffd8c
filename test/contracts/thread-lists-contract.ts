// The list pages port's contract (relay-core/store/thread-lists.ts ThreadLists): what thread lists, the web inbox and
// A2A ListTasks rely on. Run against the in-memory fake (test/unit/) and IndexedThreadLists on the real server
// (test/integration/). Each test has teammates of its own, so the suites may share one database.
import { randomUUID } from 'node:crypto';
import type { ThreadDoc } from '../../relay-core/domain/documents';
import type { ThreadStatus } from '../../relay-core/domain/schemas';
import { withClaimable, type ThreadLists } from '../../relay-core/store/thread-lists';
import { threadDocAt } from '../helpers/thread-docs';

export interface ThreadListsUnderTest {
  lists: ThreadLists;
  /** Stores a thread as the relay does. */
  insert(doc: ThreadDoc): Promise<void>;
}

const minute = (n: number) => new Date(Date.UTC(2026, 2, 2, 10, n));

export function threadListsContract(name: string, subject: () => ThreadListsUnderTest): void {
  describe(`list pages port contract: ${name}`, () => {
    /** Fresh handles, and threads between them stored at minute `n`. */
    function team() {
      const tag = randomUUID().slice(0, 8);
      const { lists, insert } = subject();
      const h = (who: string) => `${who}-${tag}@acme`;
      const thread = async (
        from: string,
        to: string,
        n: number,
        status: ThreadStatus = 'pending',
        over: Partial<ThreadDoc> = {},
      ) => {
        const doc = withClaimable({
          ...threadDocAt(h(from), to.startsWith('role:') ? to : h(to), status, minute(n)),
          ...over,
        });
        await insert(doc);
        return doc._id;
      };
      return { lists, h, thread };
    }

    /** Every page of a list, walked through its cursors. */
    async function walk(
      page: (cursor?: string) => Promise<{ threads: { _id: string }[]; next_cursor: string | null }>,
    ) {
      const ids: string[] = [];
      let cursor: string | undefined;
      for (let i = 0; i < 20; i += 1) {
        const got = await page(cursor);
        ids.push(...got.threads.map((t) => t._id));
        if (!got.next_cursor) return ids;
        cursor = got.next_cursor;
      }
      throw new Error('the cursors never ended');
    }

    test('a received list is newest first, and its cursors walk every thread once', async () => {
      const { lists, h, thread } = team();
      const ids = [];
      for (let n = 0; n < 5; n += 1) ids.push(await thread('sam', 'rita', n));
      await thread('sam', 'otto', 9);
      const first = await lists.page({ party: 'to', handle: h('rita'), limit: 2 });
      expect(first.threads.map((t) => t._id)).toEqual([ids[4], ids[3]]);
      expect(await walk((cursor) => lists.page({ party: 'to', handle: h('rita'), limit: 2, cursor }))).toEqual(
        [...ids].reverse(),
      );
    });

    test('oldest first walks the same list the other way', async () => {
      const { lists, h, thread } = team();
      const ids = [];
      for (let n = 0; n < 3; n += 1) ids.push(await thread('sam', 'rita', n));
      expect(
        await walk((cursor) => lists.page({ party: 'from', handle: h('sam'), limit: 2, cursor, oldestFirst: true })),
      ).toEqual(ids);
    });

    test('narrowed by status, since, intent and the teammate on the other side', async () => {
      const { lists, h, thread } = team();
      const accepted = await thread('sam', 'rita', 1, 'accepted');
      const fromOtto = await thread('otto', 'rita', 2);
      const question = await thread('sam', 'rita', 3, 'pending', { intent: 'ask_question', question: 'Why?' });
      const ids = async (q: object) =>
        (await lists.page({ party: 'to', handle: h('rita'), limit: 10, ...q })).threads.map((t) => t._id);
      expect(await ids({ statuses: ['accepted'] })).toEqual([accepted]);
      expect(await ids({ since: minute(2) })).toEqual([question, fromOtto]);
      expect(await ids({ intent: 'ask_question' })).toEqual([question]);
      expect(await ids({ other: h('otto') })).toEqual([fromOtto]);
      expect(await ids({ other: h('sam'), statuses: ['pending'] })).toEqual([question]);
    });

    test("an unclaimed handoff is in each candidate's received list, once, and not in anyone else's", async () => {
      const { lists, h, thread } = team();
      const offered = await thread('sam', 'role:frontend', 1, 'unclaimed', {
        candidates: [h('rita'), h('fay')],
      });
      const mine = await thread('sam', 'rita', 2);
      const received = async (who: string, q: object = {}) =>
        (await lists.page({ party: 'to', handle: h(who), limit: 10, ...q })).threads.map((t) => t._id);
      expect(await received('rita')).toEqual([mine, offered]);
      expect(await received('fay')).toEqual([offered]);
      expect(await received('fay', { statuses: ['pending'] })).toEqual([]);
      expect(await received('otto')).toEqual([]);
    });

    test('a cursor this relay did not issue is invalid_params', async () => {
      const { lists, h } = team();
      await expect(lists.page({ party: 'to', handle: h('rita'), limit: 2, cursor: 'forged' })).rejects.toMatchObject({
        code: 'invalid_params',
      });
    });

    test('a count leaves out creates held from their recipient, and stops at its limit', async () => {
      const { lists, h, thread } = team();
      for (let n = 0; n < 3; n += 1) await thread('sam', 'rita', n);
      await thread('sam', 'rita', 5, 'awaiting_approval', { hidden_from_recipient: true });
      await thread('sam', 'rita', 6, 'accepted');
      expect(await lists.count({ party: 'to', handle: h('rita'), statuses: ['pending'] }, 99)).toBe(3);
      expect(await lists.count({ party: 'to', handle: h('rita') }, 99)).toBe(4);
      expect(await lists.count({ party: 'to', handle: h('rita') }, 2)).toBe(2);
      expect(await lists.count({ party: 'from', handle: h('sam') }, 99)).toBe(5);
    });

    test('the visible tasks are sent, received and offered ones, newest first, with their total', async () => {
      const { lists, h, thread } = team();
      const sent = await thread('rita', 'sam', 1);
      const received = await thread('sam', 'rita', 2);
      const offered = await thread('otto', 'role:frontend', 3, 'unclaimed', { candidates: [h('rita')] });
      await thread('sam', 'rita', 4, 'awaiting_approval', { hidden_from_recipient: true });
      await thread('sam', 'otto', 5);
      const first = await lists.visiblePage({ handle: h('rita'), limit: 2 });
      expect(first.threads.map((t) => t._id)).toEqual([offered, received]);
      expect(first.total).toBe(3);
      expect(await walk((cursor) => lists.visiblePage({ handle: h('rita'), limit: 2, cursor }))).toEqual([
        offered,
        received,
        sent,
      ]);
      const narrowed = await lists.visiblePage({ handle: h('rita'), limit: 10, statuses: ['pending'], threadId: sent });
      expect(narrowed).toMatchObject({ threads: [expect.objectContaining({ _id: sent })], total: 1 });
    });
  });
}
