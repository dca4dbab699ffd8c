// The envelope of the wire contract (docs/jsonrpc.md, "Envelope and content") against one real relay (FerretDB + Redis): every
// read and write JSON-RPC method (wire, runner, A2A, push configs) answers with a client's `metadata` envelope as it
// does without one; an oversized or too deeply nested envelope is invalid_params naming its limit and changes nothing;
// a read of an unknown thread or by a non-participant keeps its own error whatever envelope it carries; and the
// artifact forms other clients send (ref names, line ranges as arrays) round-trip in the form sent over JSON-RPC and MCP.
import { createHash } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { text } from '../helpers/handoffs';
import { connectMcpHttp, toolOk } from '../helpers/mcp-http-client';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';

let relay: TestRelay;
let alice: string;
let bob: string;
let carol: string;

/** What the reference MCP client attaches to every call: tags a tool was given, and its own trace. */
const ENVELOPE = {
  client: 'handoff-mcp/0.1.5',
  sprint: 12,
  trace: { id: 'c0ffee', spans: [1, { at: '2026-05-01T09:14:32Z' }, null] },
};
const UNKNOWN = '00000000-0000-4000-8000-000000000000';
const nested = (depth: number): unknown => JSON.parse('['.repeat(depth) + ']'.repeat(depth));
const OVERSIZED = { blob: 'x'.repeat(16_400) };
const TOO_DEEP = { deep: nested(21) };

beforeAll(async () => {
  relay = await startTestRelay({ name: 'wire_envelope', env: { RELAY_RATE_LIMIT_PER_MINUTE: '100000' } });
  alice = await relay.register({ handle: 'alice@acme', role: 'backend' });
  bob = await relay.register({ handle: 'bob@acme', role: 'frontend', skills: ['react'] });
  carol = await relay.register({ handle: 'carol@acme', role: 'qa' });
});

afterAll(async () => {
  await relay?.stop();
});

/** The result of a call that must succeed. */
async function ok(key: string, method: string, params: Record<string, unknown>): Promise<any> {
  const { status, body } = await relay.rpc(key, method, params);
  if (status !== 200 || body.error) throw new Error(`${method} failed: ${status} ${JSON.stringify(body.error)}`);
  return body.result;
}

async function errorOf(
  key: string,
  method: string,
  params: Record<string, unknown>,
): Promise<{ code: string; message: string }> {
  const { status, body } = await relay.rpc(key, method, params);
  expect(status).toBe(200);
  return { code: body.error?.data?.code, message: body.error?.message };
}

const create = (summary: string, over: Record<string, unknown> = {}) =>
  ok(alice, 'message/send', {
    task_id: null,
    recipient: 'bob@acme',
    intent: 'inform',
    message: text(summary),
    metadata: ENVELOPE,
    ...over,
  });

/** Every document of the collections a call could write, hashed (what the workers and sweeps write on their own left out). */
async function snapshot(): Promise<string> {
  const hash = createHash('sha256');
  for (const name of ['threads', 'messages', 'idempotency', 'runs', 'push_configs', 'a2a_drafts']) {
    const docs = await relay.store.db.collection(name).find().toArray();
    hash.update(
      `${name}:${docs
        .map(
          ({
            version: _v,
            outbox_dirty: _d,
            outbox_enqueued: _e,
            jobs_pending: _j,
            pending_since: _p,
            next_timer: _n,
            next_due_at: _due,
            timer_version: _t,
            ...doc
          }) => JSON.stringify(doc),
        )
        .sort()
        .join('\n')}`,
    );
  }
  return hash.digest('hex');
}

