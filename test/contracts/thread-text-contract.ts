// The inbox search's contract (relay-core/store/thread-text.ts ThreadText): what service/thread-search.ts and its
// indexer (service/thread-search-index.ts) rely on. Run against the in-memory fake (test/unit/) and ThreadText on the
// real server's text index (test/integration/). Each test has teammates and words of its own, so the suites may share
// one database.
import { randomUUID } from 'node:crypto';
import type { ThreadDoc } from '../../relay-core/domain/documents';
import { searchTerms } from '../../relay-core/domain/search-terms';
import type { ThreadStatus } from '../../relay-core/domain/schemas';
import type { SearchQuery, ThreadText } from '../../relay-core/store/thread-text';
import { threadDocAt } from '../helpers/thread-docs';

export interface ThreadTextUnderTest {
  text: Pick<ThreadText, 'addThread' | 'addText' | 'readdress' | 'search'>;
  /** Stores a thread as the relay does. */
  insert(doc: ThreadDoc): Promise<void>;
  /** Gives a stored thread a new recipient (a claim). */
  readdressThread(id: string, to: string): Promise<void>;
}

const minute = (n: number) => new Date(Date.UTC(2026, 2, 2, 10, n));

export function threadTextContract(name: string, subject: () => ThreadTextUnderTest): void {
  describe(`inbox search contract: ${name}`, () => {
    /** Fresh handles, a word nobody else uses, and threads between them stored (with their words) at minute `n`. */
    function team() {
      const tag = randomUUID().slice(0, 8);
      const unique = `w${tag}`;
      const { text, insert, readdressThread } = subject();
      const h = (who: string) => `${who}-${tag}@acme`;
      const thread = async (
        from: string,
        to: string,
        n: number,
        summary: string,
        over: Partial<ThreadDoc> & { status?: ThreadStatus } = {},
      ) => {
        const doc = {
          ...threadDocAt(h(from), to.startsWith('role:') ? to : h(to), over.status ?? 'pending', minute(n)),
          summary,
          ...over,
        };
        await insert(doc);
        await text.addThread(doc);
        return doc._id;
      };
      const search = async (who: string, typed: string, over: Partial<SearchQuery> = {}) => {
        const page = await text.search({ handle: h(who), terms: searchTerms(typed), limit: 10, ...over });
        return page.threads.map((t) => t._id);
      };
      return { text, h, unique, thread, search, readdressThread };
    }

    test("finds the caller's threads that hold every word, newest first, whatever their case and accents", async () => {
      const { unique, thread, search } = team();
      const both = await thread('sam', 'rita', 1, `Deploy the Café migration ${unique}`);
      const deployOnly = await thread('sam', 'rita', 2, `deploy the docs ${unique}`);
      await thread('ana', 'bo', 3, `Deploy café ${unique}`);
      expect(await search('sam', `deploy cafe ${unique}`)).toEqual([both]);
      expect(await search('rita', `DEPLOY ${unique}`)).toEqual([deployOnly, both]);
      expect(await search('sam', `CAFÉ ${unique}`)).toEqual([both]);
      expect(await search('sam', `deploys ${unique}`)).toEqual([]);
    });

    test("a message's body or what was done is found once added; adding it again adds nothing", async () => {
      const { text, unique, thread, search } = team();
      const id = await thread('sam', 'rita', 1, 'Release notes');
      expect(await search('rita', `checkout ${unique}`)).toEqual([]);
      await text.addText(id, `The checkout test is flaky ${unique}`);
      await text.addText(id, `The checkout test is flaky ${unique}`);
      expect(await search('rita', `flaky checkout ${unique}`)).toEqual([id]);
      expect(await search('sam', `release ${unique}`)).toEqual([id]);
    });

    test('a claimed handoff is found by who claimed it, not by its target; readdressing unknown words says so', async () => {
      const { text, h, unique, thread, search, readdressThread } = team();
      const id = await thread('sam', 'role:frontend', 1, `Fix the navbar ${unique}`);
      await readdressThread(id, h('bo'));
      expect(await text.readdress({ _id: id, to: h('bo') })).toBe(true);
      expect(await search('bo', `navbar ${unique}`)).toEqual([id]);
      expect(await search('sam', `navbar ${unique}`)).toEqual([id]);
      expect(await text.readdress({ _id: randomUUID(), to: h('bo') })).toBe(false);
    });

    test('narrowed by side, status, intent and the other teammate; a create held for approval is not its recipient’s', async () => {
      const { unique, thread, search, h } = team();
      const sent = await thread('sam', 'rita', 1, `Rollout ${unique}`);
      const received = await thread('rita', 'sam', 2, `Rollout ${unique}`, { status: 'accepted' });
      const asked = await thread('ana', 'sam', 3, `Rollout ${unique}`, { intent: 'ask_question' });
      const held = await thread('bo', 'sam', 4, `Rollout ${unique}`, { hidden_from_recipient: true });
      const words = `rollout ${unique}`;
      expect(await search('sam', words)).toEqual([asked, received, sent]);
      expect(await search('sam', words, { party: 'from' })).toEqual([sent]);
      expect(await search('sam', words, { party: 'to' })).toEqual([asked, received]);
      expect(await search('sam', words, { statuses: ['accepted'] })).toEqual([received]);
      expect(await search('sam', words, { intent: 'ask_question' })).toEqual([asked]);
      expect(await search('sam', words, { party: 'to', other: h('rita') })).toEqual([received]);
      expect(await search('bo', words)).toEqual([held]);
    });

    test('pages follow their cursor, each thread once; a cursor the relay did not issue is refused', async () => {
      const { text, h, unique, thread } = team();
      const ids: string[] = [];
      for (let n = 0; n < 5; n += 1) ids.unshift(await thread('sam', 'rita', n, `Incident ${unique}`));
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let i = 0; i < 5; i += 1) {
        const page = await text.search({
          handle: h('rita'),
          terms: searchTerms(`incident ${unique}`),
          limit: 2,
          ...(cursor ? { cursor } : {}),
        });
        seen.push(...page.threads.map((t) => t._id));
        if (!page.next_cursor) break;
        cursor = page.next_cursor;
      }
      expect(seen).toEqual(ids);
      await expect(
        text.search({ handle: h('rita'), terms: [unique], limit: 2, cursor: 'not-a-cursor' }),
      ).rejects.toMatchObject({
        code: 'invalid_params',
        message: 'params.page.cursor: not a cursor this relay issued',
      });
    });

    test("a thread's words are written once: adding it again keeps the first", async () => {
      const { text, unique, thread, search } = team();
      const id = await thread('sam', 'rita', 1, `Original ${unique}`);
      const doc = { ...threadDocAt('x', 'y', 'pending', minute(1)), _id: id, summary: `Replaced ${unique}` };
      await text.addThread(doc);
      expect(await search('sam', `original ${unique}`)).toEqual([id]);
      expect(await search('sam', `replaced ${unique}`)).toEqual([]);
    });
  });
}
