// What reading a thread's messages costs on FerretDB, counted on the driver's command monitoring: tasks/get reads
// the thread's blocks of 16, 64 and 256 (`message_blocks`) and its tail from the thread itself, not one `messages`
// read per message; a block or tail that is missing (older threads, a writer that stopped, big messages) still
// reads right, and is written by the reader that had to read its parts.
import type { CommandStartedEvent } from 'mongodb';
import { blockId } from '../../relay-core/store/message-blocks';
import type { MessageDoc } from '../../relay-core/domain/documents';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { sendHandoff, text } from '../helpers/handoffs';
import { testMongoUrl } from '../helpers/test-env';

let relay: TestRelay;
let alice: string;
let bob: string;

beforeAll(async () => {
  const url = new URL(testMongoUrl());
  url.searchParams.set('monitorCommands', 'true');
  relay = await startTestRelay({ name: 'message_blocks', env: { MONGODB_URL: url.toString() } });
  alice = await relay.register({ handle: 'alice@acme' });
  bob = await relay.register({ handle: 'bob@acme' });
});

afterAll(async () => {
  await relay?.stop();
});

/** Runs `work` and counts the read commands (find/getMore/aggregate/count) the store's client sends meanwhile, by collection. */
async function reads<T>(work: () => Promise<T>): Promise<{ result: T; reads: Record<string, number> }> {
  const client = relay.store.db.client;
  const counted: Record<string, number> = {};
  const started = (event: CommandStartedEvent) => {
    if (!['find', 'getMore', 'aggregate', 'count'].includes(event.commandName)) return;
    const name = String(event.commandName === 'getMore' ? event.command.collection : event.command[event.commandName]);
    counted[name] = (counted[name] ?? 0) + 1;
  };
  client.on('commandStarted', started);
  try {
    return { result: await work(), reads: counted };
  } finally {
    client.off('commandStarted', started);
  }
}

async function append(id: string, n: number, body: (i: number) => string = (i) => `message ${i}`, extra: (i: number) => object = () => ({})): Promise<void> {
  for (let i = 0; i < n; i += 1) {
    const answer = await relay.rpc(i % 2 ? alice : bob, 'message/send', { task_id: id, message: text(body(i)), ...extra(i) });
    if (!answer.body.result) throw new Error(`append failed: ${JSON.stringify(answer.body)}`);
  }
}

const getThread = async (id: string) => (await relay.rpc(alice, 'tasks/get', { task_id: id })).body.result;

/** The messages as stored (one `_id` read each), as tasks/get shows them. */
async function stored(id: string, count: number) {
  const docs = await Promise.all(Array.from({ length: count }, (_, i) => relay.store.messages.findOne({ _id: `${id}:${i + 1}` })));
  return docs.map((m) => ({ id: m!.id, sequence_no: m!.sequence_no, from: m!.from, body: m!.body, payload: m!.payload, artifacts: m!.artifacts, via: m!.via, created_at: m!.created_at.toISOString() }));
}

const blockReads = (counted: Record<string, number>) => ({ messages: counted.messages ?? 0, message_blocks: counted.message_blocks ?? 0 });

