// POST /a2a on a real relay (FerretDB + Redis): message/send, tasks/get, tasks/update, agents/list and their errors.
import { THREAD_STATUSES } from '../../relay-core/domain/schemas';
import { inboxUrlOf, startTestRelay, type TestRelay } from '../helpers/relay-harness';

let relay: TestRelay;
let alice: string;
let bob: string;
let carol: string;

const summary = (text: string) => ({ role: 'user', parts: [{ type: 'text', text }] });
const send = (key: string, params: Record<string, unknown>, headers?: Record<string, string>) =>
  relay.rpc(
    key,
    'message/send',
    { task_id: null, recipient: 'bob@acme', intent: 'inform', message: summary('hello'), ...params },
    headers,
  );

beforeAll(async () => {
  relay = await startTestRelay({ name: 'a2a_wire' });
  alice = await relay.register({
    handle: 'alice@acme',
    name: 'Alice',
    role: 'backend',
    skills: ['node', 'postgres'],
    repos_owned: ['services/api/'],
  });
  bob = await relay.register({
    handle: 'bob@acme',
    name: 'Bob',
    role: 'frontend',
    skills: ['react'],
    repos_owned: ['apps/web/'],
  });
  carol = await relay.register({ handle: 'carol@acme', name: 'Carol', role: 'frontend', skills: ['react', 'css'] });
});

afterAll(async () => {
  await relay?.stop();
});

async function threadCount(): Promise<number> {
  return relay.store.threads.countDocuments();
}

describe('message/send (new thread)', () => {
  test('answers the wire shape and stores the thread with its outbox event', async () => {
    const { status, body } = await send(alice, {
      intent: 'propose_action',
      artifacts: [{ type: 'link', url: 'https://example.com/pr/1', title: 'PR' }],
      proposed_action: { description: 'Rename the prop', target_files: ['apps/web/a.tsx'], rationale: 'Consistency' },
      metadata: { client_idempotency_key: 'k-shape', sprint: 12 },
    });
    expect(status).toBe(200);
    expect(body.result).toEqual({
      task_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      status: { state: 'pending' },
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
      inbox_url: inboxUrlOf(relay.url, body.result.task_id, 'alice@acme'),
      recipient: 'bob@acme',
    });
    const doc = await relay.store.threads.findOne({ _id: body.result.task_id });
    expect(doc).toMatchObject({ from: 'alice@acme', to: 'bob@acme', status: 'pending', metadata: { sprint: 12 } });
    expect(doc!.outbox.map((e) => e.type)).toEqual(['thread.created']);
    expect(doc!.metadata).not.toHaveProperty('client_idempotency_key');
  });

  test('20 concurrent sends with one idempotency key create exactly one thread and all get the same result', async () => {
    const before = await threadCount();
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        send(alice, { metadata: { client_idempotency_key: 'same-key-20' }, message: summary('once only') }),
      ),
    );
    const results = answers.map((a) => a.body.result);
    expect(results.every((r) => r && r.task_id === results[0].task_id && r.created_at === results[0].created_at)).toBe(
      true,
    );
    expect(await threadCount()).toBe(before + 1);
  });

  test('the Idempotency-Key header alone also deduplicates', async () => {
    const first = await send(alice, {}, { 'Idempotency-Key': 'header-key' });
    const second = await send(alice, {}, { 'Idempotency-Key': 'header-key' });
    expect(second.body.result.task_id).toBe(first.body.result.task_id);
  });

  test('the same key with a different body is duplicate_idempotency_key and stores nothing', async () => {
    await send(alice, { metadata: { client_idempotency_key: 'reused' }, message: summary('first body') });
    const before = await threadCount();
    const { body } = await send(alice, {
      metadata: { client_idempotency_key: 'reused' },
      message: summary('another body'),
    });
    expect(body.error).toMatchObject({
      code: -32011,
      data: { code: 'duplicate_idempotency_key', request_id: expect.any(String) },
    });
    expect(await threadCount()).toBe(before);
  });

  test('the same key from another sender is a different request', async () => {
    const a = await send(alice, { metadata: { client_idempotency_key: 'shared' } });
    const c = await send(carol, { metadata: { client_idempotency_key: 'shared' } });
    expect(a.body.result.task_id).not.toBe(c.body.result.task_id);
  });

  test.each([
    ['unknown recipient', { recipient: 'nobody@acme' }, -32004, 'recipient_not_found'],
    ['propose_action without proposed_action', { intent: 'propose_action' }, -32012, 'invalid_intent_payload'],
    [
      'proposed_action with inform',
      { proposed_action: { description: 'x', target_files: [], rationale: 'y' } },
      -32012,
      'invalid_intent_payload',
    ],
    ['a question on an inform handoff', { metadata: { question: 'why?' } }, -32012, 'invalid_intent_payload'],
    ['a recipient that is not a handle', { recipient: 'bob' }, -32602, 'invalid_params'],
    ['an unknown intent', { intent: 'order' }, -32602, 'invalid_params'],
    [
      'an artifact type name that is not lower-case',
      { artifacts: [{ type: 'Binary', data: 'x' }] },
      -32602,
      'invalid_params',
    ],
    ['a file_diff without diff', { artifacts: [{ type: 'file_diff', path: 'a.ts' }] }, -32602, 'invalid_params'],
    ['an empty summary', { message: summary('   ') }, -32602, 'invalid_params'],
    ['an oversize summary', { message: summary('x'.repeat(8_001)) }, -32602, 'invalid_params'],
    [
      'more than 50 artifacts',
      { artifacts: Array.from({ length: 51 }, () => ({ type: 'link', url: 'https://e.com' })) },
      -32602,
      'invalid_params',
    ],
    ['a javascript: link', { artifacts: [{ type: 'link', url: 'javascript:alert(1)' }] }, -32602, 'invalid_params'],
  ])('%s is rejected with %i and stores nothing', async (_name, params, code, symbol) => {
    const before = await threadCount();
    const { status, body } = await send(alice, params);
    expect(status).toBe(200);
    expect(body.error).toMatchObject({ code, data: { code: symbol } });
    expect(await threadCount()).toBe(before);
  });

  test('invalid_params names the field path', async () => {
    const { body } = await send(alice, { artifacts: [{ type: 'link', url: 'https://e.com' }, { type: 'file_ref' }] });
    expect(body.error.message).toMatch(/^params\.artifacts\[1\]\.path/);
  });
});

