// The teammate directory on FerretDB (cards in memory, kept current from a card-change log read by `_id`): the
// webhooks worker looking endpoints up for many events at once reads the log at most twice, not once per event; a
// card registered or changed in one process is in another process's very next call, which re-reads that card alone;
// changes made together by two processes all arrive; a process far behind, or told of a bulk write, reloads; and a
// relay restarted on a team loads every card at start, before anything asks.
import { Collection, type CommandStartedEvent } from 'mongodb';
import { createLogger } from '../../relay-core/ops/logger';
import { AgentDirectory, logEntryId } from '../../relay-core/store/agent-directory';
import { MongoStore } from '../../relay-core/store/mongo-store';
import { findFreePort } from '../../scripts/local-services/ports';
import { startRelay } from '../../scripts/relay';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { testMongoUrl } from '../helpers/test-env';
import { waitUntil } from '../helpers/wait-until';

let relay: TestRelay;
let other: MongoStore;
let alice: string;

beforeAll(async () => {
  relay = await startTestRelay({ name: 'directory_reads' });
  alice = await relay.register({ handle: 'alice@acme' });
  // A second process's store on the same database, its commands counted.
  other = await MongoStore.connect(testMongoUrl(), relay.config.mongodbDb, { monitorCommands: true });
});

afterAll(async () => {
  await other?.close();
  await relay?.stop();
});

/** The commands `other` sends while `work` runs: its reads of the change log and its reads of cards. */
async function counted<T>(work: () => Promise<T>): Promise<{ result: T; logReads: number; cardReads: unknown[] }> {
  let logReads = 0;
  const cardReads: unknown[] = [];
  const started = (event: CommandStartedEvent) => {
    if (event.commandName !== 'find') return;
    if (event.command.find === 'meta' && String(event.command.filter?._id).startsWith('agents_log#')) logReads += 1;
    if (event.command.find === 'agents') cardReads.push(event.command.filter);
  };
  other.db.client.on('commandStarted', started);
  try {
    const result = await work();
    return { result, logReads, cardReads };
  } finally {
    other.db.client.off('commandStarted', started);
  }
}

const roleOf = async (role: string) => (await other.directory!.matching({ role }, 100)).map((c) => c.handle);

async function putCard(key: string, card: Record<string, unknown>): Promise<void> {
  const res = await relay.rest('PUT', '/agents/me/card', key, card);
  expect(res.status).toBe(200);
}

test('32 endpoint lookups made together read the change log at most twice, and no card', async () => {
  expect(other.capabilities.kind).toBe('ferretdb');
  await other.withWebhookEndpoint(['alice@acme']);
  const { result, logReads, cardReads } = await counted(() => Promise.all(Array.from({ length: 32 }, () => other.withWebhookEndpoint(['alice@acme']))));
  expect(result).toEqual(Array(32).fill([]));
  expect(logReads).toBeGreaterThanOrEqual(1);
  expect(logReads).toBeLessThanOrEqual(2);
  expect(cardReads).toEqual([]);
});

test('a teammate registered through the relay is in the other process\'s next listing, even while its lookups overlap', async () => {
  expect(await roleOf('designer')).toEqual([]);
  // Lookups in flight across the registration: the call made after it must see it.
  const overlapping = Array.from({ length: 8 }, () => other.directory!.matching({ role: 'designer' }, 10));
  await relay.register({ handle: 'dana@acme', role: 'designer' });
  expect(await roleOf('designer')).toEqual(['dana@acme']);
  await Promise.all(overlapping);
});

test('a card changed in one process is re-read alone by the other, not with the whole team', async () => {
  for (let i = 0; i < 5; i += 1) await relay.register({ handle: `filler${i}@acme`, role: 'backend' });
  const erin = await relay.register({ handle: 'erin@acme', role: 'backend' });
  expect(await roleOf('backend')).toContain('erin@acme');
  await putCard(erin, { role: 'designer', skills: ['figma'] });
  const { result, cardReads } = await counted(() => roleOf('designer'));
  expect(result).toEqual(['dana@acme', 'erin@acme']);
  expect(cardReads).toEqual([{ _id: 'erin@acme' }]);
  expect(await roleOf('backend')).not.toContain('erin@acme');
  expect((await other.directory!.matching({ skill: 'figma' }, 10)).map((c) => c.handle)).toEqual(['erin@acme']);
});

