// A2A v1.0 streaming driven by @a2a-js/sdk's client against a real relay: SendStreamingMessage yields the new task
// and then a status update per thread event until the handoff is finished; SubscribeToTask does the same for a task
// that exists. Updates come from the caller's event log, so the other side's actions on any surface show up.
import { randomUUID } from 'node:crypto';
import { Role, TaskState, type Message, type Part, type StreamResponse } from '@a2a-js/sdk';
import {
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransportFactory,
  createAuthenticatingFetchWithRetry,
  type Client,
} from '@a2a-js/sdk/client';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { sendHandoff, text as wireText } from '../helpers/handoffs';
import { waitUntil } from '../helpers/wait-until';

let relay: TestRelay;
let alice: string;
let bob: string;
let carol: string;

beforeAll(async () => {
  relay = await startTestRelay({ name: 'a2a_streaming' });
  [alice, bob, carol] = await Promise.all(
    ['alice@acme', 'bob@acme', 'carol@acme'].map((handle) => relay.register({ handle })),
  );
});

afterAll(async () => {
  await relay?.stop();
});

async function client(apiKey: string): Promise<Client> {
  const fetchImpl = createAuthenticatingFetchWithRetry(fetch, {
    headers: async () => ({ Authorization: `Bearer ${apiKey}` }),
    shouldRetryWithHeaders: async () => undefined,
  });
  const options = ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl })],
  });
  return new ClientFactory(options).createFromUrl(relay.url);
}

const text = (value: string): Part => ({
  content: { $case: 'text', value },
  metadata: undefined,
  filename: '',
  mediaType: '',
});
const message = (summary: string): Message => ({
  messageId: randomUUID(),
  contextId: '',
  taskId: '',
  role: Role.ROLE_USER,
  parts: [text(summary)],
  metadata: { recipient: 'bob@acme', intent: 'inform' },
  extensions: [],
  referenceTaskIds: [],
});

/** Reads a stream in the background into `into`; resolves when the server ends it. */
async function collect(stream: AsyncGenerator<StreamResponse>, into: StreamResponse[]): Promise<void> {
  for await (const item of stream) into.push(item);
}

const kinds = (items: StreamResponse[]) =>
  items.map((i) =>
    i.payload?.$case === 'task'
      ? `task:${i.payload.value.status?.state}`
      : i.payload?.$case === 'statusUpdate'
        ? `update:${i.payload.value.status?.state}`
        : i.payload?.$case,
  );

test('the agent card says streaming is on', async () => {
  const card = await (await fetch(`${relay.url}/.well-known/agent-card.json`)).json();
  expect(card.capabilities).toMatchObject({ streaming: true });
});

test('SendStreamingMessage: the task, then one update per event of the thread, ending when it completes', async () => {
  const sdk = await client(alice);
  const items: StreamResponse[] = [];
  const done = collect(
    sdk.sendMessageStream({
      tenant: '',
      message: message('streamed handoff'),
      configuration: undefined,
      metadata: undefined,
    }),
    items,
  );
  await waitUntil(async () => items.length >= 1, 'the task');
  const task = items[0]!.payload;
  expect(task?.$case).toBe('task');
  const id = task?.$case === 'task' ? task.value.id : '';
  expect(task?.$case === 'task' && task.value.status?.state).toBe(TaskState.TASK_STATE_SUBMITTED);

  expect((await relay.rpc(bob, 'tasks/update', { task_id: id, transition: 'accept' })).body.result.status).toBe(
    'accepted',
  );
  await waitUntil(async () => items.length >= 2, 'the accept');
  expect(
    (await relay.rpc(bob, 'message/send', { task_id: id, message: wireText('halfway') })).body.result.sequence_no,
  ).toBe(1);
  expect(
    (await relay.rpc(bob, 'tasks/update', { task_id: id, transition: 'complete', result_summary: 'all done' })).body
      .result.status,
  ).toBe('completed');
  await done;

  expect(kinds(items)).toEqual([
    'task:' + TaskState.TASK_STATE_SUBMITTED,
    ...[TaskState.TASK_STATE_WORKING, TaskState.TASK_STATE_WORKING, TaskState.TASK_STATE_COMPLETED].map(
      (s) => `update:${s}`,
    ),
  ]);
  const updates = items.slice(1).map((i) => (i.payload?.$case === 'statusUpdate' ? i.payload.value : undefined));
  expect(updates.map((u) => u?.taskId)).toEqual([id, id, id]);
  expect(updates.map((u) => (u?.metadata as any)?.handoff_event?.type)).toEqual([
    'thread.accepted',
    'thread.message',
    'thread.completed',
  ]);
  expect((updates[2]?.metadata as any)?.handoff_event).toMatchObject({ by: 'bob@acme', via: 'a2a' });
  expect(updates[2]?.status?.message?.parts[0]?.content).toEqual({ $case: 'text', value: 'all done' });
});