describe('authentication and envelope', () => {
  test.each([
    ['no key', undefined],
    ['a wrong key', 'hr_000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'],
    ['garbage', 'not-a-key'],
  ])('%s is HTTP 401 with unauthenticated and writes nothing', async (_name, key) => {
    const before = await threadCount();
    const { status, body } = await relay.rpc(key, 'message/send', {
      recipient: 'bob@acme',
      intent: 'inform',
      message: summary('x'),
    });
    expect(status).toBe(401);
    expect(body.error).toMatchObject({ code: -32001, data: { code: 'unauthenticated' } });
    expect(await threadCount()).toBe(before);
  });

  test.each(['/a2a', '/mcp'])('a body that is not JSON is HTTP 400 parse_error on %s', async (path) => {
    const response = await fetch(`${relay.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice}`, 'content-type': 'application/json' },
      body: '{"jsonrpc":',
    });
    expect(response.status).toBe(400);
    expect((await response.json()).error).toMatchObject({ code: -32700, data: { code: 'parse_error' } });
  });

  test('wrong JSON-RPC version and unknown methods have their codes', async () => {
    const wrong = await fetch(`${relay.url}/a2a`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice}`, 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '1.0', id: 1, method: 'tasks/get' }),
    });
    expect((await wrong.json()).error.code).toBe(-32600);
    const unknown = await relay.rpc(alice, 'tasks/explode', {});
    expect(unknown.body.error).toMatchObject({ code: -32601, data: { code: 'method_not_found' } });
  });

  test.each([
    ['a wrong jsonrpc version', { jsonrpc: '1.0', id: 'req-7', method: 'SendMessage', params: {} }, 'req-7'],
    ['no jsonrpc', { id: 42, method: 'tasks/get', params: {} }, 42],
    ['no method', { jsonrpc: '2.0', id: 'req-8', params: {} }, 'req-8'],
    ['a method that is not a string', { jsonrpc: '2.0', id: 0, method: 7 }, 0],
    ['an id of another type', { jsonrpc: '2.0', id: { a: 1 }, method: 'tasks/get' }, null],
  ])('an invalid request with %s is invalid_request echoing the id it can read', async (_name, request, id) => {
    const before = await threadCount();
    const response = await fetch(`${relay.url}/a2a`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice}`, 'content-type': 'application/json' },
      body: JSON.stringify(request),
    });
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body).toMatchObject({ jsonrpc: '2.0', id, error: { code: -32600, data: { code: 'invalid_request' } } });
    expect(await threadCount()).toBe(before);
  });

  test('a refused key echoes the id too', async () => {
    const response = await fetch(`${relay.url}/a2a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 'req-9', method: 'tasks/get', params: {} }),
    });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({
      id: 'req-9',
      error: { code: -32001, data: { code: 'unauthenticated' } },
    });
  });
});

describe('tasks/get and tasks/update', () => {
  let threadId: string;

  beforeAll(async () => {
    const { body } = await send(alice, {
      intent: 'ask_question',
      message: summary('Should /search support cursors?'),
      artifacts: [{ type: 'file_ref', path: 'services/api/search.ts', lines: '1-20' }],
      metadata: { question: 'Cursor or offset?' },
    });
    threadId = body.result.task_id;
  });

  test('both participants read the whole thread; others get not_a_participant', async () => {
    const forBob = await relay.rpc(bob, 'tasks/get', { task_id: threadId });
    expect(forBob.body.result).toMatchObject({
      thread_id: threadId,
      intent: 'ask_question',
      status: 'pending',
      sender: { handle: 'alice@acme', name: 'Alice', role: 'backend' },
      recipient: { handle: 'bob@acme', name: 'Bob', role: 'frontend' },
      summary: 'Should /search support cursors?',
      metadata: { question: 'Cursor or offset?' },
      artifacts: [{ type: 'file_ref', path: 'services/api/search.ts', lines: '1-20' }],
      proposed_action: null,
      messages: [],
      completion_artifacts: [],
      completed_summary: null,
      accepted_at: null,
      inbox_url: inboxUrlOf(relay.url, threadId, 'bob@acme'),
    });
    expect((await relay.rpc(alice, 'tasks/get', { task_id: threadId })).body.result.thread_id).toBe(threadId);
    expect((await relay.rpc(carol, 'tasks/get', { task_id: threadId })).body.error).toMatchObject({
      code: -32005,
      data: { code: 'not_a_participant' },
    });
    expect(
      (await relay.rpc(bob, 'tasks/get', { task_id: '00000000-0000-4000-8000-000000000000' })).body.error.code,
    ).toBe(-32006);
  });

  test('only the recipient accepts; the lifecycle runs pending → accepted → completed', async () => {
    const bySender = await relay.rpc(alice, 'tasks/update', { task_id: threadId, transition: 'accept' });
    expect(bySender.body.error).toMatchObject({ code: -32009, data: { code: 'not_authorized_transition' } });
    const byOther = await relay.rpc(carol, 'tasks/update', { task_id: threadId, transition: 'accept' });
    expect(byOther.body.error.code).toBe(-32005);
    const early = await relay.rpc(bob, 'tasks/update', { task_id: threadId, transition: 'complete' });
    expect(early.body.error).toMatchObject({ code: -32008, data: { code: 'invalid_transition' } });

    const accept = await relay.rpc(bob, 'tasks/update', { task_id: threadId, transition: 'accept' });
    expect(accept.body.result).toEqual({ thread_id: threadId, status: 'accepted', accepted_at: expect.any(String) });
    // The same accept again by the recipient is answered with the current state (see repeated-transitions.test.ts).
    const again = await relay.rpc(bob, 'tasks/update', { task_id: threadId, transition: 'accept' });
    expect(again.body.result).toEqual(accept.body.result);

    const complete = await relay.rpc(bob, 'tasks/update', {
      task_id: threadId,
      transition: 'complete',
      result_summary: 'Cursor it is',
      artifacts: [{ type: 'link', url: 'https://example.com/pr/9' }],
    });
    expect(complete.body.result).toEqual({
      thread_id: threadId,
      status: 'completed',
      completed_at: expect.any(String),
      completion_artifacts: [{ type: 'link', url: 'https://example.com/pr/9' }],
    });
    const terminal = await relay.rpc(bob, 'tasks/update', { task_id: threadId, transition: 'decline' });
    expect(terminal.body.error).toMatchObject({ code: -32007, data: { code: 'thread_terminal' } });

    const read = (await relay.rpc(alice, 'tasks/get', { task_id: threadId })).body.result;
    expect(read).toMatchObject({ status: 'completed', completed_summary: 'Cursor it is' });
    expect(read.status_history.map((h: { status: string; via: string }) => `${h.status}/${h.via}`)).toEqual([
      'pending/a2a',
      'accepted/a2a',
      'completed/a2a',
    ]);
    const doc = await relay.store.threads.findOne({ _id: threadId });
    expect(doc!.outbox.map((e) => e.type)).toEqual(['thread.created', 'thread.accepted', 'thread.completed']);
  });

  test('10 concurrent accepts make exactly one transition, and every one of them succeeds', async () => {
    const { body } = await send(alice, { message: summary('race me') });
    const id = body.result.task_id;
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => relay.rpc(bob, 'tasks/update', { task_id: id, transition: 'accept' })),
    );
    expect(answers.filter((a) => a.body.result?.status === 'accepted').length).toBe(10);
    const doc = await relay.store.threads.findOne({ _id: id });
    expect(doc!.status_history.filter((h) => h.status === 'accepted')).toHaveLength(1);
  });
});

describe('agents/list', () => {
  test('filters by exact role, skill and repo, public fields only', async () => {
    const all = (await relay.rpc(alice, 'agents/list', {})).body.result.teammates;
    expect(all.map((t: { handle: string }) => t.handle)).toEqual(['alice@acme', 'bob@acme', 'carol@acme']);
    for (const card of all)
      expect(Object.keys(card).sort()).toEqual(['handle', 'name', 'repos_owned', 'role', 'skills']);
    const frontend = (await relay.rpc(alice, 'agents/list', { role: 'frontend' })).body.result.teammates;
    expect(frontend.map((t: { handle: string }) => t.handle)).toEqual(['bob@acme', 'carol@acme']);
    expect((await relay.rpc(alice, 'agents/list', { role: 'Frontend' })).body.result.teammates).toEqual([]);
    const css = (await relay.rpc(alice, 'agents/list', { skill: 'css' })).body.result.teammates;
    expect(css.map((t: { handle: string }) => t.handle)).toEqual(['carol@acme']);
    const web = (await relay.rpc(alice, 'agents/list', { repo: 'apps/web/' })).body.result.teammates;
    expect(web.map((t: { handle: string }) => t.handle)).toEqual(['bob@acme']);
  });
});

describe('POST /admin/agents', () => {
  test('needs the admin key, validates the card, refuses a taken handle', async () => {
    const post = (body: unknown, key = relay.adminKey) =>
      fetch(`${relay.url}/admin/agents`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    expect((await post({ handle: 'x@acme', name: 'X', role: 'qa' }, 'wrong-admin-key-wrong-admin-key')).status).toBe(
      401,
    );
    const bad = await post({ handle: 'not a handle', name: 'X', role: 'qa' });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: 'invalid_params', message: expect.stringMatching(/^body\.handle/) });
    const taken = await post({ handle: 'alice@acme', name: 'Alice 2', role: 'qa' });
    expect(taken.status).toBe(409);
    const created = await post({ handle: 'dave@acme', name: 'Dave', role: 'qa', slack_user_id: 'U0DAVE' });
    expect(created.status).toBe(201);
    const card = await created.json();
    expect(card).toMatchObject({
      handle: 'dave@acme',
      name: 'Dave',
      role: 'qa',
      slack_user_id: 'U0DAVE',
      api_key: expect.stringMatching(/^hr_[0-9a-f]{12}_/),
    });
    const sameSlack = await post({ handle: 'dave2@acme', name: 'Dave', role: 'qa', slack_user_id: 'U0DAVE' });
    expect(sameSlack.status).toBe(409);
    expect(await relay.store.agents.countDocuments({ _id: 'dave2@acme' })).toBe(0);
  });
});

test('tasks/list takes any set of statuses, every one of them at once included', async () => {
  const all = await relay.rpc(bob, 'tasks/list', { filter: { status: [...THREAD_STATUSES] } });
  expect(all.body.error).toBeUndefined();
  const pending = await relay.rpc(bob, 'tasks/list', { filter: { status: ['pending'] } });
  const ids = (r: typeof all) =>
    r.body.result.tasks?.map((t: any) => t.task_id) ?? r.body.result.items?.map((t: any) => t.thread_id);
  expect(ids(all)).toEqual(expect.arrayContaining(ids(pending)));
});