test('changes made at once by two processes are all logged, one position each, and reach both', async () => {
  await roleOf('ops');
  const handles = Array.from({ length: 10 }, (_, i) => `ops${i}@acme`);
  // Five registrations through the relay while the other process changes alice's card five times.
  await Promise.all([
    ...handles.slice(0, 5).map((handle) => relay.register({ handle, role: 'ops' })),
    ...Array.from({ length: 5 }, (_, i) => other.writeAgent('alice@acme', (doc) => ({ ...doc, name: `Alice ${i}`, updated_at: new Date() }))),
  ]);
  await Promise.all(handles.slice(5).map((handle) => relay.register({ handle, role: 'ops' })));
  expect(await roleOf('ops')).toEqual(handles);
  const listed = (await relay.rpc(alice, 'agents/list', { role: 'ops' })).body.result.teammates.map((t: any) => t.handle);
  expect(listed).toEqual(handles);
  // Every position from 1 to the last is filled: no gap for a reader to stop at.
  const entries = await other.meta.find({ _id: { $regex: /^agents_log#/ } }).toArray();
  const positions = entries.map((e) => Number(e._id.slice('agents_log#'.length))).sort((a, b) => a - b);
  expect(positions).toEqual(positions.map((_, i) => i + 1));
  expect(entries.filter((e) => e.value === 'alice@acme').length).toBeGreaterThanOrEqual(5);
});

test('a process more changes behind than it catches up on one by one, or told of a bulk write, reloads every card', async () => {
  // A directory of its own in the other process, catching up on at most 3 changes one by one.
  const directory = new AgentDirectory(other.agents, other.meta, 3);
  const qa = async () => (await directory.matching({ role: 'qa' }, 100)).map((c) => c.handle);
  expect(await qa()).toEqual([]);
  for (const handle of ['q1@acme', 'q2@acme', 'q3@acme', 'q4@acme']) await relay.register({ handle, role: 'qa' });
  const behind = await counted(qa);
  expect(behind.result).toEqual(['q1@acme', 'q2@acme', 'q3@acme', 'q4@acme']);
  expect(behind.cardReads).toEqual([{}]);

  // A bulk write behind the store's back (what a seeding or a migration does), then one entry for all of it.
  await other.agents.updateMany({ role: 'qa' }, { $set: { role: 'test' } });
  await other.directory!.changed();
  const bulk = await counted(qa);
  expect(bulk.result).toEqual([]);
  expect(bulk.cardReads).toEqual([{}]);
  expect((await relay.rpc(alice, 'agents/list', { role: 'test' })).body.result.teammates).toHaveLength(4);
  expect(await other.meta.findOne({ _id: logEntryId(1) })).not.toBeNull();
});

test('a relay restarted on a team loads every card at start, so its first listing (or delivery) waits for no load', async () => {
  // Every full read of the agents collection (the directory's load is the one with an empty filter), in any process here.
  const finds = jest.spyOn(Collection.prototype, 'find');
  const loads = () => finds.mock.calls.filter((call, i) => (finds.mock.contexts[i] as Collection).collectionName === 'agents' && Object.keys(call[0] ?? {}).length === 0).length;
  const { config } = relay;
  const restarted = await startRelay({
    config: { ...config, port: await findFreePort(), mongodbUrl: config.mongodbUrl!, adminKey: config.adminKey!, keyPepper: config.keyPepper! },
    log: createLogger('silent'),
  });
  try {
    // Nothing has asked this process for a card yet: it loads them on its own.
    await waitUntil(async () => loads() === 1, 'the restarted relay to load its teammate directory');
    const response = await fetch(`${restarted.url}/a2a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${alice}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'agents/list', params: { role: 'ops' } }),
    });
    const body = (await response.json()) as { result: { teammates: Array<{ handle: string }> } };
    expect(body.result.teammates.map((t) => t.handle)).toEqual(Array.from({ length: 10 }, (_, i) => `ops${i}@acme`));
    expect(loads()).toBe(1);
  } finally {
    finds.mockRestore();
    await restarted.stop();
  }
});
