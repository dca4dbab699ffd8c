// What a change to a thread reads, counted on the driver's command monitoring: the policy reads the thread to judge
// an append or a transition, and the change then starts from that read instead of reading the thread again (on
// FerretDB each read decodes the whole thread document). Only the API runs here, so no job's reads are counted.
import type { CommandStartedEvent } from 'mongodb';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { sendHandoff } from '../helpers/handoffs';
import { testMongoUrl } from '../helpers/test-env';

let relay: TestRelay;
let aliceKey: string;
let bobKey: string;

beforeAll(async () => {
  const url = new URL(testMongoUrl());
  url.searchParams.set('monitorCommands', 'true');
  relay = await startTestRelay({
    name: 'thread_change_reads',
    env: { MONGODB_URL: url.toString(), RELAY_ROLES: 'api' },
  });
  aliceKey = await relay.register({ handle: 'alice@acme' });
  bobKey = await relay.register({ handle: 'bob@acme' });
});

afterAll(async () => {
  await relay?.stop();
});

/** The `find`s of thread `id` the relay sends while `work` runs. */
async function threadFinds<T>(id: string, work: () => Promise<T>): Promise<{ result: T; threads: number }> {
  const client = relay.store.db.client;
  let threads = 0;
  const started = (event: CommandStartedEvent) => {
    if (event.commandName !== 'find') return;
    const target = String(event.command.filter?._id ?? '');
    if (event.command.find === 'threads' && target === id) threads += 1;
  };
  client.on('commandStarted', started);
  try {
    return { result: await work(), threads };
  } finally {
    client.off('commandStarted', started);
  }
}

const text = (t: string) => ({ role: 'user', parts: [{ kind: 'text', text: t }] });

test('an append reads its thread once, and numbers its message after the last one', async () => {
  const id = await sendHandoff(relay, aliceKey, 'bob@acme', 'schema change');
  const first = await threadFinds(id, () =>
    relay.rpc(aliceKey, 'message/send', { task_id: id, message: text('one more detail') }),
  );
  expect(first.result.body.result).toMatchObject({ thread_id: id, sequence_no: 1 });
  // Was 3: the policy's read, the appender's read, the write's read.
  expect(first.threads).toBe(1);
  const second = await relay.rpc(bobKey, 'message/send', { task_id: id, message: text('got it') });
  expect(second.body.result).toMatchObject({ thread_id: id, sequence_no: 2 });
  const thread = (await relay.rpc(aliceKey, 'tasks/get', { task_id: id })).body.result;
  expect(thread.messages.map((m: { sequence_no: number; body: string }) => [m.sequence_no, m.body])).toEqual([
    [1, 'one more detail'],
    [2, 'got it'],
  ]);
});

test('an accept reads its thread once', async () => {
  const id = await sendHandoff(relay, aliceKey, 'bob@acme', 'take the migration');
  const accepted = await threadFinds(id, () =>
    relay.rpc(bobKey, 'tasks/update', { task_id: id, transition: 'accept' }),
  );
  expect(accepted.result.body.result).toMatchObject({ status: 'accepted' });
  // Was 2: the policy's read and the write's read.
  expect(accepted.threads).toBe(1);
  // Asked again, the accept answers what is (a repeated transition), and a sender cannot accept.
  expect((await relay.rpc(bobKey, 'tasks/update', { task_id: id, transition: 'accept' })).body.result).toMatchObject({
    status: 'accepted',
  });
  expect((await relay.rpc(aliceKey, 'tasks/update', { task_id: id, transition: 'complete' })).body.error).toBeDefined();
});

test("a list page is its threads' queries alone (what the caller has seen is on the threads), and counts each thread's unread messages", async () => {
  const carol = await relay.register({ handle: 'carol@acme' });
  const ids: string[] = [];
  for (let i = 0; i < 3; i += 1) {
    const id = await sendHandoff(relay, aliceKey, 'carol@acme', `thread ${i}`);
    for (let m = 0; m <= i; m += 1)
      await relay.rpc(aliceKey, 'message/send', { task_id: id, message: text(`note ${m}`) });
    ids.push(id);
  }
  // Carol reads the middle thread: its two messages are seen.
  await relay.rpc(carol, 'tasks/get', { task_id: ids[1] });
  const finds: string[] = [];
  const started = (event: CommandStartedEvent) => {
    if (event.commandName === 'find') finds.push(event.command.find);
  };
  relay.store.db.client.on('commandStarted', started);
  let page;
  try {
    page = (await relay.rpc(carol, 'tasks/list', { filter: { role: 'recipient' } })).body.result;
  } finally {
    relay.store.db.client.off('commandStarted', started);
  }
  // The received threads and the unclaimed ones offered to Carol: two queries on the threads' indexes, nothing else.
  expect(finds).toEqual(['threads', 'threads']);
  const unread = Object.fromEntries(
    page.items.map((item: { thread_id: string; unread_messages: number }) => [item.thread_id, item.unread_messages]),
  );
  expect([unread[ids[0]!], unread[ids[1]!], unread[ids[2]!]]).toEqual([1, 0, 3]);
});
