// The read markers port's contract (relay-core/store/read-marks.ts): what thread reads and lists rely on. Run against
// the in-memory fake (test/unit/) and MongoReadMarks on the real server (test/integration/).
import { randomUUID } from 'node:crypto';
import type { ReadMarks } from '../../relay-core/store/read-marks';

const AT = new Date('2026-03-02T10:00:00Z');

export function readMarksContract(name: string, subject: () => ReadMarks): void {
  describe(`read markers port contract: ${name}`, () => {
    test('a thread never read has no marker; a marked one answers what was seen', async () => {
      const marks = subject();
      const [read, unread] = [randomUUID(), randomUUID()];
      await marks.mark(read, 'rita@acme', 3, AT);
      expect(await marks.seen('rita@acme', [read, unread])).toEqual(new Map([[read, 3]]));
      expect(await marks.seen('rita@acme', [])).toEqual(new Map());
    });

    test('a later mark replaces the earlier one', async () => {
      const marks = subject();
      const thread = randomUUID();
      await marks.mark(thread, 'rita@acme', 1, AT);
      await marks.mark(thread, 'rita@acme', 4, AT);
      expect(await marks.seen('rita@acme', [thread])).toEqual(new Map([[thread, 4]]));
    });

    test("one reader's marker is not another's", async () => {
      const marks = subject();
      const thread = randomUUID();
      await marks.mark(thread, 'rita@acme', 2, AT);
      expect(await marks.seen('sam@acme', [thread])).toEqual(new Map());
    });
  });
}
