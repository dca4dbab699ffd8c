// A relay started on a layout-2 database that an earlier relay left with writes claimed but not applied (its
// FerretDB writes claimed version N+1 in thread_writes, agent_writes, … and then wrote the document; it died between
// the two) applies those claims before it serves, and drops the claims collections.
import { randomBytes } from 'node:crypto';
import type { ThreadDoc } from '../../relay-core/domain/documents';
import { migrateStore, SCHEMA_VERSION, schemaVersion } from '../../relay-core/store/migrate';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { uniqueName } from '../helpers/test-env';

const env = {
  MONGODB_DB: uniqueName('migration_claims'),
  RELAY_QUEUE_PREFIX: uniqueName('migration_claims'),
  RELAY_KEY_PEPPER: randomBytes(32).toString('hex'),
  RELAY_ROLES: 'api',
};
let relay: TestRelay;
let alice: string;
let bob: string;
let claimed: string;
let applied: string;

beforeAll(async () => {
  const first = await startTestRelay({ name: 'migration_claims', env });
  alice = await first.register({ handle: 'alice@acme' });
  bob = await first.register({ handle: 'bob@acme', role: 'backend' });
  const send = async (summary: string) =>
    (
      await first.rpc(alice, 'message/send', {
        recipient: 'bob@acme',
        intent: 'inform',
        message: { parts: [{ text: summary }] },
      })
    ).body.result.task_id as string;
  claimed = await send('accepted by a writer that died before applying it');
  applied = await send('accepted, applied');
  await first.rpc(bob, 'tasks/update', { task_id: applied, transition: 'accept' });
  const db = first.store.db;
  const thread = (await first.store.threads.findOne({ _id: claimed }))!;
  const appliedDoc = (await first.store.threads.findOne({ _id: applied }))!;
  const bobCard = (await first.store.agents.findOne({ _id: 'bob@acme' }))!;

  // What a layout-2 relay on FerretDB left: two claims on the first thread (versions v+1 and v+2, neither applied),
  // an old claim on the second (already applied), and a card change of bob's claimed but not applied.
  const v = thread.version ?? 0;
  const at = new Date();
  const threadClaim = (doc: ThreadDoc) => ({
    _id: `${doc._id}:${doc.version}`,
    thread_id: doc._id,
    version: doc.version,
    doc,
    at,
  });
  await db.collection('thread_writes').insertMany([
    threadClaim({ ...thread, version: v + 1, status: 'accepted' } as ThreadDoc),
    threadClaim({
      ...thread,
      version: v + 2,
      status: 'accepted',
      metadata: { ...thread.metadata, note: 'second claim' },
    } as ThreadDoc),
    threadClaim({ ...appliedDoc, version: (appliedDoc.version ?? 0) - 1, status: 'pending' } as ThreadDoc),
  ] as never[]);
  const bv = (bobCard.version ?? 0) + 1;
  await db.collection('agent_writes').insertOne({
    _id: `bob@acme:${bv}`,
    handle: 'bob@acme',
    version: bv,
    doc: { ...bobCard, version: bv, role: 'frontend' },
    at,
  } as never);
  await db.collection('meta').updateOne({ _id: 'schema' as never }, { $set: { value: 2 } });
  await first.stop();

  relay = await startTestRelay({ name: 'migration_claims', env });
}, 60_000);

afterAll(async () => {
  await relay?.store.db.dropDatabase();
  await relay?.stop();
});

test('the newest claim of each document is in the document, and the claims collections are gone', async () => {
  expect(await schemaVersion(relay.store)).toBe(SCHEMA_VERSION);
  const thread = (await relay.store.threads.findOne({ _id: claimed }))!;
  expect(thread.status).toBe('accepted');
  expect(thread.metadata).toMatchObject({ note: 'second claim' });
  // The already applied thread is left as it was (its claim is older than the document).
  expect((await relay.store.threads.findOne({ _id: applied }))!.status).toBe('accepted');
  const names = (await relay.store.db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name);
  expect(names).not.toContain('thread_writes');
  expect(names).not.toContain('agent_writes');
});

test('the migrated thread and card read and change as any other', async () => {
  const read = await relay.rpc(bob, 'tasks/get', { task_id: claimed });
  expect(read.body.result).toMatchObject({ status: 'accepted' });
  const completed = await relay.rpc(bob, 'tasks/update', {
    task_id: claimed,
    transition: 'complete',
    result_summary: 'done',
  });
  expect(completed.body.result).toMatchObject({ status: 'completed' });
  const team = await relay.rpc(alice, 'agents/list', { role: 'frontend' });
  expect(team.body.result.teammates.map((card: any) => card.handle)).toEqual(['bob@acme']);
});

test('migrating again changes nothing', async () => {
  const again: string[] = [];
  expect(await migrateStore(relay.store, (line) => again.push(line))).toBe(0);
  expect(again).toEqual([]);
});
