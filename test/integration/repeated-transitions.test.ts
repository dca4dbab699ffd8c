// A transition asked again by the party who made it, against one real relay (FerretDB + Redis): answered with the
// current state, nothing written (no history entry, no outbox event), however many times and however concurrently;
// every other wrong-state transition is still refused. Over JSON-RPC, without idempotency keys, and over MCP.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { connectMcpHttp, toolOk } from '../helpers/mcp-http-client';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';

let relay: TestRelay;
let alice: string;
let bob: string;
let mcp: Client;

beforeAll(async () => {
  relay = await startTestRelay({ name: 'repeated_transitions', env: { RELAY_RATE_LIMIT_PER_MINUTE: '100000' } });
  alice = await relay.register({ handle: 'alice@acme' });
  bob = await relay.register({ handle: 'bob@acme' });
  mcp = await connectMcpHttp(relay.url, bob, 'repeated-transitions');
});

afterAll(async () => {
  await mcp?.close();
  await relay?.stop();
});

async function handoff(summary: string): Promise<string> {
  const { body } = await relay.rpc(alice, 'message/send', {
    recipient: 'bob@acme',
    intent: 'inform',
    message: { parts: [{ type: 'text', text: summary }] },
  });
  return body.result.task_id as string;
}

/** What a repeat must leave alone: version, status history and outbox. */
async function written(id: string) {
  const doc = (await relay.store.threads.findOne({ _id: id }))!;
  return {
    version: doc.version,
    history: doc.status_history.map((h) => `${h.status}:${h.by}`),
    events: doc.outbox.map((e) => e.type),
  };
}

const update = (key: string, params: Record<string, unknown>) => relay.rpc(key, 'tasks/update', params);

test('10 concurrent accepts by the recipient: one transition, ten successes, one history entry, one thread.accepted event', async () => {
  const id = await handoff('accept me ten times');
  const answers = await Promise.all(
    Array.from({ length: 10 }, () => update(bob, { task_id: id, transition: 'accept' })),
  );
  expect(answers.map((a) => [a.status, a.body.error?.data?.code])).toEqual(
    Array.from({ length: 10 }, () => [200, undefined]),
  );
  const acceptedAt = answers[0].body.result.accepted_at;
  for (const { body } of answers)
    expect(body.result).toEqual({ thread_id: id, status: 'accepted', accepted_at: acceptedAt });
  const after = await written(id);
  expect(after.history).toEqual(['pending:alice@acme', 'accepted:bob@acme']);
  expect(after.events.filter((type) => type === 'thread.accepted')).toHaveLength(1);
  expect(after.version).toBe(2);
});

test('complete after complete with the same result succeeds and writes nothing; a different result is refused', async () => {
  const id = await handoff('complete me twice');
  await update(bob, { task_id: id, transition: 'accept' });
  const result = { result_summary: 'Done', artifacts: [{ type: 'file_ref', path: 'a.ts', lines: [1, 2] }] };
  const first = await update(bob, { task_id: id, transition: 'complete', ...result });
  expect(first.body.result).toMatchObject({
    status: 'completed',
    completion_artifacts: [{ type: 'file_ref', path: 'a.ts', lines: [1, 2] }],
  });
  const before = await written(id);
  const again = await update(bob, { task_id: id, transition: 'complete', ...result });
  expect(again.body.result).toEqual(first.body.result);
  expect(await written(id)).toEqual(before);
  // The same range written the other way is the same result (as an earlier relay, which stored "1-2", compared it).
  const respelled = await update(bob, {
    task_id: id,
    transition: 'complete',
    result_summary: 'Done',
    artifacts: [{ type: 'file_ref', path: 'a.ts', lines: '1-2' }],
  });
  expect(respelled.body.result).toEqual(first.body.result);
  expect(await written(id)).toEqual(before);
  const other = await update(bob, { task_id: id, transition: 'complete', result_summary: 'Something else' });
  expect(other.body.error.data.code).toBe('thread_terminal');
  expect(await written(id)).toEqual(before);
});

test('decline after decline and cancel after cancel succeed and write nothing', async () => {
  const declined = await handoff('decline me twice');
  const first = await update(bob, { task_id: declined, transition: 'decline', reason: 'No capacity' });
  const before = await written(declined);
  const again = await update(bob, { task_id: declined, transition: 'decline', reason: 'No capacity' });
  expect(again.body.result).toEqual(first.body.result);
  expect(await written(declined)).toEqual(before);

  const cancelled = await handoff('cancel me twice');
  const cancel = await relay.rpc(alice, 'tasks/cancel', { task_id: cancelled });
  const beforeCancel = await written(cancelled);
  const again2 = await relay.rpc(alice, 'tasks/cancel', { task_id: cancelled, reason: 'never mind' });
  expect(again2.body.result).toEqual(cancel.body.result);
  expect(await written(cancelled)).toEqual(beforeCancel);
});

test('every other wrong-state transition is still refused, and the other party never repeats one', async () => {
  const id = await handoff('refusals');
  await relay.rpc(alice, 'tasks/cancel', { task_id: id });
  const before = await written(id);
  expect((await update(bob, { task_id: id, transition: 'accept' })).body.error.data.code).toBe('thread_terminal');
  expect((await update(bob, { task_id: id, transition: 'decline' })).body.error.data.code).toBe('thread_terminal');
  expect((await update(alice, { task_id: id, transition: 'accept' })).body.error.data.code).toBe(
    'not_authorized_transition',
  );
  expect((await relay.rpc(bob, 'tasks/cancel', { task_id: id })).body.error.data.code).toBe(
    'not_authorized_transition',
  );
  expect(await written(id)).toEqual(before);

  const accepted = await handoff('accepted, then asked to decline');
  await update(bob, { task_id: accepted, transition: 'accept' });
  expect((await update(bob, { task_id: accepted, transition: 'decline' })).body.error.data.code).toBe(
    'invalid_transition',
  );
  // A token presented again is judged again: single use, so the verdict refuses it (nothing changes).
  const token = (await relay.rpc(bob, 'tasks/get', { task_id: accepted })).body.result.handoff_token;
  const replay = await update(bob, { task_id: accepted, transition: 'accept', verdict: { goal_token: token } });
  expect(replay.body.result).toMatchObject({ accepted: false, token_check: { reason: 'already_consumed' } });
});

test('over MCP: accept_handoff again answers accepted, and the thread keeps one accept', async () => {
  const id = await handoff('accept over mcp twice');
  const first = toolOk(await mcp.callTool({ name: 'accept_handoff', arguments: { thread_id: id } }));
  const again = toolOk(await mcp.callTool({ name: 'accept_handoff', arguments: { thread_id: id } }));
  expect(again).toEqual(first);
  expect((await written(id)).history).toEqual(['pending:alice@acme', 'accepted:bob@acme']);
});

test('a create retried under its idempotency key with its line ranges written the other way gets the same thread', async () => {
  const send = (lines: unknown) =>
    relay.rpc(alice, 'message/send', {
      recipient: 'bob@acme',
      intent: 'inform',
      message: { parts: [{ type: 'text', text: 'ranges' }] },
      artifacts: [{ type: 'file_ref', path: 'a.ts', lines }],
      metadata: { client_idempotency_key: 'ranges-once' },
    });
  const first = await send([10, 20]);
  expect(first.body.error).toBeUndefined();
  const again = await send('10-20');
  expect(again.body.error).toBeUndefined();
  expect(again.body.result.task_id).toBe(first.body.result.task_id);
  const other = await send([10, 21]);
  expect(other.body.error.data.code).toBe('duplicate_idempotency_key');
});
