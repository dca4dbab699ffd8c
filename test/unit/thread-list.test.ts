// Listing a teammate's threads (relay-core/service/thread-list.ts) on the in-memory threads, list pages and read
// markers: received or sent, newest first (or oldest first), each with what the other side wrote that the caller has
// not read; a create held for approval is not in its recipient's list; the cursor resumes where the page ended. The
// same through tasks/list, the web inbox and Slack's App Home: test/integration/.
import type { ThreadDoc } from '../../relay-core/domain/documents';
import { listThreads } from '../../relay-core/service/thread-list';
import { InMemoryReadMarks } from '../fakes/in-memory-read-marks';
import { InMemoryThreadLists } from '../fakes/in-memory-thread-lists';
import { InMemoryThreads } from '../fakes/in-memory-threads';
import { agent, NOW, teammatesOf } from '../fakes/use-case-ports';
import { threadDocAt } from '../helpers/thread-docs';

const sam = { ...agent('sam@acme'), name: 'Sam' };
const rita = { ...agent('rita@acme'), name: 'Rita' };
const otto = agent('otto@acme');
const minute = (n: number) => new Date(NOW.getTime() + n * 60_000);

function setup() {
  const threads = new InMemoryThreads();
  const marks = new InMemoryReadMarks(threads);
  const deps = { lists: new InMemoryThreadLists(threads), teammates: teammatesOf([sam, rita, otto]) };
  const thread = async (from: string, to: string, n: number, over: Partial<ThreadDoc> = {}) => {
    const doc = { ...threadDocAt(from, to, 'pending', minute(n)), ...over };
    await threads.insert(doc);
    return doc._id;
  };
  return { deps, marks, thread, threads };
}

test("a received page: newest first, each item with both parties' cards and its preview", async () => {
  const { deps, thread } = setup();
  const older = await thread(sam.handle, rita.handle, 1, { summary: 'Read the notes' });
  const newer = await thread(otto.handle, rita.handle, 2, { intent: 'ask_question', question: 'Why?' });
  await thread(sam.handle, otto.handle, 3);
  const page = await listThreads(deps, rita, { role: 'recipient', limit: 10 });
  expect(page.next_cursor).toBeNull();
  expect(page.items.map((i) => i.thread_id)).toEqual([newer, older]);
  expect(page.items[1]).toMatchObject({
    sender: { handle: sam.handle, name: 'Sam' },
    recipient: { handle: rita.handle, name: 'Rita' },
    summary_preview: 'Read the notes',
    status: 'pending',
    unread_messages: 0,
    created_at: minute(1).toISOString(),
  });
});

test('the sent page is the threads the caller sent; a status narrows it', async () => {
  const { deps, thread } = setup();
  const pending = await thread(sam.handle, rita.handle, 1);
  const accepted = await thread(sam.handle, otto.handle, 2, { status: 'accepted' });
  await thread(rita.handle, sam.handle, 3);
  const ids = async (status?: ThreadDoc['status'][]) =>
    (await listThreads(deps, sam, { role: 'sender', limit: 10, ...(status ? { status } : {}) })).items.map(
      (i) => i.thread_id,
    );
  expect(await ids()).toEqual([accepted, pending]);
  expect(await ids(['accepted'])).toEqual([accepted]);
});

test("unread: the other side's messages the caller has not seen; the caller's own never count", async () => {
  const { deps, marks, thread } = setup();
  const id = await thread(sam.handle, rita.handle, 1, { message_counts: { from: 3, to: 2 } });
  const unread = async (caller: typeof sam, role: 'recipient' | 'sender') =>
    (await listThreads(deps, caller, { role, limit: 10 })).items[0]!.unread_messages;
  expect(await unread(rita, 'recipient')).toBe(3);
  expect(await unread(sam, 'sender')).toBe(2);
  await marks.mark(id, rita.handle, 2);
  expect(await unread(rita, 'recipient')).toBe(1);
  // A marker past the count (a message since removed) reads as nothing unread, never a negative count.
  await marks.mark(id, rita.handle, 9);
  expect(await unread(rita, 'recipient')).toBe(0);
});

test('a create held for approval is in its sender’s list, not its recipient’s', async () => {
  const { deps, thread } = setup();
  const held = await thread(sam.handle, rita.handle, 1, { status: 'awaiting_approval', hidden_from_recipient: true });
  expect((await listThreads(deps, rita, { role: 'recipient', limit: 10 })).items).toEqual([]);
  expect((await listThreads(deps, sam, { role: 'sender', limit: 10 })).items.map((i) => i.thread_id)).toEqual([held]);
});

test('the cursor resumes exactly where the page ended; oldest first walks the other way', async () => {
  const { deps, thread } = setup();
  const ids = [];
  for (let n = 0; n < 3; n += 1) ids.push(await thread(sam.handle, rita.handle, n));
  const first = await listThreads(deps, rita, { role: 'recipient', limit: 2 });
  expect(first.items.map((i) => i.thread_id)).toEqual([ids[2], ids[1]]);
  const rest = await listThreads(deps, rita, { role: 'recipient', limit: 2, cursor: first.next_cursor! });
  expect(rest).toMatchObject({ items: [expect.objectContaining({ thread_id: ids[0] })], next_cursor: null });
  const oldest = await listThreads(deps, rita, { role: 'recipient', limit: 2, oldestFirst: true });
  expect(oldest.items.map((i) => i.thread_id)).toEqual([ids[0], ids[1]]);
});

test('the web inbox filters: an intent, the teammate on the other side', async () => {
  const { deps, thread } = setup();
  await thread(sam.handle, rita.handle, 1);
  const fromOtto = await thread(otto.handle, rita.handle, 2);
  const question = await thread(sam.handle, rita.handle, 3, { intent: 'ask_question', question: 'Why?' });
  const ids = async (filter: object) =>
    (await listThreads(deps, rita, { role: 'recipient', limit: 10, ...filter })).items.map((i) => i.thread_id);
  expect(await ids({ intent: 'ask_question' })).toEqual([question]);
  expect(await ids({ other: otto.handle })).toEqual([fromOtto]);
});

test('a cursor this relay did not issue is refused as invalid_params', async () => {
  const { deps } = setup();
  await expect(listThreads(deps, rita, { role: 'recipient', limit: 2, cursor: 'forged' })).rejects.toMatchObject({
    code: 'invalid_params',
  });
});
