// A2A v1.0 ListTasks driven by @a2a-js/sdk's client against a real relay: every task the caller can see (sent,
// received, offered), newest first, paged by pageSize / pageToken, narrowed by contextId, status and
// statusTimestampAfter, with historyLength and includeArtifacts; and its errors, which change nothing.
import { randomUUID } from 'node:crypto';
import { Role, TaskState, type ListTasksRequest, type ListTasksResponse, type Message, type Part } from '@a2a-js/sdk';
import {
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransportFactory,
  createAuthenticatingFetchWithRetry,
  type Client,
} from '@a2a-js/sdk/client';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { sendHandoff, text as wireText } from '../helpers/handoffs';

let relay: TestRelay;
let alice: string;
let bob: string;
let carol: string;
let dave: string;

/** The ListTasks requests the SDK sent, as it sent them. */
const sent: unknown[] = [];

beforeAll(async () => {
  relay = await startTestRelay({ name: 'a2a_list_tasks' });
  [alice, bob, carol, dave] = await Promise.all(
    ['alice@acme', 'bob@acme', 'carol@acme', 'dave@acme'].map((handle) =>
      relay.register({ handle, role: handle === 'dave@acme' ? 'web' : 'engineer' }),
    ),
  );
});

afterAll(async () => {
  await relay?.stop();
});

