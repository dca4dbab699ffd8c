// A create's insert of a new thread (MongoStore.insertThread, what service/create-handoff.ts relies on): the thread
// reads back, and a second insert of its id is a duplicate key that changes nothing (a retry under the same
// idempotency key); and a thread's messages read back by sequence number (messagesOf, what thread reads show), by id
// and as every body of some threads (messageBody, messageBodies: what the inbox search indexes). Run
// against the in-memory fake (test/unit/) and MongoStore on the real server (test/integration/).
import type { MessageDoc } from '../../relay-core/domain/documents';
import type { MongoStore } from '../../relay-core/store/mongo-store';
import { isDuplicateKey } from '../../relay-core/store/mongo-store';
import { threadDocAt } from '../helpers/thread-docs';

let at = Date.UTC(2026, 1, 1);
const newThread = () => threadDocAt('a@acme', 'b@acme', 'pending', new Date((at += 1_000)));
const messageOf = (threadId: string, n: number): MessageDoc => ({
  _id: `${threadId}:${n}`,
  id: `m${n}`,
  thread_id: threadId,
  sequence_no: n,
  from: 'a@acme',
  body: `message ${n} of ${threadId}`,
  payload: {},
  artifacts: [],
  via: 'api',
  created_at: new Date(at + n),
});

export interface ThreadInsertUnderTest {
  store: Pick<MongoStore, 'insertThread' | 'readThread' | 'messagesOf' | 'messageBody' | 'messageBodies'>;
  /** Stores a message as the append does. */
  insertMessage(message: MessageDoc): Promise<void>;
}

export function threadInsertContract(name: string, subject: () => ThreadInsertUnderTest): void {
  describe(`thread insert contract: ${name}`, () => {
    test('an inserted thread reads back as it was inserted', async () => {
      const { store } = subject();
      const doc = newThread();
      await store.insertThread(doc);
      expect(await store.readThread(doc._id)).toMatchObject({
        _id: doc._id,
        from: 'a@acme',
        to: 'b@acme',
        status: 'pending',
        summary: doc.summary,
        version: doc.version,
      });
    });

    test('a second insert of the same id is a duplicate key and leaves the first as it was', async () => {
      const { store } = subject();
      const doc = newThread();
      await store.insertThread(doc);
      const error = await store.insertThread({ ...doc, summary: 'Another body' }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(isDuplicateKey(error)).toBe(true);
      expect(await store.readThread(doc._id)).toMatchObject({ summary: doc.summary });
    });

    test("a thread's messages read back by sequence number, in order, only those that exist", async () => {
      const { store, insertMessage } = subject();
      const doc = newThread();
      await store.insertThread(doc);
      for (const n of [3, 1, 2]) await insertMessage(messageOf(doc._id, n));
      expect((await store.messagesOf(doc, [3, 1, 9])).map((m) => m.sequence_no)).toEqual([1, 3]);
      expect(await store.messagesOf(doc, [])).toEqual([]);
    });

    test("a message's body reads back by its id; some threads' bodies each in order, none for a thread without", async () => {
      const { store, insertMessage } = subject();
      const [one, two, quiet] = [newThread(), newThread(), newThread()];
      for (const doc of [one, two, quiet]) await store.insertThread(doc);
      for (const n of [2, 1]) await insertMessage(messageOf(one._id, n));
      await insertMessage(messageOf(two._id, 1));
      expect(await store.messageBody(one._id, 'm2')).toBe(`message 2 of ${one._id}`);
      expect(await store.messageBody(one._id, 'm9')).toBeNull();
      expect(await store.messageBodies([one._id, two._id, quiet._id])).toEqual(
        new Map([
          [one._id, [`message 1 of ${one._id}`, `message 2 of ${one._id}`]],
          [two._id, [`message 1 of ${two._id}`]],
        ]),
      );
    });
  });
}