describe('every method takes a metadata envelope and ignores it', () => {
  test('the wire methods, from create to complete, with an envelope on each call', async () => {
    const teammates = await ok(alice, 'agents/list', { role: 'frontend', metadata: ENVELOPE });
    expect(teammates.teammates.map((t: { handle: string }) => t.handle)).toEqual(['bob@acme']);

    const created = await create('envelope flow', { metadata: { ...ENVELOPE, client_idempotency_key: 'env-create' } });
    const id = created.task_id as string;
    // A create stores its metadata (content there), without the idempotency key.
    expect((await ok(bob, 'tasks/get', { task_id: id, metadata: ENVELOPE })).metadata).toEqual(ENVELOPE);

    const appended = await ok(alice, 'message/send', {
      task_id: id,
      message: text('one more thing'),
      metadata: { ...ENVELOPE, client_idempotency_key: 'env-append' },
    });
    expect(appended.sequence_no).toBe(1);
    const listed = await ok(bob, 'tasks/list', {
      filter: { role: 'recipient' },
      page: { limit: 5 },
      metadata: ENVELOPE,
    });
    expect(listed.items.map((item: { thread_id: string }) => item.thread_id)).toContain(id);
    expect(await ok(alice, 'approvals/get', { task_id: id, metadata: ENVELOPE })).toEqual({ approvals: [] });

    expect(
      await ok(bob, 'tasks/update', {
        task_id: id,
        transition: 'accept',
        metadata: { ...ENVELOPE, client_idempotency_key: 'env-accept' },
      }),
    ).toMatchObject({ status: 'accepted' });
    const completed = await ok(bob, 'tasks/update', {
      task_id: id,
      transition: 'complete',
      result_summary: 'Done',
      metadata: ENVELOPE,
    });
    expect(completed).toMatchObject({ thread_id: id, status: 'completed' });

    const declined = (await create('decline me')).task_id;
    expect(
      await ok(bob, 'tasks/update', {
        task_id: declined,
        transition: 'decline',
        reason: 'No capacity',
        metadata: ENVELOPE,
      }),
    ).toMatchObject({ status: 'declined' });
    const cancelled = (await create('cancel me')).task_id;
    expect(
      await ok(alice, 'tasks/cancel', { task_id: cancelled, reason: 'Not needed', metadata: ENVELOPE }),
    ).toMatchObject({ status: 'cancelled' });

    // The envelope is not part of what is stored: the thread reads the same as it did.
    const thread = await ok(alice, 'tasks/get', { task_id: id });
    expect(thread.status).toBe('completed');
    expect(thread.messages.map((m: { body: string }) => m.body)).toEqual(['one more thing']);
  });

  test('an envelope on a read or a transition may hold keys stored metadata may not ("." and "$"), since it is never stored', async () => {
    const id = (await create('any keys')).task_id;
    const anyKeys = { 'trace.id': 'abc', $client: { 'v.1': true } };
    expect((await ok(bob, 'tasks/get', { task_id: id, metadata: anyKeys })).thread_id).toBe(id);
    expect(await ok(bob, 'tasks/update', { task_id: id, transition: 'accept', metadata: anyKeys })).toMatchObject({
      status: 'accepted',
    });
    // A new handoff stores its metadata, so there the rules of stored JSON hold.
    expect(
      (
        await errorOf(alice, 'message/send', {
          recipient: 'bob@acme',
          intent: 'inform',
          message: text('x'),
          metadata: anyKeys,
        })
      ).code,
    ).toBe('invalid_params');
  });

  test('the runner methods, with an envelope on each call', async () => {
    const id = (await create('run it')).task_id;
    await ok(bob, 'tasks/update', { task_id: id, transition: 'accept' });
    const requested = await ok(bob, 'runs/request', { task_id: id, metadata: ENVELOPE });
    const { run } = await ok(bob, 'runs/claim', { runner: 'laptop', wait_seconds: 0, metadata: ENVELOPE });
    expect(run.run_id).toBe(requested.run_id);
    const lease = { run_id: run.run_id, lease_id: run.lease_id, metadata: ENVELOPE };
    await ok(bob, 'runs/heartbeat', lease);
    await ok(bob, 'runs/progress', { ...lease, seq: 1, text: 'working' });
    expect((await ok(bob, 'runs/get', { run_id: run.run_id, metadata: ENVELOPE })).run_id).toBe(run.run_id);
    await ok(bob, 'runs/stop', { run_id: run.run_id, metadata: ENVELOPE });
    expect(await ok(bob, 'runs/finish', { ...lease, outcome: 'stopped', reason: 'stopped' })).toMatchObject({
      run_id: run.run_id,
    });
  });

  test('the A2A methods and push configs, with an envelope on each call', async () => {
    const id = (await create('a2a reads')).task_id;
    expect((await ok(bob, 'GetTask', { id, metadata: ENVELOPE })).id).toBe(id);
    expect((await ok(bob, 'tasks/get', { id, metadata: ENVELOPE })).kind).toBe('task');
    const config = { taskId: id, id: 'env-hook', metadata: ENVELOPE };
    await ok(alice, 'CreateTaskPushNotificationConfig', { ...config, url: 'https://hooks.example.invalid/relay' });
    expect((await ok(alice, 'GetTaskPushNotificationConfig', config)).id).toBe('env-hook');
    expect(
      (await ok(alice, 'ListTaskPushNotificationConfigs', { taskId: id, metadata: ENVELOPE })).configs,
    ).toHaveLength(1);
    await ok(alice, 'DeleteTaskPushNotificationConfig', config);
    const cancelled = await ok(alice, 'CancelTask', { id, metadata: { ...ENVELOPE, reason: 'Changed plans' } });
    expect(cancelled.status.state).toMatch(/cancel/i);
  });
});