async function client(apiKey: string): Promise<Client> {
  const recording: typeof fetch = async (input, init) => {
    if (typeof init?.body === 'string' && JSON.parse(init.body).method === 'ListTasks')
      sent.push(JSON.parse(init.body).params);
    return fetch(input, init);
  };
  const fetchImpl = createAuthenticatingFetchWithRetry(recording, {
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

async function sendTask(sdk: Client, summary: string, recipient: string): Promise<string> {
  const msg: Message = {
    messageId: randomUUID(),
    contextId: '',
    taskId: '',
    role: Role.ROLE_USER,
    parts: [text(summary)],
    metadata: { recipient, intent: 'inform' },
    extensions: [],
    referenceTaskIds: [],
  };
  const result = await sdk.sendMessage({ tenant: '', message: msg, configuration: undefined, metadata: undefined });
  if (!('status' in result)) throw new Error('expected a task');
  return result.id;
}

const request = (over: Partial<ListTasksRequest> = {}): ListTasksRequest => ({
  tenant: '',
  contextId: '',
  status: TaskState.TASK_STATE_UNSPECIFIED,
  pageToken: '',
  pageSize: undefined,
  historyLength: undefined,
  statusTimestampAfter: undefined,
  includeArtifacts: undefined,
  ...over,
});

/** Every page, following nextPageToken until it is "". */
async function walk(
  sdk: Client,
  over: Partial<ListTasksRequest> = {},
): Promise<{ ids: string[]; pages: ListTasksResponse[] }> {
  const pages: ListTasksResponse[] = [];
  let pageToken = '';
  do {
    const page = await sdk.listTasks(request({ ...over, pageToken }));
    pages.push(page);
    pageToken = page.nextPageToken;
  } while (pageToken !== '' && pages.length < 50);
  return { ids: pages.flatMap((p) => p.tasks.map((t) => t.id)), pages };
}

/** The tasks in the relay's list order: newest created first (ties by id, descending). */
async function newestFirst(key: string, ids: string[]): Promise<string[]> {
  const created = await Promise.all(
    ids.map(
      async (id) =>
        [id, (await relay.rpc(key, 'tasks/get', { task_id: id })).body.result.created_at as string] as const,
    ),
  );
  return created
    .sort(([a, at], [b, bt]) => (bt < at ? -1 : bt > at ? 1 : b < a ? -1 : b > a ? 1 : 0))
    .map(([id]) => id);
}

describe('through the SDK client', () => {
  let sdk: Client;
  let mine: string[];
  let toCarol: string;
  let fromBob: string;
  let offered: string;

  beforeAll(async () => {
    sdk = await client(alice);
    mine = [];
    for (let i = 0; i < 4; i += 1) mine.push(await sendTask(sdk, `to bob ${i}`, 'bob@acme'));
    toCarol = await sendTask(sdk, 'to carol', 'carol@acme');
    mine.push(toCarol);
    fromBob = await sendHandoff(relay, bob, 'alice@acme', 'from bob');
    mine.push(fromBob);
    offered = await sendHandoff(relay, carol, 'role:engineer', 'for any engineer');
    mine.push(offered);
    await sendHandoff(relay, bob, 'carol@acme', 'not for alice');
  });

  test('walking the pages returns every task alice can see once, newest first, with the totals and page sizes A2A asks for', async () => {
    const { ids, pages } = await walk(sdk, { pageSize: 3 });
    expect(ids).toEqual(await newestFirst(alice, mine));
    expect(pages.map((p) => p.pageSize)).toEqual([3, 3, 1]);
    expect(pages.map((p) => p.totalSize)).toEqual([7, 7, 7]);
    expect(pages[2]!.nextPageToken).toBe('');
    expect(sent[sent.length - 1]).toMatchObject({ pageSize: 3, pageToken: pages[1]!.nextPageToken });

    const all = await sdk.listTasks(request());
    expect(all).toMatchObject({ pageSize: 7, totalSize: 7, nextPageToken: '' });
    const task = all.tasks.find((t) => t.id === toCarol)!;
    expect(task).toMatchObject({ contextId: toCarol, status: { state: TaskState.TASK_STATE_SUBMITTED } });
    expect(task.history[0]?.parts[0]?.content).toEqual({ $case: 'text', value: 'to carol' });
    expect(all.tasks.find((t) => t.id === offered)?.metadata).toMatchObject({
      handoff: { to_target: 'role:engineer', candidates: ['alice@acme', 'bob@acme'] },
    });
  });

  test('status, contextId and statusTimestampAfter narrow the list, and the total with it', async () => {
    await relay.rpc(bob, 'tasks/update', { task_id: mine[1], transition: 'accept' });
    const working = await sdk.listTasks(request({ status: TaskState.TASK_STATE_WORKING }));
    expect(working.tasks.map((t) => t.id)).toEqual([mine[1]]);
    expect(working).toMatchObject({ totalSize: 1, pageSize: 1, nextPageToken: '' });
    expect(sent[sent.length - 1]).toMatchObject({ status: 'TASK_STATE_WORKING' });

    const submitted = await walk(sdk, { status: TaskState.TASK_STATE_SUBMITTED, pageSize: 4 });
    expect(new Set(submitted.ids)).toEqual(new Set(mine.filter((id) => id !== mine[1])));
    expect(submitted.pages[0]!.totalSize).toBe(6);

    expect((await sdk.listTasks(request({ contextId: fromBob }))).tasks.map((t) => t.id)).toEqual([fromBob]);
    for (const contextId of [randomUUID(), 'a-context-no-task-has']) {
      expect(await sdk.listTasks(request({ contextId }))).toMatchObject({
        tasks: [],
        totalSize: 0,
        pageSize: 0,
        nextPageToken: '',
      });
    }
    expect(await sdk.listTasks(request({ status: TaskState.TASK_STATE_INPUT_REQUIRED }))).toMatchObject({
      tasks: [],
      totalSize: 0,
    });

    // The accept changed that task's status last: from its instant on, statusTimestampAfter keeps it, and only tasks changed since.
    const accepted = (await relay.rpc(alice, 'tasks/get', { task_id: mine[1] })).body.result.accepted_at as string;
    const after = await sdk.listTasks(request({ statusTimestampAfter: accepted }));
    expect(after.tasks.map((t) => t.id)).toContain(mine[1]);
    expect(
      after.tasks.every((t) => new Date(String(t.status!.timestamp)).getTime() >= new Date(accepted).getTime()),
    ).toBe(true);
    expect(
      await sdk.listTasks(request({ statusTimestampAfter: new Date(Date.now() + 60_000).toISOString() })),
    ).toMatchObject({ tasks: [], totalSize: 0 });
  });

  test('historyLength trims each history, and artifacts come only with includeArtifacts', async () => {
    await relay.rpc(bob, 'message/send', { task_id: fromBob, message: wireText('one more thing') });
    await relay.rpc(alice, 'tasks/update', { task_id: fromBob, transition: 'accept' });
    await relay.rpc(alice, 'tasks/update', { task_id: fromBob, transition: 'complete', result_summary: 'done' });

    const full = (await sdk.listTasks(request({ contextId: fromBob }))).tasks[0]!;
    expect(full.history).toHaveLength(2);
    expect(full.artifacts).toEqual([]);
    const raw = await relay.rpc(alice, 'ListTasks', { contextId: fromBob });
    expect(raw.body.result.tasks[0]).not.toHaveProperty('artifacts');
    expect((await sdk.listTasks(request({ contextId: fromBob, historyLength: 1 }))).tasks[0]!.history).toHaveLength(1);
    expect((await sdk.listTasks(request({ contextId: fromBob, historyLength: 0 }))).tasks[0]!.history).toEqual([]);

    const withArtifacts = (await sdk.listTasks(request({ contextId: fromBob, includeArtifacts: true }))).tasks[0]!;
    expect(withArtifacts.artifacts.map((a) => a.artifactId)).toEqual(['handoff-result']);
    const none = await relay.rpc(alice, 'ListTasks', { contextId: mine[0], includeArtifacts: true });
    expect(none.body.result.tasks[0].artifacts).toEqual([]);
  });

  test('listing marks nothing as read', async () => {
    const thread = mine[2]!;
    await relay.rpc(bob, 'message/send', { task_id: thread, message: wireText('a question back') });
    await sdk.listTasks(request());
    const sentList = await relay.rpc(alice, 'tasks/list', { filter: { role: 'sender' }, page: { limit: 200 } });
    expect(sentList.body.result.items.find((i: { thread_id: string }) => i.thread_id === thread).unread_messages).toBe(
      1,
    );
  });

  test('a teammate with no tasks gets an empty list', async () => {
    expect(await (await client(dave)).listTasks(request())).toMatchObject({
      tasks: [],
      totalSize: 0,
      pageSize: 0,
      nextPageToken: '',
    });
  });

  test('tasks waiting for a recipient are listed too, to their sender only, once each as they become handoffs', async () => {
    const sender = await client(dave);
    const plain = (summary: string, contextId = ''): Message => ({
      messageId: randomUUID(),
      contextId,
      taskId: '',
      role: Role.ROLE_USER,
      parts: [text(summary)],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    });
    const ask = async (msg: Message) => {
      const result = await sender.sendMessage({
        tenant: '',
        message: msg,
        configuration: undefined,
        metadata: undefined,
      });
      if (!('status' in result)) throw new Error('expected a task');
      return result;
    };
    const waiting = await ask(plain('which one of you owns billing?'));
    const dropped = await ask(plain('never mind'));
    await sender.cancelTask({ tenant: '', id: dropped.id, metadata: undefined });
    const handed = await ask(plain('the flaky test in checkout'));
    await ask(plain('bob@acme', handed.id));

    const { ids, pages } = await walk(sender, { pageSize: 2 });
    expect(ids).toEqual([handed.id, dropped.id, waiting.id]);
    expect(pages.map((p) => [p.pageSize, p.totalSize])).toEqual([
      [2, 3],
      [1, 3],
    ]);
    const all = await sender.listTasks(request());
    expect(all.tasks.map((t) => t.status?.state)).toEqual([
      TaskState.TASK_STATE_SUBMITTED,
      TaskState.TASK_STATE_CANCELED,
      TaskState.TASK_STATE_INPUT_REQUIRED,
    ]);

    const inputRequired = await sender.listTasks(request({ status: TaskState.TASK_STATE_INPUT_REQUIRED }));
    expect(inputRequired).toMatchObject({ totalSize: 1, tasks: [{ id: waiting.id, contextId: waiting.id }] });
    expect((await sender.listTasks(request({ status: TaskState.TASK_STATE_CANCELED }))).tasks.map((t) => t.id)).toEqual(
      [dropped.id],
    );
    expect((await sender.listTasks(request({ contextId: waiting.id }))).tasks.map((t) => t.id)).toEqual([waiting.id]);
    // Nobody else sees them; the handoff shows in its recipient's list.
    const bobs = await walk(await client(bob));
    expect(bobs.ids).toContain(handed.id);
    expect(bobs.ids).not.toContain(waiting.id);
  });
});

describe('bad input is -32602 naming the field, and changes nothing', () => {
  test.each([
    ['pageSize 0', { pageSize: 0 }, /^params\.pageSize: must be a whole number from 1 to 100/],
    ['a negative pageSize', { pageSize: -1 }, /^params\.pageSize/],
    ['pageSize over 100', { pageSize: 101 }, /^params\.pageSize/],
    ['a fractional pageSize', { pageSize: 2.5 }, /^params\.pageSize/],
    ['an unknown status', { status: 'TASK_STATE_DONE' }, /^params\.status: must be one of TASK_STATE_UNSPECIFIED, /],
    ['a forged pageToken', { pageToken: 'bm90LWEtY3Vyc29y' }, /^params\.pageToken: not a page token this relay issued/],
    ['a negative historyLength', { historyLength: -1 }, /^params\.historyLength/],
    [
      'a statusTimestampAfter that is no timestamp',
      { statusTimestampAfter: 'yesterday' },
      /^params\.statusTimestampAfter: must be an ISO 8601 timestamp/,
    ],
    ['includeArtifacts as a string', { includeArtifacts: 'yes' }, /^params\.includeArtifacts/],
    ['a key ListTasks does not take', { limit: 5 }, /^params: Unrecognized key: "limit"|limit/],
  ])('%s', async (_name, params, message) => {
    const before = await relay.store.threads.countDocuments();
    const { status, body } = await relay.rpc(alice, 'ListTasks', params);
    expect(status).toBe(200);
    expect(body.error).toMatchObject({ code: -32602, data: { code: 'invalid_params' } });
    expect(body.error.message).toMatch(message);
    expect(await relay.store.threads.countDocuments()).toBe(before);
  });

  test('without a key it is HTTP 401', async () => {
    expect((await relay.rpc(undefined, 'ListTasks', {})).status).toBe(401);
  });
});
