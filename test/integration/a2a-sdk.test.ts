// @a2a-js/sdk clients against a real relay (FerretDB + Redis): the agent card, v1.0 SendMessage / GetTask /
// CancelTask and the v0.3 message/send / tasks/get / tasks/cancel mapped onto handoffs, beside the wire methods.
import { randomUUID } from 'node:crypto';
import { AgentCard, Role, TaskState, type Message, type Part, type Task } from '@a2a-js/sdk';
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  createAuthenticatingFetchWithRetry,
  type Client,
} from '@a2a-js/sdk/client';
import { parseLegacyAgentCard } from '@a2a-js/sdk/compat/v0_3/client';
import { inboxUrlOf, startTestRelay, type TestRelay } from '../helpers/relay-harness';

let relay: TestRelay;
let alice: string;
let bob: string;
let carol: string;

/** Every JSON-RPC request the SDK clients sent, as they sent it. */
const sent: Array<{ method: string; params: any; headers: Headers }> = [];

beforeAll(async () => {
  relay = await startTestRelay({ name: 'a2a_sdk' });
  alice = await relay.register({ handle: 'alice@acme', name: 'Alice', role: 'backend' });
  bob = await relay.register({ handle: 'bob@acme', name: 'Bob', role: 'frontend' });
  carol = await relay.register({ handle: 'carol@acme', name: 'Carol', role: 'frontend' });
});

afterAll(async () => {
  await relay?.stop();
});

/** The SDK's own auth hook: a fetch that adds `Authorization: Bearer <key>` to every request. */
function bearerFetch(apiKey: string): typeof fetch {
  const recording: typeof fetch = async (input, init) => {
    if (typeof init?.body === 'string') {
      const body = JSON.parse(init.body) as { method: string; params: unknown };
      sent.push({ method: body.method, params: body.params, headers: new Headers(init.headers) });
    }
    return fetch(input, init);
  };
  return createAuthenticatingFetchWithRetry(recording, {
    headers: async () => ({ Authorization: `Bearer ${apiKey}` }),
    shouldRetryWithHeaders: async () => undefined,
  });
}

/** A v1.0 client the way the SDK documents it: createFromUrl reads /.well-known/agent-card.json. */
async function v1Client(apiKey: string): Promise<Client> {
  const options = ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl: bearerFetch(apiKey) })],
  });
  return new ClientFactory(options).createFromUrl(relay.url);
}

/** The card as a client of one protocol version asks for it (a v0.3 client says `A2A-Version: 0.3`). */
async function cardJson(version?: string): Promise<Record<string, unknown>> {
  const response = await fetch(`${relay.url}/.well-known/agent-card.json`, {
    headers: version ? { 'A2A-Version': version } : {},
  });
  expect(response.status).toBe(200);
  return response.json();
}

/** A v0.3 client: the v0.3 card (url, preferredTransport, protocolVersion, type-tagged security) and the compat transport. */
async function v03Client(apiKey: string): Promise<Client> {
  const raw = await cardJson('0.3');
  const factory = new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl: bearerFetch(apiKey), legacyCompat: { enabled: true } })],
  });
  return factory.createFromAgentCard(parseLegacyAgentCard(raw));
}

const text = (value: string): Part => ({
  content: { $case: 'text', value },
  metadata: undefined,
  filename: '',
  mediaType: '',
});
const data = (value: Record<string, unknown>): Part => ({
  content: { $case: 'data', value },
  metadata: undefined,
  filename: '',
  mediaType: 'application/json',
});

function message(parts: Part[], metadata?: Record<string, unknown>, messageId: string = randomUUID()): Message {
  return {
    messageId,
    contextId: '',
    taskId: '',
    role: Role.ROLE_USER,
    parts,
    metadata,
    extensions: [],
    referenceTaskIds: [],
  };
}

async function send(client: Client, msg: Message): Promise<Task> {
  const result = await client.sendMessage({ tenant: '', message: msg, configuration: undefined, metadata: undefined });
  if (!('status' in result)) throw new Error(`expected a Task, got ${JSON.stringify(result)}`);
  return result;
}

const getTask = (client: Client, id: string) => client.getTask({ tenant: '', id });
const cancelTask = (client: Client, id: string) => client.cancelTask({ tenant: '', id, metadata: undefined });

interface SdkError {
  name: string;
  message: string;
  envelopeCode: number;
  data: { code: string; request_id: string };
}

async function failure(call: Promise<unknown>): Promise<SdkError> {
  try {
    await call;
  } catch (error) {
    return error as SdkError;
  }
  throw new Error('expected the call to fail');
}

async function wireThread(apiKey: string, taskId: string) {
  const { body } = await relay.rpc(apiKey, 'tasks/get', { task_id: taskId });
  if (!body.result) throw new Error(`tasks/get failed: ${JSON.stringify(body.error)}`);
  return body.result;
}

const threadCount = () => relay.store.threads.countDocuments();