describe('a read keeps its own error whatever envelope it carries', () => {
  let id: string;
  beforeAll(async () => {
    id = (await create('not for carol')).task_id;
  });

  test.each([
    ['tasks/get', (task: string) => ({ task_id: task })],
    ['GetTask', (task: string) => ({ id: task })],
    ['tasks/get (A2A v0.3)', (task: string) => ({ id: task })],
    ['approvals/get', (task: string) => ({ task_id: task })],
    ['ListTaskPushNotificationConfigs', (task: string) => ({ taskId: task })],
  ])('%s: an unknown thread is thread_not_found, a non-participant not_a_participant', async (name, params) => {
    const method = name.split(' ')[0]!;
    expect((await errorOf(alice, method, { ...params(UNKNOWN), metadata: ENVELOPE })).code).toBe('thread_not_found');
    expect((await errorOf(carol, method, { ...params(id), metadata: ENVELOPE })).code).toBe('not_a_participant');
  });

  test('the writes too: append, update and cancel', async () => {
    expect((await errorOf(carol, 'message/send', { task_id: id, message: text('hi'), metadata: ENVELOPE })).code).toBe(
      'not_a_participant',
    );
    expect(
      (await errorOf(bob, 'tasks/update', { task_id: UNKNOWN, transition: 'accept', metadata: ENVELOPE })).code,
    ).toBe('thread_not_found');
    expect((await errorOf(carol, 'tasks/cancel', { task_id: id, metadata: ENVELOPE })).code).toBe('not_a_participant');
  });

  test('content stays strict beside an envelope: an unknown param is still invalid_params naming params', async () => {
    expect(await errorOf(bob, 'tasks/get', { task_id: id, history_length: 5, metadata: ENVELOPE })).toMatchObject({
      code: 'invalid_params',
      message: expect.stringMatching(/^params: /),
    });
  });
});

describe('an envelope past its bounds is refused, its limit named, nothing changed', () => {
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    ids.pending = (await create('bounds')).task_id;
  });

  /** Each method with valid params (filled with the fixture's thread id) but for the envelope. */
  const METHODS: Array<[string, 'alice' | 'bob', (task: string) => Record<string, unknown>]> = [
    [
      'message/send',
      'alice',
      () => ({ task_id: null, recipient: 'bob@acme', intent: 'inform', message: text('never sent') }),
    ],
    ['message/send', 'alice', (task) => ({ task_id: task, message: text('never appended') })],
    ['tasks/get', 'bob', (task) => ({ task_id: task })],
    ['tasks/list', 'bob', () => ({})],
    ['tasks/update', 'bob', (task) => ({ task_id: task, transition: 'accept' })],
    ['tasks/cancel', 'alice', (task) => ({ task_id: task })],
    ['agents/list', 'alice', () => ({})],
    ['approvals/get', 'alice', (task) => ({ task_id: task })],
    ['runs/request', 'bob', (task) => ({ task_id: task })],
    ['runs/claim', 'bob', () => ({ wait_seconds: 0 })],
    ['runs/get', 'bob', () => ({ run_id: UNKNOWN })],
    ['GetTask', 'bob', (task) => ({ id: task })],
    ['CancelTask', 'alice', (task) => ({ id: task })],
    ['ListTaskPushNotificationConfigs', 'alice', (task) => ({ taskId: task })],
  ];
  const key = (who: 'alice' | 'bob') => (who === 'alice' ? alice : bob);

  test.each(METHODS)('%s (as %s): 16 KiB and 20 levels deep', async (method, who, params) => {
    const before = await snapshot();
    const oversized = await errorOf(key(who), method, { ...params(ids.pending!), metadata: OVERSIZED });
    expect(oversized).toEqual({
      code: 'invalid_params',
      message: 'params.metadata: must be at most 16384 bytes as JSON',
    });
    const deep = await errorOf(key(who), method, { ...params(ids.pending!), metadata: TOO_DEEP });
    expect(deep).toEqual({ code: 'invalid_params', message: 'params.metadata: must nest at most 20 levels deep' });
    expect(await snapshot()).toBe(before);
    // Within the bounds the same call goes through (or fails for its own reason, never the envelope's).
    const within = await relay.rpc(key(who), method, { ...params(ids.pending!), metadata: { deep: nested(19) } });
    expect(within.body.error?.message ?? '').not.toMatch(/params\.metadata/);
  });
});