test("SubscribeToTask: the task as it is now, then its updates (not other threads'), until it is cancelled", async () => {
  const id = await sendHandoff(relay, alice, 'bob@acme', 'subscribe to me');
  await relay.rpc(bob, 'tasks/update', { task_id: id, transition: 'accept' });
  // Bob (the recipient) subscribes: the other party's messages and the sender's cancel reach him.
  const sdk = await client(bob);
  const items: StreamResponse[] = [];
  const done = collect(sdk.resubscribeTask({ tenant: '', id }), items);
  await waitUntil(async () => items.length >= 1, 'the task');
  expect(kinds(items)).toEqual([`task:${TaskState.TASK_STATE_WORKING}`]);

  await sendHandoff(relay, alice, 'bob@acme', 'another thread');
  await relay.rpc(alice, 'message/send', { task_id: id, message: wireText('any news?') });
  await relay.rpc(alice, 'tasks/cancel', { task_id: id, reason: 'not needed' });
  await done;
  expect(kinds(items)).toEqual([
    `task:${TaskState.TASK_STATE_WORKING}`,
    `update:${TaskState.TASK_STATE_WORKING}`,
    `update:${TaskState.TASK_STATE_CANCELED}`,
  ]);
});

test('SendStreamingMessage without a recipient: the task, input required, and the stream ends there', async () => {
  const sdk = await client(alice);
  const items: StreamResponse[] = [];
  const plain: Message = { ...message('to whom?'), metadata: undefined };
  await collect(
    sdk.sendMessageStream({ tenant: '', message: plain, configuration: undefined, metadata: undefined }),
    items,
  );
  expect(kinds(items)).toEqual([`task:${TaskState.TASK_STATE_INPUT_REQUIRED}`]);
});

test('SubscribeToTask refuses a finished task (UnsupportedOperationError), a stranger and an unknown id (TaskNotFoundError) before any stream opens', async () => {
  const id = await sendHandoff(relay, alice, 'bob@acme', 'finished');
  await relay.rpc(alice, 'tasks/cancel', { task_id: id });
  const failure = async (key: string, params: any) => {
    const sdk = await client(key);
    try {
      for await (const _ of sdk.resubscribeTask(params)) throw new Error('no event expected');
    } catch (error) {
      return error as { name: string; message: string; envelopeCode?: number; data?: { code?: string } };
    }
    throw new Error('expected a refusal');
  };
  // A2A's codes (the SDK's error classes), the relay's meaning in data.code.
  expect(await failure(bob, { tenant: '', id })).toMatchObject({
    name: 'UnsupportedOperationError',
    envelopeCode: -32004,
    data: { code: 'thread_terminal' },
  });
  const open = await sendHandoff(relay, alice, 'bob@acme', 'not yours');
  expect(await failure(carol, { tenant: '', id: open })).toMatchObject({
    name: 'TaskNotFoundError',
    envelopeCode: -32001,
    data: { code: 'not_a_participant' },
  });
  expect(await failure(bob, { tenant: '', id: 'nope' })).toMatchObject({
    name: 'TaskNotFoundError',
    envelopeCode: -32001,
    data: { code: 'thread_not_found' },
  });
});