test('tasks/get reads 2 blocks and no message by itself with 40 messages, 3 with 200; a missing block of 64 is read from its 4 parts and written again', async () => {
  expect(relay.store.capabilities.kind).toBe('ferretdb');
  const id = await sendHandoff(relay, alice, 'bob@acme', 'a long conversation');
  await append(id, 40);

  const forty = await reads(() => getThread(id));
  expect(forty.result.messages).toEqual(await stored(id, 40));
  // 1..16 and 17..32 from their blocks, 33..40 from the thread document tasks/get reads anyway.
  expect(blockReads(forty.reads)).toEqual({ messages: 0, message_blocks: 2 });

  await append(id, 160);
  const many = await reads(() => getThread(id));
  expect(many.result.messages).toEqual(await stored(id, 200));
  expect(many.result.messages.map((m: { sequence_no: number }) => m.sequence_no)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
  // Three blocks of 64 hold 1..192, the thread 193..200.
  expect(blockReads(many.reads)).toEqual({ messages: 0, message_blocks: 3 });

  // As if the append that completed 65..128 had stopped before writing that block of 64.
  const lost = await relay.store.messageBlocks.findOne({ _id: blockId(id, 1, 1) });
  expect(lost!.messages.map((m) => m.sequence_no)).toEqual(Array.from({ length: 64 }, (_, i) => i + 65));
  await relay.store.messageBlocks.deleteOne({ _id: blockId(id, 1, 1) });
  const fallback = await reads(() => getThread(id));
  expect(fallback.result.messages).toEqual(many.result.messages);
  expect(blockReads(fallback.reads)).toEqual({ messages: 0, message_blocks: 3 + 4 });
  expect(await relay.store.messageBlocks.findOne({ _id: blockId(id, 1, 1) })).toEqual({ ...lost, at: expect.any(Date) });
  expect(blockReads((await reads(() => getThread(id))).reads)).toEqual({ messages: 0, message_blocks: 3 });
});

test('a thread whose blocks and tail are missing (older threads, a writer that stopped before its block) reads the same, and writes the blocks it had to read message by message', async () => {
  const id = await sendHandoff(relay, alice, 'bob@acme', 'blocks lost');
  await append(id, 36);
  const before = await getThread(id);
  expect(before.messages).toEqual(await stored(id, 36));

  // As a thread from before blocks: no block documents, nothing carried on the thread.
  await relay.store.messageBlocks.deleteMany({ thread_id: id });
  await relay.store.writeThread(id, ({ recent_messages: _tail, ...doc }) => doc);
  expect((await relay.store.readThread(id))!.recent_messages).toBeUndefined();

  const healing = await reads(() => getThread(id));
  expect(healing.result.messages).toEqual(before.messages);
  // Blocks 0 and 1 are read whole by `_id` and written; 33..36 are read by `_id`.
  expect(blockReads(healing.reads)).toEqual({ messages: 36, message_blocks: 2 });
  const block1 = await relay.store.messageBlocks.findOne({ _id: blockId(id, 0, 1) });
  expect(block1!.messages.map((m) => m.body)).toEqual(before.messages.slice(16, 32).map((m: { body: string }) => m.body));

  const healed = await reads(() => getThread(id));
  expect(healed.result.messages).toEqual(before.messages);
  expect(blockReads(healed.reads)).toEqual({ messages: 4, message_blocks: 2 });
});

test('a message whose thread write never landed is counted by the next append and read with the others', async () => {
  const id = await sendHandoff(relay, alice, 'bob@acme', 'a writer died');
  await append(id, 15);
  // What a process killed between inserting message 16 and counting it on the thread leaves behind.
  const orphan: MessageDoc = {
    _id: `${id}:16`,
    id: 'orphan-message',
    thread_id: id,
    sequence_no: 16,
    from: 'bob@acme',
    body: 'written, never counted',
    payload: {},
    artifacts: [],
    via: 'a2a',
    created_at: new Date(Date.now() - 60_000),
  };
  await relay.store.messages.insertOne(orphan);
  expect((await getThread(id)).messages).toHaveLength(15);

  const next = await relay.rpc(alice, 'message/send', { task_id: id, message: text('after the orphan') });
  expect(next.body.result.sequence_no).toBe(17);
  const thread = await getThread(id);
  expect(thread.messages).toEqual(await stored(id, 17));
  expect(thread.messages[15].body).toBe('written, never counted');
  // The roll-forward completed block 0, so it was written with the orphan in it.
  const block0 = await relay.store.messageBlocks.findOne({ _id: blockId(id, 0, 0) });
  expect(block0!.messages.map((m) => m.sequence_no)).toEqual(Array.from({ length: 16 }, (_, i) => i + 1));
  expect(block0!.messages[15]!.body).toBe('written, never counted');
});

test('messages too big to carry on the thread or in a block are read by their own `_id`, and read right', async () => {
  const id = await sendHandoff(relay, alice, 'bob@acme', 'big messages');
  // 5 KB is past what the thread carries; 300 KB (three 100 KB diffs) past what a block holds.
  const diffs = Array.from({ length: 3 }, (_, i) => ({ type: 'file_diff', path: `src/${i}.ts`, diff: 'd'.repeat(100_000) }));
  await append(id, 20, (i) => (i % 4 === 0 ? `${i} ${'t'.repeat(5_000)}` : `small ${i}`), (i) => (i === 3 ? { artifacts: diffs } : {}));
  const thread = (await relay.store.readThread(id))!;
  expect(thread.recent_messages!.map((m) => m.sequence_no)).toEqual([18, 19, 20]);
  const counted = await reads(() => getThread(id));
  expect(counted.result.messages).toEqual(await stored(id, 20));
  // Message 4 (300 KB) from its own `_id`, 17 (5 KB) too; the rest from block 0 and the thread.
  expect(blockReads(counted.reads)).toEqual({ messages: 2, message_blocks: 1 });
});

test('40 concurrent appends get dense sequence numbers, and the blocks hold exactly those messages', async () => {
  const id = await sendHandoff(relay, alice, 'bob@acme', 'concurrent');
  const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => relay.rpc(i % 2 ? alice : bob, 'message/send', { task_id: id, message: text(`c${i}`) })));
  expect(answers.filter((a) => a.body.error).map((a) => a.body.error)).toEqual([]);
  expect(answers.map((a) => a.body.result.sequence_no).sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
  const messages = await Promise.all(Array.from({ length: 40 }, (_, i) => relay.store.messages.findOne({ _id: `${id}:${i + 1}` })));
  const blocks = await Promise.all([0, 1, 2].map((k) => relay.store.messageBlocks.findOne({ _id: blockId(id, 0, k) })));
  expect(blocks[0]!.messages).toEqual(messages.slice(0, 16));
  expect(blocks[1]!.messages).toEqual(messages.slice(16, 32));
  expect(blocks[2]).toBeNull();
  expect((await relay.store.readThread(id))!.recent_messages).toEqual(messages.slice(32));
  expect(new Set((await getThread(id)).messages.map((m: { body: string }) => m.body)).size).toBe(40);
});