describe('artifacts as other clients send them', () => {
  const SENT = [
    { type: 'file_ref', path: 'apps/web/a.tsx', git_sha: 'main', lines: [10, 42] },
    { type: 'file_ref', path: 'apps/web/b.tsx', git_sha: 'origin/feature-x', lines: '10-42' },
    { type: 'file_ref', path: 'apps/web/c.tsx', git_sha: '0123456789abcdef0123', lines: [7] },
  ];
  let mcpAlice: Client;
  let mcpBob: Client;

  beforeAll(async () => {
    mcpAlice = await connectMcpHttp(relay.url, alice, 'wire-envelope');
    mcpBob = await connectMcpHttp(relay.url, bob, 'wire-envelope');
  });

  afterAll(async () => {
    await mcpAlice?.close();
    await mcpBob?.close();
  });

  test('over JSON-RPC: a ref name kept as given, lines in the form sent (create, append, complete); the inbox page shows 10-42', async () => {
    const created = await create('forms', { artifacts: SENT });
    const id = created.task_id as string;
    await ok(bob, 'message/send', { task_id: id, message: text('see'), artifacts: [SENT[0]] });
    await ok(bob, 'tasks/update', { task_id: id, transition: 'accept' });
    const completed = await ok(bob, 'tasks/update', {
      task_id: id,
      transition: 'complete',
      result_summary: 'Done',
      artifacts: [SENT[1]],
    });
    expect(completed.completion_artifacts).toEqual([SENT[1]]);
    const thread = await ok(alice, 'tasks/get', { task_id: id });
    expect(thread.artifacts).toEqual(SENT);
    expect(thread.messages[0].artifacts).toEqual([SENT[0]]);
    expect(thread.completion_artifacts).toEqual([SENT[1]]);
    const page = await (await fetch(created.inbox_url as string)).text();
    expect(page).toContain('lines 10-42 at <code>main</code>');
    expect(page).toContain('lines 10-42 at <code>origin/feature-x</code>');
    expect(page).toContain('lines 7 at <code>0123456789abcdef0123</code>');
  });

  test('over MCP: handoff_to_teammate, view_thread and complete_handoff give back the forms sent', async () => {
    const created = toolOk(
      await mcpAlice.callTool({
        name: 'handoff_to_teammate',
        arguments: { to: 'bob@acme', intent: 'inform', summary: 'forms over mcp', artifacts: SENT },
      }),
    );
    const viewed = toolOk(await mcpBob.callTool({ name: 'view_thread', arguments: { thread_id: created.thread_id } }));
    expect(viewed.artifacts.value).toEqual(SENT);
    toolOk(await mcpBob.callTool({ name: 'accept_handoff', arguments: { thread_id: created.thread_id } }));
    const completed = toolOk(
      await mcpBob.callTool({
        name: 'complete_handoff',
        arguments: { thread_id: created.thread_id, result_summary: 'Done', artifacts: [SENT[0]] },
      }),
    );
    expect(completed.completion_artifacts).toEqual([SENT[0]]);
  });

  test('over MCP: a metadata argument a client adds to a read is ignored', async () => {
    const id = (await create('mcp reads')).task_id;
    expect(
      toolOk(await mcpBob.callTool({ name: 'view_thread', arguments: { thread_id: id, metadata: ENVELOPE } }))
        .thread_id,
    ).toBe(id);
    expect(
      toolOk(await mcpBob.callTool({ name: 'list_teammates', arguments: { role: 'backend', metadata: ENVELOPE } }))
        .teammates,
    ).toHaveLength(1);
    expect(
      toolOk(await mcpBob.callTool({ name: 'check_inbox', arguments: { limit: 5, metadata: ENVELOPE } })).items,
    ).toEqual(expect.any(Array));
  });
});
