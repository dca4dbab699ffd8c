// The read markers port's contract (relay-core/store/read-marks.ts): what thread reads, lists and the inbox search
// rely on. Run against the in-memory fake (test/unit/) and MongoReadMarks on the real server (test/integration/).
import { randomUUID } from 'node:crypto';
import type { ThreadDoc } from '../../relay-core/domain/documents';
import { seenBy, type ReadMarks } from '../../relay-core/store/read-marks';
import { threadDocAt } from '../helpers/thread-docs';

const AT = new Date('2026-03-02T10:00:00Z');

export interface ReadMarksUnderTest {
  marks: ReadMarks;
  /** Stores a thread as the relay does. */
  insert(doc: ThreadDoc): Promise<void>;
  /** The thread as stored. */
  read(id: string): Promise<ThreadDoc | null>;
  /** A versioned write of the thread (its status), as every state change goes. */
  write(id: string, change: (doc: ThreadDoc) => ThreadDoc): Promise<void>;
}

export function readMarksContract(name: string, subject: () => ReadMarksUnderTest): void {
  describe(`read markers port contract: ${name}`, () => {
    async function thread(under: ReadMarksUnderTest): Promise<string> {
      const doc = threadDocAt('sam@acme', 'rita@acme', 'pending', AT);
      await under.insert(doc);
      return doc._id;
    }

    test('a thread never read has no marker; a marked one answers what was seen', async () => {
      const under = subject();
      const [read, unread] = [await thread(under), await thread(under)];
      await under.marks.mark(read, 'rita@acme', 3);
      expect(await under.marks.seen('rita@acme', [read, unread, randomUUID()])).toEqual(new Map([[read, 3]]));
      expect(await under.marks.seen('rita@acme', [])).toEqual(new Map());
    });

    test('a later mark raises the count; an older count, written late, changes nothing', async () => {
      const under = subject();
      const id = await thread(under);
      await under.marks.mark(id, 'rita@acme', 1);
      await under.marks.mark(id, 'rita@acme', 4);
      await under.marks.mark(id, 'rita@acme', 2);
      expect(await under.marks.seen('rita@acme', [id])).toEqual(new Map([[id, 4]]));
    });

    test("one reader's marker is not another's, dots in a handle included", async () => {
      const under = subject();
      const id = await thread(under);
      await under.marks.mark(id, 'rita.k@acme.io', 2);
      expect(await under.marks.seen('sam@acme', [id])).toEqual(new Map());
      expect(await under.marks.seen('rita.k@acme.io', [id])).toEqual(new Map([[id, 2]]));
      // The marks are on the thread, where a list page reads them (store/thread-lists.ts LISTED_FIELDS).
      const stored = (await under.read(id))!;
      expect([seenBy(stored, 'rita.k@acme.io'), seenBy(stored, 'sam@acme')]).toEqual([2, 0]);
    });

    test("a mark leaves the thread's version alone, and a state change keeps the marks", async () => {
      const under = subject();
      const id = await thread(under);
      await under.marks.mark(id, 'rita@acme', 2);
      expect((await under.read(id))!.version).toBe(1);
      await under.write(id, (doc) => ({ ...doc, status: 'accepted' }));
      const stored = (await under.read(id))!;
      expect([stored.status, stored.version, seenBy(stored, 'rita@acme')]).toEqual(['accepted', 2, 2]);
    });

    test('marking a thread that is not there stores nothing', async () => {
      const under = subject();
      const id = randomUUID();
      await under.marks.mark(id, 'rita@acme', 2);
      expect(await under.read(id)).toBeNull();
      expect(await under.marks.seen('rita@acme', [id])).toEqual(new Map());
    });
  });
}
