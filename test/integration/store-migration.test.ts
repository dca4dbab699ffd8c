// A relay started on a database written by layout 1 (outbox flags on threads)
// migrates it before serving: lists, reads, changes and the outbox work on the old threads, the old cards are found by
// skill and repo; migrating again is a no-op.
import { randomBytes, randomUUID } from 'node:crypto';
import type { ThreadDoc } from '../../relay-core/domain/documents';
import { migrateStore, SCHEMA_VERSION, schemaVersion } from '../../relay-core/store/migrate';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { uniqueName } from '../helpers/test-env';

const env = {
  MONGODB_DB: uniqueName('migration'),
  RELAY_QUEUE_PREFIX: uniqueName('migration'),
  RELAY_KEY_PEPPER: randomBytes(32).toString('hex'),
  RELAY_ROLES: 'api',
};
let relay: TestRelay;
let alice: string;
let bob: string;
const old: ThreadDoc[] = [];

beforeAll(async () => {
  // The teammates and one thread as a template, then the database is put back to the previous layout.
  const first = await startTestRelay({ name: 'migration', env });
  alice = await first.register({ handle: 'alice@acme' });
  bob = await first.register({ handle: 'bob@acme', skills: ['go'], repos_owned: ['acme/api/'] });
  const { body } = await first.rpc(alice, 'message/send', {
    recipient: 'bob@acme',
    intent: 'inform',
    message: { parts: [{ text: 'template' }] },
  });
  // Without what later layouts keep on a thread (its armed timer step, its pending jobs).
  const {
    next_timer: _step,
    next_due_at: _due,
    timer_version: _armed,
    jobs_pending: _jobs,
    pending_since: _since,
    ...template
  } = (await first.store.threads.findOne({ _id: body.result.task_id }))!;
  await first.store.threads.deleteMany({});
  await first.store.meta.deleteMany({});
  const base = Date.now() - 30 * 24 * 3600 * 1000;
  for (let i = 0; i < 25; i += 1) {
    const at = new Date(base + i * 60_000);
    const event = { ...template.outbox[0]!, id: randomUUID(), at };
    // The previous layout: every thread carries the flag; the last one's event never reached its queue.
    old.push({
      ...template,
      _id: randomUUID(),
      summary: `old #${i}`,
      created_at: at,
      updated_at: at,
      outbox: [event],
      outbox_dirty: i === 24,
      outbox_enqueued: i === 24 ? 0 : 1,
      message_counts: { from: 3, to: 0 },
    } as ThreadDoc);
  }
  await first.store.threads.insertMany(old);
  // What bob had read, as layouts up to 9 kept it: a document of its own per thread and reader.
  await first.store.db.collection('thread_reads').insertMany([
    { _id: `${old[5]!._id}:bob@acme`, seen: 2, at: new Date(base) },
    { _id: `${old[6]!._id}:bob@acme`, seen: 3, at: new Date(base) },
  ] as never[]);
  // Up to layout 10 a card's skills and repos were also tags of their own, and `agents` had no index of either.
  await first.store.agents.dropIndex('by_skill');
  await first.store.agents.dropIndex('by_repo');
  await first.store.db.collection('agent_tags').insertMany([
    { _id: 'skill\u0000go\u0000bob@acme', kind: 'skill', value: 'go', handle: 'bob@acme' },
    { _id: 'repo\u0000acme/api/\u0000bob@acme', kind: 'repo', value: 'acme/api/', handle: 'bob@acme' },
  ] as never[]);
  await first.store.db.collection('agent_tags').createIndex({ kind: 1, value: 1, handle: 1 }, { name: 'by_value' });
  await first.stop();
  relay = await startTestRelay({ name: 'migration', env });
}, 60_000);

afterAll(async () => {
  await relay?.store.db.dropDatabase();
  await relay?.stop();
});

test('after start, the old threads list newest first, each exactly once across pages', async () => {
  expect(await schemaVersion(relay.store)).toBe(SCHEMA_VERSION);
  const seen: string[] = [];
  let cursor: string | undefined;
  do {
    const { body } = await relay.rpc(bob, 'tasks/list', {
      filter: { role: 'recipient' },
      page: { limit: 10, ...(cursor ? { cursor } : {}) },
    });
    seen.push(...body.result.items.map((item: any) => item.thread_id));
    cursor = body.result.next_cursor ?? undefined;
  } while (cursor);
  expect(seen).toEqual(old.map((t) => t._id).reverse());
  const sent = await relay.rpc(alice, 'tasks/list', {
    filter: { role: 'sender', status: ['pending'] },
    page: { limit: 3 },
  });
  expect(sent.body.result.items.map((item: any) => item.summary_preview)).toEqual(['old #24', 'old #23', 'old #22']);
});

test('an old thread reads and changes like a new one; the outbox flags are gone and the unsent event has its jobs pending', async () => {
  const doc = (await relay.store.threads.findOne({ _id: old[24]!._id }))!;
  expect(doc.outbox_dirty).toBeUndefined();
  expect(doc.outbox_enqueued).toBeUndefined();
  const eventId = old[24]!.outbox[0]!.id;
  expect(doc.jobs_pending).toEqual([`webhooks:${eventId}`, `slack:${eventId}`]);
  expect(await relay.store.threads.countDocuments({ pending_since: { $gte: new Date(0) } })).toBe(1);
  const read = await relay.rpc(bob, 'tasks/get', { task_id: old[3]!._id });
  expect(read.body.result).toMatchObject({ summary: 'old #3', status: 'pending' });
  const accepted = await relay.rpc(bob, 'tasks/update', { task_id: old[3]!._id, transition: 'accept' });
  expect(accepted.body.result).toMatchObject({ status: 'accepted' });
  const list = await relay.rpc(bob, 'tasks/list', {
    filter: { role: 'recipient', status: ['accepted'] },
    page: { limit: 5 },
  });
  expect(list.body.result.items.map((item: any) => item.thread_id)).toEqual([old[3]!._id]);
});

test("what bob had read is on the threads: his unread counts are as they were, and the old read marks' collection is gone", async () => {
  const { body } = await relay.rpc(bob, 'tasks/list', { filter: { role: 'recipient' }, page: { limit: 50 } });
  const unread = new Map(body.result.items.map((item: any) => [item.thread_id, item.unread_messages]));
  expect([unread.get(old[4]!._id), unread.get(old[5]!._id), unread.get(old[6]!._id)]).toEqual([3, 1, 0]);
  expect(await relay.store.db.listCollections({ name: 'thread_reads' }).toArray()).toEqual([]);
});

test('the old cards are listed by skill and repo through the teammates’ own indexes; the tags are gone', async () => {
  const listed = async (filter: object) =>
    (await relay.rpc(alice, 'agents/list', filter)).body.result.teammates.map((t: { handle: string }) => t.handle);
  expect(await listed({ skill: 'go' })).toEqual(['bob@acme']);
  expect(await listed({ repo: 'acme/' })).toEqual(['bob@acme']);
  expect((await relay.store.agents.indexes()).map((index) => index.name)).toEqual(
    expect.arrayContaining(['by_skill', 'by_repo']),
  );
  expect(await relay.store.db.listCollections({ name: 'agent_tags' }).toArray()).toEqual([]);
});

test('migrating again changes nothing', async () => {
  const lines: string[] = [];
  expect(await migrateStore(relay.store, (line) => lines.push(line))).toBe(0);
  expect(lines).toEqual([]);
});
