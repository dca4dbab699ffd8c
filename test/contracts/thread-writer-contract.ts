// The thread-write port's contract (relay-core/domain/thread-writer.ts): what the use cases rely on of readThread and
// writeThread. Run against the in-memory fake (test/unit/) and against MongoStore on the real server (test/integration/).
import type { ThreadDoc } from '../../relay-core/domain/documents';
import type { ThreadWriter } from '../../relay-core/domain/thread-writer';
import { threadDocAt } from '../helpers/thread-docs';

export interface ThreadWriterUnderTest {
  writer: Pick<ThreadWriter, 'readThread' | 'writeThread'>;
  /** Stores a new thread as the relay creates one. */
  insert(doc: ThreadDoc): Promise<void>;
}

let at = Date.UTC(2026, 0, 1);
const newThread = () => threadDocAt('a@acme', 'b@acme', 'pending', new Date((at += 1_000)));

export function threadWriterContract(name: string, subject: () => ThreadWriterUnderTest): void {
  describe(`thread-write port contract: ${name}`, () => {
    test('a write answers the version it changed and the one it stored, which a read then returns', async () => {
      const { writer, insert } = subject();
      const doc = newThread();
      await insert(doc);
      const written = await writer.writeThread(doc._id, (current) => ({ ...current, status: 'accepted' }));
      expect(written.before).toMatchObject({ _id: doc._id, status: 'pending', version: 1 });
      expect(written.after).toMatchObject({ _id: doc._id, status: 'accepted', version: 2 });
      expect(await writer.readThread(doc._id)).toMatchObject({ status: 'accepted', version: 2 });
    });

    test('a change that answers undefined writes nothing; `before` says why', async () => {
      const { writer, insert } = subject();
      const doc = newThread();
      await insert(doc);
      const written = await writer.writeThread(doc._id, () => undefined);
      expect(written.after).toBeNull();
      expect(written.before).toMatchObject({ _id: doc._id, status: 'pending', version: 1 });
      expect(await writer.readThread(doc._id)).toMatchObject({ version: 1 });
    });

    test('an unknown thread reads as null and its write as no before and no after', async () => {
      const { writer } = subject();
      expect(await writer.readThread('00000000-0000-4000-8000-000000000000')).toBeNull();
      expect(await writer.writeThread('00000000-0000-4000-8000-000000000000', (current) => current)).toEqual({
        before: null,
        after: null,
      });
    });

    test('concurrent writes of different fields lose none of them, each bumping the version once', async () => {
      const { writer, insert } = subject();
      const doc = newThread();
      await insert(doc);
      await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          writer.writeThread(doc._id, (current) => ({ ...current, metadata: { ...current.metadata, [`k${i}`]: i } })),
        ),
      );
      const after = await writer.readThread(doc._id);
      expect(Object.keys(after!.metadata).sort()).toEqual(Array.from({ length: 8 }, (_, i) => `k${i}`).sort());
      expect(after!.version).toBe(9);
    });

    test('a write from a version that is no longer current is judged on the current one (no lost write)', async () => {
      const { writer, insert } = subject();
      const doc = newThread();
      await insert(doc);
      const stale = (await writer.readThread(doc._id))!;
      await writer.writeThread(doc._id, (current) => ({ ...current, metadata: { first: 1 } }));
      const written = await writer.writeThread(
        doc._id,
        (current) => ({ ...current, metadata: { ...current.metadata, second: 2 } }),
        stale,
      );
      expect(written.after).toMatchObject({ metadata: { first: 1, second: 2 }, version: 3 });
    });
  });
}