describe('v1.0 ClientFactory (@a2a-js/sdk/client)', () => {
  let client: Client;

  beforeAll(async () => {
    client = await v1Client(alice);
  });

  test('createFromUrl reads the card and picks the JSON-RPC 1.0 interface at /a2a', () => {
    expect(client.protocolVersion).toBe('1.0');
  });

  test('SendMessage with metadata recipient + intent creates a pending handoff', async () => {
    const msg = message(
      [text('I refactored /users: it now returns { items, next_cursor }.'), text('Deployed to staging.')],
      {
        recipient: 'bob@acme',
        intent: 'inform',
        sprint: 12,
      },
    );
    const task = await send(client, msg);

    const request = sent[sent.length - 1]!;
    expect(request.method).toBe('SendMessage');
    expect(request.headers.get('a2a-version')).toBe('1.0');
    expect(request.headers.get('authorization')).toBe(`Bearer ${alice}`);
    expect(request.params.message).toEqual({
      messageId: msg.messageId,
      role: 'ROLE_USER',
      parts: [
        { text: 'I refactored /users: it now returns { items, next_cursor }.' },
        { text: 'Deployed to staging.' },
      ],
      metadata: { recipient: 'bob@acme', intent: 'inform', sprint: 12 },
    });

    expect(task.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(task.contextId).toBe(task.id);
    expect(task.status?.state).toBe(TaskState.TASK_STATE_SUBMITTED);
    expect(task.status?.timestamp).toMatch(/^\d{4}-\d\d-\d\dT.*Z$/);
    expect(task.history[0]?.role).toBe(Role.ROLE_USER);
    expect(task.history[0]?.parts[0]?.content).toEqual({
      $case: 'text',
      value: 'I refactored /users: it now returns { items, next_cursor }.\n\nDeployed to staging.',
    });
    expect(task.metadata).toMatchObject({
      handoff: { thread_id: task.id, status: 'pending', sender: 'alice@acme', recipient: 'bob@acme' },
    });

    const thread = await wireThread(bob, task.id);
    expect(thread).toMatchObject({
      thread_id: task.id,
      status: 'pending',
      intent: 'inform',
      summary: 'I refactored /users: it now returns { items, next_cursor }.\n\nDeployed to staging.',
      sender: { handle: 'alice@acme' },
      recipient: { handle: 'bob@acme', name: 'Bob' },
      metadata: { sprint: 12 },
    });
    expect(thread.metadata).not.toHaveProperty('recipient');
    expect(thread.status_history[0]).toMatchObject({ status: 'pending', via: 'a2a' });
  });

  test('a data part carries recipient, intent, question and artifacts', async () => {
    const task = await send(
      client,
      message([
        text('Should /search support cursors?'),
        data({
          recipient: 'bob@acme',
          intent: 'ask_question',
          question: 'Cursor or offset?',
          artifacts: [{ type: 'file_ref', path: 'services/api/search.ts', lines: '1-20' }],
        }),
      ]),
    );
    expect(sent[sent.length - 1]!.params.message.parts[1]).toEqual({
      data: expect.objectContaining({ recipient: 'bob@acme', intent: 'ask_question' }),
      mediaType: 'application/json',
    });
    expect(await wireThread(bob, task.id)).toMatchObject({
      intent: 'ask_question',
      question: 'Cursor or offset?',
      summary: 'Should /search support cursors?',
      artifacts: [{ type: 'file_ref', path: 'services/api/search.ts', lines: '1-20' }],
    });
    expect(task.history[0]?.parts[1]?.content).toEqual({
      $case: 'data',
      value: expect.objectContaining({ recipient: 'bob@acme', intent: 'ask_question', question: 'Cursor or offset?' }),
    });
  });

  test('GetTask follows the thread: submitted, working after accept, completed with the result artifact', async () => {
    const created = await send(
      client,
      message([text('Please review the pagination change')], { recipient: 'bob@acme', intent: 'inform' }),
    );
    expect((await getTask(client, created.id)).status?.state).toBe(TaskState.TASK_STATE_SUBMITTED);
    expect(sent[sent.length - 1]).toMatchObject({ method: 'GetTask', params: { id: created.id } });

    const accept = await relay.rpc(bob, 'tasks/update', { task_id: created.id, transition: 'accept' });
    expect(accept.body.result).toMatchObject({ status: 'accepted' });
    const working = await getTask(client, created.id);
    expect(working.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    expect(working.metadata).toMatchObject({ handoff: { status: 'accepted' } });

    await relay.rpc(bob, 'tasks/update', {
      task_id: created.id,
      transition: 'complete',
      result_summary: 'Looks good, merged',
      artifacts: [{ type: 'link', url: 'https://example.com/pr/9' }],
    });
    const done = await getTask(await v1Client(bob), created.id);
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(done.status?.message?.parts[0]?.content).toEqual({ $case: 'text', value: 'Looks good, merged' });
    expect(done.artifacts).toHaveLength(1);
    expect(done.artifacts[0]?.parts.map((p) => p.content)).toEqual([
      { $case: 'text', value: 'Looks good, merged' },
      { $case: 'data', value: { artifacts: [{ type: 'link', url: 'https://example.com/pr/9' }] } },
    ]);
  });

  test('CancelTask: the sender cancels; the recipient gets TaskNotCancelableError, outsiders TaskNotFoundError', async () => {
    const created = await send(
      client,
      message([text('Never mind this one')], { recipient: 'bob@acme', intent: 'inform' }),
    );

    // A2A's own codes on the v1.0 methods, which the SDK turns into its error classes; data.code keeps the relay's meaning.
    const byRecipient = await failure(cancelTask(await v1Client(bob), created.id));
    expect(byRecipient).toMatchObject({
      name: 'TaskNotCancelableError',
      envelopeCode: -32002,
      data: { code: 'not_authorized_transition' },
    });
    expect(byRecipient.message).toMatch(/Only the sender \(alice@acme\) can cancel/);
    const byOutsider = await failure(cancelTask(await v1Client(carol), created.id));
    expect(byOutsider).toMatchObject({
      name: 'TaskNotFoundError',
      envelopeCode: -32001,
      data: { code: 'not_a_participant' },
    });

    const canceled = await cancelTask(client, created.id);
    expect(sent[sent.length - 1]).toMatchObject({ method: 'CancelTask', params: { id: created.id } });
    expect(canceled.id).toBe(created.id);
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect(await wireThread(alice, created.id)).toMatchObject({
      status: 'cancelled',
      cancelled_at: expect.any(String),
    });

    // Cancelling again as the sender is answered with the current state, and changes nothing.
    const again = await cancelTask(client, created.id);
    expect(again.status).toEqual(canceled.status);
  });

  test('a retried send with the same messageId returns the same task and stores one thread', async () => {
    const msg = message([text('Retry me')], { recipient: 'bob@acme', intent: 'inform' });
    const before = await threadCount();
    const first = await send(client, msg);
    const retries = await Promise.all(Array.from({ length: 5 }, () => send(client, msg)));
    expect(retries.every((t) => t.id === first.id)).toBe(true);
    expect(await threadCount()).toBe(before + 1);

    const changed = await failure(send(client, { ...msg, parts: [text('Another body')] }));
    expect(changed).toMatchObject({ envelopeCode: -32011, data: { code: 'duplicate_idempotency_key' } });
    expect(await threadCount()).toBe(before + 1);
  });
});

describe('v0.3 compat client (@a2a-js/sdk/compat/v0_3/client, LegacyJsonRpcTransport)', () => {
  let client: Client;

  beforeAll(async () => {
    client = await v03Client(alice);
  });

  test('the card read as v0.3 selects the legacy JSON-RPC transport', () => {
    expect(client.protocolVersion).toBe('0.3');
  });

  test('message/send with kind-tagged parts and a data part creates the handoff; get and cancel follow it', async () => {
    const msg = message([
      text('The /users response changed shape.'),
      data({ recipient: 'bob@acme', intent: 'inform' }),
    ]);
    const before = await threadCount();
    const task = await send(client, msg);

    const request = sent[sent.length - 1]!;
    expect(request.method).toBe('message/send');
    expect(request.headers.get('a2a-version')).toBe('0.3');
    expect(request.params.message).toEqual({
      kind: 'message',
      messageId: msg.messageId,
      role: 'user',
      parts: [
        { kind: 'text', text: 'The /users response changed shape.' },
        { kind: 'data', data: { recipient: 'bob@acme', intent: 'inform' } },
      ],
    });
    expect(task.status?.state).toBe(TaskState.TASK_STATE_SUBMITTED);
    expect(task.contextId).toBe(task.id);
    expect(await threadCount()).toBe(before + 1);
    expect(await wireThread(bob, task.id)).toMatchObject({
      status: 'pending',
      intent: 'inform',
      summary: 'The /users response changed shape.',
    });

    // The raw v0.3 answer, replayed with the same messageId: the same task, kind-tagged.
    const replay = await relay.rpc(alice, 'message/send', request.params);
    expect(replay.body.result).toMatchObject({
      kind: 'task',
      id: task.id,
      contextId: task.id,
      status: { state: 'submitted', timestamp: expect.any(String) },
      history: [{ kind: 'message', role: 'user', parts: [{ kind: 'text' }, { kind: 'data' }] }],
    });
    expect(await threadCount()).toBe(before + 1);

    expect((await getTask(client, task.id)).status?.state).toBe(TaskState.TASK_STATE_SUBMITTED);
    expect(sent[sent.length - 1]).toMatchObject({ method: 'tasks/get', params: { id: task.id } });
    await relay.rpc(bob, 'tasks/update', { task_id: task.id, transition: 'accept' });
    expect((await getTask(client, task.id)).status?.state).toBe(TaskState.TASK_STATE_WORKING);

    const byRecipient = await failure(cancelTask(await v03Client(bob), task.id));
    expect(byRecipient).toMatchObject({ envelopeCode: -32009, data: { code: 'not_authorized_transition' } });
    const canceled = await cancelTask(client, task.id);
    expect(sent[sent.length - 1]).toMatchObject({ method: 'tasks/cancel', params: { id: task.id } });
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect((await wireThread(bob, task.id)).status).toBe('cancelled');
  });

  test('metadata works on v0.3 too, and a message without a recipient waits for one (input-required)', async () => {
    const task = await send(client, message([text('Heads up')], { recipient: 'carol@acme', intent: 'inform' }));
    expect((await wireThread(carol, task.id)).recipient.handle).toBe('carol@acme');
    const waiting = await send(client, message([text('to whom?')], { intent: 'inform' }));
    expect(waiting.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const raw = await relay.rpc(alice, 'tasks/get', { id: waiting.id });
    expect(raw.body.result).toMatchObject({
      kind: 'task',
      id: waiting.id,
      status: { state: 'input-required', message: { kind: 'message', role: 'agent' } },
    });
  });
});

describe("multi-turn: a message with the task's taskId or contextId appends to its thread", () => {
  const follow = (
    parts: Part[],
    ids: { taskId?: string; contextId?: string },
    metadata?: Record<string, unknown>,
    messageId?: string,
  ): Message => ({
    ...message(parts, metadata, messageId),
    taskId: ids.taskId ?? '',
    contextId: ids.contextId ?? '',
  });

  test('either participant writes into the task through the SDK; a retried messageId appends once', async () => {
    const sender = await v1Client(alice);
    const task = await send(
      sender,
      message([text('Please look at the /users change')], { recipient: 'bob@acme', intent: 'inform' }),
    );
    const threads = await threadCount();

    const more = follow(
      [
        text('It also renames next to next_cursor.'),
        data({ artifacts: [{ type: 'link', url: 'https://example.com/pr/12' }] }),
      ],
      { taskId: task.id, contextId: task.id },
    );
    const after = await send(sender, more);
    expect(after.id).toBe(task.id);
    expect(after.history.map((m) => [m.role, m.parts[0]?.content])).toEqual([
      [Role.ROLE_USER, { $case: 'text', value: 'Please look at the /users change' }],
      [Role.ROLE_USER, { $case: 'text', value: 'It also renames next to next_cursor.' }],
    ]);
    // The recipient answers in the same context (contextId alone names the task); it reads back as the agent's turn.
    const answer = await send(
      await v1Client(bob),
      follow([text('Seen, will update the client')], { contextId: task.id }),
    );
    expect(answer.history.map((m) => m.role)).toEqual([Role.ROLE_USER, Role.ROLE_USER, Role.ROLE_AGENT]);
    // The same messageId again: the same answer, nothing appended twice.
    await send(sender, more);
    const thread = await wireThread(alice, task.id);
    expect(thread.messages.map((m: { from: string; body: string }) => [m.from, m.body])).toEqual([
      ['alice@acme', 'It also renames next to next_cursor.'],
      ['bob@acme', 'Seen, will update the client'],
    ]);
    expect(thread.messages[0].artifacts).toEqual([{ type: 'link', url: 'https://example.com/pr/12' }]);
    expect(thread.status).toBe('pending');
    expect(await threadCount()).toBe(threads);
  });

  test('an unknown task, a stranger, a finished task and handoff fields are refused as A2A errors, and append nothing', async () => {
    const sender = await v1Client(alice);
    const task = await send(sender, message([text('Short-lived')], { recipient: 'bob@acme', intent: 'inform' }));
    const messages = async () => (await wireThread(alice, task.id)).messages.length;

    expect(await failure(send(sender, follow([text('hello?')], { taskId: randomUUID() })))).toMatchObject({
      name: 'TaskNotFoundError',
      envelopeCode: -32001,
    });
    expect(await failure(send(sender, follow([text('hello?')], { contextId: 'a-context-of-my-own' })))).toMatchObject({
      name: 'TaskNotFoundError',
    });
    expect(await failure(send(await v1Client(carol), follow([text('let me in')], { taskId: task.id })))).toMatchObject({
      name: 'TaskNotFoundError',
      data: { code: 'not_a_participant' },
    });
    const reroute = await failure(
      send(sender, follow([text('to carol instead')], { taskId: task.id }, { recipient: 'carol@acme' })),
    );
    expect(reroute).toMatchObject({ envelopeCode: -32602 });
    expect(reroute.message).toMatch(/^params\.message\.metadata\.recipient: is set when the handoff is made/);
    const mismatch = await failure(
      send(sender, follow([text('which one?')], { taskId: task.id, contextId: randomUUID() })),
    );
    expect(mismatch.message).toMatch(/^params\.message\.contextId: must be the task's own context/);
    expect((await failure(send(sender, follow([data({ artifacts: [] })], { taskId: task.id })))).message).toMatch(
      /^params\.message\.parts: needs a text part/,
    );
    expect(await messages()).toBe(0);

    await cancelTask(sender, task.id);
    expect(await failure(send(sender, follow([text('one more')], { taskId: task.id })))).toMatchObject({
      name: 'UnsupportedOperationError',
      envelopeCode: -32004,
      data: { code: 'thread_terminal' },
    });
    expect(await messages()).toBe(0);
  });
});

describe('a task without a recipient: input required, then the next message in its context names one', () => {
  const reply = (
    parts: Part[],
    contextId: string,
    metadata?: Record<string, unknown>,
    messageId?: string,
  ): Message => ({
    ...message(parts, metadata, messageId),
    contextId,
  });
  const statusText = (task: Task) => (task.status?.message?.parts[0]?.content as { value?: string } | undefined)?.value;

  test('a plain A2A message makes a task that asks whom to hand it to; a handle as the reply makes it a handoff with the same id', async () => {
    const sender = await v1Client(alice);
    const threads = await threadCount();
    const first = message([text('The nightly build fails on the migration step.')]);
    const waiting = await send(sender, first);
    expect(waiting).toMatchObject({ contextId: waiting.id, status: { state: TaskState.TASK_STATE_INPUT_REQUIRED } });
    expect(statusText(waiting)).toMatch(
      /^Whom should I hand this to\? .*name@team.*role:<role>, skill:<skill>, owner:<path>/,
    );
    expect(waiting.status?.message?.role).toBe(Role.ROLE_AGENT);
    expect(waiting.history.map((m) => m.parts[0]?.content)).toEqual([
      { $case: 'text', value: 'The nightly build fails on the migration step.' },
    ]);
    expect(await threadCount()).toBe(threads);
    // Read back, and sent again with the same messageId: the same waiting task; nobody else sees it.
    expect((await getTask(sender, waiting.id)).status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect((await send(sender, first)).id).toBe(waiting.id);
    expect(await failure(getTask(await v1Client(bob), waiting.id))).toMatchObject({ name: 'TaskNotFoundError' });
    expect(await failure(send(await v1Client(bob), reply([text('bob@acme')], waiting.id)))).toMatchObject({
      name: 'TaskNotFoundError',
    });

    const naming = reply([text(' bob@acme ')], waiting.id);
    const handed = await send(sender, naming);
    expect(handed).toMatchObject({
      id: waiting.id,
      contextId: waiting.id,
      status: { state: TaskState.TASK_STATE_SUBMITTED },
    });
    expect(handed.metadata).toMatchObject({ handoff: { recipient: 'bob@acme', intent: 'inform' } });
    // The naming reply sent again (a client that lost the answer) changes nothing: no message "bob@acme" in the thread.
    expect((await send(sender, naming)).id).toBe(waiting.id);
    expect(await wireThread(bob, waiting.id)).toMatchObject({
      status: 'pending',
      summary: 'The nightly build fails on the migration step.',
      intent: 'inform',
      messages: [],
    });
    expect(await threadCount()).toBe(threads + 1);
    // The first message again now answers the handoff, not a new wait.
    expect((await send(sender, first)).status?.state).toBe(TaskState.TASK_STATE_SUBMITTED);
    // From here the context is the thread's: the next message appends to it.
    await send(sender, reply([text('It started after the 2.3 upgrade.')], waiting.id));
    expect((await wireThread(bob, waiting.id)).messages.map((m: { body: string }) => m.body)).toEqual([
      'It started after the 2.3 upgrade.',
    ]);
  });

  test("the reply may name a target in metadata and say more; the rest of its text is the thread's first message", async () => {
    const sender = await v1Client(alice);
    const waiting = await send(
      sender,
      message([text('Who can review the new date picker?')], {
        intent: 'ask_question',
        question: 'Who can review it?',
      }),
    );
    expect(waiting.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const naming = reply([text('Anyone on the frontend.')], waiting.id, { recipient: 'role:frontend' });
    const handed = await send(sender, naming);
    expect(handed.status?.state).toBe(TaskState.TASK_STATE_SUBMITTED);
    await send(sender, naming);
    expect(await wireThread(alice, waiting.id)).toMatchObject({
      status: 'unclaimed',
      intent: 'ask_question',
      question: 'Who can review it?',
      to_target: 'role:frontend',
      messages: [{ from: 'alice@acme', body: 'Anyone on the frontend.' }],
    });
  });

  test('what the sender said before naming the recipient becomes the first messages of the handoff', async () => {
    const sender = await v1Client(alice);
    const waiting = await send(sender, message([text('The nightly export fails')]));
    await send(sender, reply([text('It started on Monday.')], waiting.id));
    const handed = await send(sender, reply([text('bob@acme')], waiting.id));
    expect(handed.status?.state).toBe(TaskState.TASK_STATE_SUBMITTED);
    expect(await wireThread(bob, waiting.id)).toMatchObject({
      summary: 'The nightly export fails',
      messages: [{ from: 'alice@acme', body: 'It started on Monday.' }],
    });
  });

  test('a contextId the client made up is refused as no task, saying why, and creates nothing', async () => {
    const threads = await threadCount();
    const made = await relay.rpc(
      alice,
      'SendMessage',
      {
        message: {
          messageId: 'made-up-context',
          role: 'ROLE_USER',
          contextId: 'my-context-1',
          parts: [{ text: 'hi' }],
        },
      },
      { 'A2A-Version': '1.0' },
    );
    expect(made.body.error).toMatchObject({ code: -32001, data: { code: 'thread_not_found' } });
    expect(made.body.error.message).toContain('No context my-context-1: a contextId here is the id of one task');
    expect(await threadCount()).toBe(threads);
  });

  test('a reply that names nobody joins the waiting task and is asked again; nobody known is refused; a cancelled one takes no reply', async () => {
    const sender = await v1Client(alice);
    const threads = await threadCount();
    const waiting = await send(sender, message([text('Rotate the staging certificates')]));
    const vagueReply = reply([text('whoever is free')], waiting.id);
    const vague = await send(sender, vagueReply);
    expect(vague).toMatchObject({ id: waiting.id, status: { state: TaskState.TASK_STATE_INPUT_REQUIRED } });
    expect(JSON.stringify(vague.status?.message)).toContain('Whom should I hand this to?');
    expect(vague.history.map((m) => m.parts.map((p) => (p.content as { value: string }).value).join(''))).toEqual([
      'Rotate the staging certificates',
      'whoever is free',
    ]);
    expect((await send(sender, vagueReply)).history).toHaveLength(2); // sent again: nothing added
    const limited = await relay.rpc(alice, 'GetTask', { id: waiting.id, historyLength: 1 }, { 'A2A-Version': '1.0' });
    expect(limited.body.result.history).toEqual([expect.objectContaining({ parts: [{ text: 'whoever is free' }] })]);
    const unknown = await failure(send(sender, reply([text('nobody@acme')], waiting.id)));
    expect(unknown).toMatchObject({ envelopeCode: -32602, data: { code: 'recipient_not_found' } });
    expect((await getTask(sender, waiting.id)).status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(await threadCount()).toBe(threads);

    const canceled = await cancelTask(sender, waiting.id);
    expect(canceled).toMatchObject({ id: waiting.id, status: { state: TaskState.TASK_STATE_CANCELED } });
    expect(await failure(send(sender, reply([text('bob@acme')], waiting.id)))).toMatchObject({
      name: 'UnsupportedOperationError',
      envelopeCode: -32004,
    });
    expect((await getTask(sender, waiting.id)).status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect(await threadCount()).toBe(threads);
  });
});

describe('the handoff-relay wire methods beside them', () => {
  test('message/send, tasks/get with task_id and tasks/cancel with task_id answer the wire shapes unchanged', async () => {
    const created = await relay.rpc(alice, 'message/send', {
      task_id: null,
      recipient: 'bob@acme',
      intent: 'inform',
      message: { role: 'user', parts: [{ type: 'text', text: 'wire hello' }] },
    });
    expect(created.body.result).toEqual({
      task_id: expect.any(String),
      status: { state: 'pending' },
      created_at: expect.any(String),
      inbox_url: inboxUrlOf(relay.url, created.body.result.task_id, 'alice@acme'),
      recipient: 'bob@acme',
    });
    const read = await relay.rpc(bob, 'tasks/get', { task_id: created.body.result.task_id });
    expect(read.body.result).toMatchObject({
      thread_id: created.body.result.task_id,
      summary: 'wire hello',
      status: 'pending',
    });
    const cancel = await relay.rpc(alice, 'tasks/cancel', { task_id: created.body.result.task_id });
    expect(cancel.body.result).toMatchObject({ thread_id: created.body.result.task_id, status: 'cancelled' });
  });

  test('a wire message/send whose message carries kind "message" stays a wire call', async () => {
    const { body } = await relay.rpc(alice, 'message/send', {
      recipient: 'bob@acme',
      intent: 'inform',
      message: { kind: 'message', role: 'user', parts: [{ kind: 'text', text: 'hybrid' }] },
    });
    expect(body.result).toMatchObject({ status: { state: 'pending' }, recipient: 'bob@acme' });
  });
});

describe('GET /.well-known/agent-card.json', () => {
  let json: Record<string, unknown>;
  let raw: string;

  beforeAll(async () => {
    const response = await fetch(`${relay.url}/.well-known/agent-card.json`);
    expect(response.status).toBe(200);
    raw = await response.text();
    json = JSON.parse(raw);
  });

  test('parses as a v1.0 card with the SDK codec: JSON-RPC 1.0 and 0.3 at /a2a, bearer auth, the handoff skill', () => {
    const card = AgentCard.fromJSON(json);
    expect(card.supportedInterfaces).toEqual([
      { url: `${relay.url}/a2a`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
      { url: `${relay.url}/a2a`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '0.3' },
    ]);
    expect(card).toMatchObject({ name: 'handoff-relay', version: '0.1.0' });
    expect(card.capabilities).toMatchObject({ streaming: true, pushNotifications: true });
    expect(card.securitySchemes.bearer?.scheme).toMatchObject({
      $case: 'httpAuthSecurityScheme',
      value: { scheme: 'Bearer' },
    });
    expect(card.securityRequirements).toEqual([{ schemes: { bearer: { list: [] } } }]);
    expect(card.defaultInputModes).toEqual(['text/plain', 'application/json']);
    expect(card.skills.map((s) => s.id)).toEqual(['handoff']);
    expect(card.skills[0]!.description).toMatch(/recipient/);
    // Every v1.0 field survives the SDK's round trip unchanged.
    expect(json).toMatchObject(AgentCard.toJSON(card) as Record<string, unknown>);
  });

  test('one security scheme shape per protocol version: v1.0 by default, the v0.3 shape when A2A-Version: 0.3 asks', async () => {
    expect(json.securitySchemes).toEqual({
      bearer: { httpAuthSecurityScheme: expect.objectContaining({ scheme: 'Bearer' }) },
    });
    expect(json).not.toHaveProperty('security');

    const v03 = await cardJson('0.3');
    expect(v03.securitySchemes).toEqual({ bearer: expect.objectContaining({ type: 'http', scheme: 'bearer' }) });
    expect((v03.securitySchemes as { bearer: object }).bearer).not.toHaveProperty('httpAuthSecurityScheme');
    expect(v03).toMatchObject({
      url: `${relay.url}/a2a`,
      preferredTransport: 'JSONRPC',
      protocolVersion: '0.3.0',
      security: [{ bearer: [] }],
    });
    expect(v03).not.toHaveProperty('supportedInterfaces');
    expect(v03).not.toHaveProperty('securityRequirements');
    // The query parameter the spec allows instead of the header; any other version gets the v1.0 card.
    expect((await (await fetch(`${relay.url}/.well-known/agent-card.json?A2A-Version=0.3`)).json()).security).toEqual([
      { bearer: [] },
    ]);
    expect(await cardJson('1.0')).toEqual(json);
  });

  test('the same card is served under the /a2a base, where clients given the endpoint URL look (the A2A TCK)', async () => {
    const response = await fetch(`${relay.url}/a2a/.well-known/agent-card.json`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(json);
  });

  test('the v0.3 card parses with the SDK translator (which requires the v0.3 fields)', async () => {
    const legacy = parseLegacyAgentCard(await cardJson('0.3'));
    expect(legacy.supportedInterfaces).toEqual([
      { url: `${relay.url}/a2a`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '0.3.0' },
    ]);
    expect(legacy.securitySchemes.bearer?.scheme).toMatchObject({
      $case: 'httpAuthSecurityScheme',
      value: { scheme: 'bearer' },
    });
    expect(legacy.securityRequirements).toEqual([{ schemes: { bearer: { list: [] } } }]);
    expect(legacy.skills.map((s) => s.id)).toEqual(['handoff']);
  });

  test('both SDK resolvers (plain and legacyCompat) read it as v1.0', async () => {
    for (const resolver of [
      new DefaultAgentCardResolver(),
      new DefaultAgentCardResolver({ legacyCompat: { enabled: true } }),
    ]) {
      const card = await resolver.resolve(relay.url);
      expect(card.supportedInterfaces.map((i) => `${i.protocolBinding}/${i.protocolVersion}`)).toEqual([
        'JSONRPC/1.0',
        'JSONRPC/0.3',
      ]);
    }
  });

  test('needs no key and holds no secret, nothing internal and no word that reads like one, in either version', async () => {
    for (const text of [raw, JSON.stringify(await cardJson('0.3'))]) {
      for (const secret of [alice, bob, carol, relay.adminKey, relay.config.keyPepper!, relay.signingSecret]) {
        expect(text).not.toContain(secret);
      }
      expect(text).not.toMatch(/hr_[0-9a-f]{12}_/);
      expect(text).not.toMatch(/mongodb:|redis:/);
      // Words that scanners of public cards (the A2A TCK among them) flag, and the routes a card has no business naming.
      expect(text).not.toMatch(/secret|token|password|credential|private|internal|admin|debug|api[_-]key/i);
      // The only URL on it is RELAY_PUBLIC_URL's.
      const urls = [...text.matchAll(/https?:\/\/[^"\s]+/g)].map((m) => m[0]);
      expect(urls.length).toBeGreaterThan(0);
      for (const url of urls) expect(url).toBe(`${relay.config.publicUrl}/a2a`);
    }
  });
});

describe('bad input', () => {
  const sendRaw = (params: Record<string, unknown>, key = alice) => relay.rpc(key, 'SendMessage', params);
  const msg = (over: Record<string, unknown> = {}) => ({
    messageId: randomUUID(),
    role: 'ROLE_USER',
    parts: [{ text: 'hello' }],
    metadata: { recipient: 'bob@acme', intent: 'inform' },
    ...over,
  });

  test('SendMessage with a recipient but no intent is invalid_params naming the field (through the SDK)', async () => {
    const before = await threadCount();
    const error = await failure(send(await v1Client(alice), message([text('what for?')], { recipient: 'bob@acme' })));
    expect(error).toMatchObject({ envelopeCode: -32602, data: { code: 'invalid_params' } });
    expect(error.message).toMatch(/^params\.message\.metadata\.intent: required/);
    expect(await threadCount()).toBe(before);
  });

  test("an unknown recipient is InvalidParams -32602 with data.code recipient_not_found (through the SDK), not A2A's -32004", async () => {
    const before = await threadCount();
    const error = await failure(
      send(await v1Client(alice), message([text('hi')], { recipient: 'nobody@acme', intent: 'inform' })),
    );
    expect(error).toMatchObject({
      name: 'RequestMalformedError',
      envelopeCode: -32602,
      data: { code: 'recipient_not_found' },
    });
    expect(await threadCount()).toBe(before);
  });

  test.each([
    [
      'an unknown intent',
      { message: msg({ metadata: { recipient: 'bob@acme', intent: 'order' } }) },
      /^params\.message\.metadata\.intent/,
    ],
    [
      'a recipient that is not a handle',
      { message: msg({ metadata: { recipient: 'bob', intent: 'inform' } }) },
      /^params\.message\.metadata\.recipient/,
    ],
    ['no messageId', { message: msg({ messageId: undefined }) }, /^params\.message\.messageId/],
    [
      'no text part',
      { message: msg({ parts: [{ data: { recipient: 'bob@acme', intent: 'inform' } }] }) },
      /^params\.message\.parts: needs a text part/,
    ],
    [
      'an unknown key in the data part',
      { message: msg({ parts: [{ text: 'x' }, { data: { recipent: 'bob@acme' } }] }) },
      /^params\.message\.parts\[1\]\.data/,
    ],
    [
      'a bad artifact in the data part',
      { message: msg({ parts: [{ text: 'x' }, { data: { artifacts: [{ type: 'file_ref' }] } }] }) },
      /^params\.message\.parts\[1\]\.data\.artifacts\[0\]\.path/,
    ],
    [
      'a data part that contradicts the metadata',
      { message: msg({ parts: [{ text: 'x' }, { data: { recipient: 'carol@acme' } }] }) },
      /^params\.message\.metadata\.recipient: conflicts with params\.message\.parts\[1\]\.data\.recipient/,
    ],
    [
      'file bytes',
      { message: msg({ parts: [{ text: 'x' }, { raw: 'aGVsbG8=' }] }) },
      /^params\.message\.parts\[1\]\.raw/,
    ],
    [
      'a javascript: file url',
      { message: msg({ parts: [{ text: 'x' }, { url: 'javascript:alert(1)' }] }) },
      /^params\.message\.parts\[1\]\.url/,
    ],
    ['an agent-role message', { message: msg({ role: 'ROLE_AGENT' }) }, /^params\.message\.role/],
  ])('SendMessage with %s is invalid_params and stores nothing', async (_name, params, messagePattern) => {
    const before = await threadCount();
    const { status, body } = await sendRaw(params);
    expect(status).toBe(200);
    expect(body.error).toMatchObject({ code: -32602, data: { code: 'invalid_params' } });
    expect(body.error.message).toMatch(messagePattern);
    expect(await threadCount()).toBe(before);
  });

  test('a url part becomes a link artifact', async () => {
    const { body } = await sendRaw({
      message: msg({ parts: [{ text: 'see the PR' }, { url: 'https://example.com/pr/1', filename: 'PR #1' }] }),
    });
    expect((await wireThread(bob, body.result.task.id)).artifacts).toEqual([
      { type: 'link', url: 'https://example.com/pr/1', title: 'PR #1' },
    ]);
  });

  test('GetTask, CancelTask and SubscribeToTask of an unknown task are TaskNotFoundError (-32001), whatever the id looks like', async () => {
    const client = await v1Client(alice);
    for (const id of ['nope', '00000000-0000-4000-8000-000000000000']) {
      const get = await failure(getTask(client, id));
      expect(get).toMatchObject({
        name: 'TaskNotFoundError',
        envelopeCode: -32001,
        data: { code: 'thread_not_found' },
      });
      expect(get.message).toContain(id);
      expect(await failure(cancelTask(client, id))).toMatchObject({ name: 'TaskNotFoundError', envelopeCode: -32001 });
      const subscribe = await relay.rpc(alice, 'SubscribeToTask', { id });
      expect(subscribe.body.error).toMatchObject({ code: -32001, data: { code: 'thread_not_found' } });
    }
    expect((await relay.rpc(alice, 'GetTask', { id: '' })).body.error).toMatchObject({
      code: -32602,
      message: 'params.id: required: the task id',
    });
  });

  test('CancelTask of a finished task is TaskNotCancelableError and changes nothing', async () => {
    const { body } = await sendRaw({ message: msg() });
    const id = body.result.task.id;
    await relay.rpc(bob, 'tasks/update', { task_id: id, transition: 'decline', reason: 'not mine' });
    const error = await failure(cancelTask(await v1Client(alice), id));
    expect(error).toMatchObject({ name: 'TaskNotCancelableError', envelopeCode: -32002 });
    expect((await wireThread(alice, id)).status).toBe('declined');
  });

  test("the wire methods and v0.3 keep the relay's own codes for the same mistakes", async () => {
    expect((await relay.rpc(alice, 'tasks/get', { id: 'nope' })).body.error.message).toMatch(/^params\.id/);
    expect(
      (await relay.rpc(alice, 'tasks/get', { task_id: '00000000-0000-4000-8000-000000000000' })).body.error,
    ).toMatchObject({
      code: -32006,
      data: { code: 'thread_not_found' },
    });
    const unknownRecipient = await relay.rpc(alice, 'message/send', {
      recipient: 'nobody@acme',
      intent: 'inform',
      message: { role: 'user', parts: [{ type: 'text', text: 'hi' }] },
    });
    expect(unknownRecipient.body.error).toMatchObject({ code: -32004, data: { code: 'recipient_not_found' } });
  });

  test('without a key: HTTP 401, and on a v1.0 method a code A2A does not read as TaskNotFoundError', async () => {
    const anonymous = await relay.rpc(undefined, 'GetTask', { id: '00000000-0000-4000-8000-000000000000' });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error).toMatchObject({ code: -32000, data: { code: 'unauthenticated' } });
    const wire = await relay.rpc(undefined, 'tasks/get', { task_id: '00000000-0000-4000-8000-000000000000' });
    expect(wire.status).toBe(401);
    expect(wire.body.error).toMatchObject({ code: -32001, data: { code: 'unauthenticated' } });
  });
});
