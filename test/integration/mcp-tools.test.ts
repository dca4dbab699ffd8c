// The eight MCP tools over Streamable HTTP at POST /mcp, served in process by a real relay (FerretDB + Redis).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';

type CallResult = Awaited<ReturnType<Client['callTool']>>;

let relay: TestRelay;
let senderKey: string;
let recipientKey: string;
const clients: Client[] = [];
let sender: Client;
let recipient: Client;
let stranger: Client;

async function connect(apiKey: string): Promise<Client> {
  const client = new Client({ name: 'mcp-tools-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${relay.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${apiKey}` } } }),
  );
  clients.push(client);
  return client;
}

function ok(result: CallResult): Record<string, any> {
  if (result.isError) throw new Error(`tool failed: ${JSON.stringify(result.content)}`);
  return result.structuredContent as Record<string, any>;
}

function errorText(result: CallResult): string {
  expect(result.isError).toBe(true);
  return JSON.stringify(result.content);
}

async function handoff(summary: string): Promise<string> {
  const created = ok(await sender.callTool({ name: 'handoff_to_teammate', arguments: { to: 'web-dev@acme', intent: 'inform', summary } }));
  return created.thread_id as string;
}

beforeAll(async () => {
  relay = await startTestRelay({ name: 'mcp_tools' });
  senderKey = await relay.register({ handle: 'api-dev@acme', name: 'API developer', role: 'backend' });
  recipientKey = await relay.register({ handle: 'web-dev@acme', name: 'Web developer', role: 'frontend' });
  const strangerKey = await relay.register({ handle: 'stranger@acme', name: 'Someone else', role: 'qa' });
  sender = await connect(senderKey);
  recipient = await connect(recipientKey);
  stranger = await connect(strangerKey);
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await relay?.stop();
});

test('lists all eight tools, each with input and output schemas and annotations', async () => {
  const { tools } = await recipient.listTools();
  expect(tools.map((t) => t.name).sort()).toEqual([
    'accept_handoff',
    'check_inbox',
    'complete_handoff',
    'decline_handoff',
    'handoff_to_teammate',
    'list_teammates',
    'send_message',
    'view_thread',
  ]);
  for (const tool of tools) {
    expect(tool.title).toEqual(expect.any(String));
    expect(tool.outputSchema).toMatchObject({ type: 'object' });
    expect(tool.inputSchema).toMatchObject({ type: 'object' });
  }
  const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
  expect(byName.check_inbox.annotations).toMatchObject({ readOnlyHint: true });
  expect(byName.complete_handoff.annotations).toMatchObject({ readOnlyHint: false, idempotentHint: true });
  expect(byName.decline_handoff.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
  expect(byName.accept_handoff.description).toMatch(/accept/i);
});

test('a full flow: handoff → inbox → message → view → accept → complete, recorded via mcp', async () => {
  const threadId = await handoff('The /users endpoint now pages; please update the web client.');

  const inbox = ok(await recipient.callTool({ name: 'check_inbox', arguments: {} }));
  expect(inbox.next_cursor).toBeNull();
  expect(inbox.items).toHaveLength(1);
  expect(inbox.items[0]).toMatchObject({
    thread_id: threadId,
    status: 'pending',
    intent: 'inform',
    unread_messages: 0,
    sender: { handle: 'api-dev@acme' },
    recipient: { handle: 'web-dev@acme' },
    summary_preview: 'The /users endpoint now pages; please update the web client.',
  });
  const sent = ok(await sender.callTool({ name: 'check_inbox', arguments: { box: 'sent', status: ['pending'], limit: 5 } }));
  expect(sent.items.map((i: any) => i.thread_id)).toEqual([threadId]);
  expect(ok(await sender.callTool({ name: 'check_inbox', arguments: {} })).items).toEqual([]);

  const message = ok(
    await recipient.callTool({
      name: 'send_message',
      arguments: { thread_id: threadId, body: 'Which page size?', artifacts: [{ type: 'link', url: 'https://example.com/q', title: 'Q' }], payload: { n: 1 } },
    }),
  );
  expect(message).toEqual({ thread_id: threadId, message_id: expect.any(String), sequence_no: 1, created_at: expect.any(String) });

  const unread = ok(await sender.callTool({ name: 'check_inbox', arguments: { box: 'sent' } }));
  expect(unread.items[0].unread_messages).toBe(1);

  const seen = ok(await sender.callTool({ name: 'view_thread', arguments: { thread_id: threadId } }));
  expect(seen.messages).toHaveLength(1);
  expect(seen.messages[0]).toMatchObject({ sequence_no: 1, body: 'Which page size?', payload: { n: 1 }, via: 'mcp' });

  const accepted = ok(await recipient.callTool({ name: 'accept_handoff', arguments: { thread_id: threadId } }));
  expect(accepted).toEqual({ accepted: true, thread_id: threadId, status: 'accepted', accepted_at: expect.any(String) });

  const completed = ok(
    await recipient.callTool({
      name: 'complete_handoff',
      arguments: { thread_id: threadId, result_summary: 'Done', artifacts: [{ type: 'link', url: 'https://example.com/pr/9', title: 'PR' }] },
    }),
  );
  expect(completed).toMatchObject({ thread_id: threadId, status: 'completed', completed_at: expect.any(String) });
  expect(completed.completion_artifacts).toEqual([expect.objectContaining({ type: 'link', url: 'https://example.com/pr/9' })]);

  const thread = ok(await sender.callTool({ name: 'view_thread', arguments: { thread_id: threadId } }));
  expect(thread).toMatchObject({ status: 'completed', completed_summary: 'Done' });
  expect(thread.status_history.map((h: any) => [h.status, h.by, h.via])).toEqual([
    ['pending', 'api-dev@acme', 'mcp'],
    ['accepted', 'web-dev@acme', 'mcp'],
    ['completed', 'web-dev@acme', 'mcp'],
  ]);
});

test('decline_handoff closes a pending handoff', async () => {
  const threadId = await handoff('Could you own the CSS migration?');
  const declined = ok(await recipient.callTool({ name: 'decline_handoff', arguments: { thread_id: threadId, reason: 'No capacity' } }));
  expect(declined).toEqual({ thread_id: threadId, status: 'declined', declined_at: expect.any(String) });
  const thread = ok(await sender.callTool({ name: 'view_thread', arguments: { thread_id: threadId } }));
  expect(thread.status).toBe('declined');
  expect(errorText(await recipient.callTool({ name: 'accept_handoff', arguments: { thread_id: threadId } }))).toMatch(/thread_terminal|invalid_transition/);
});

test('relay errors come back as tool errors carrying the relay symbol and code', async () => {
  const threadId = await handoff('Another one');
  expect(errorText(await recipient.callTool({ name: 'complete_handoff', arguments: { thread_id: threadId } }))).toContain('invalid_transition (-32008)');
  expect(errorText(await stranger.callTool({ name: 'view_thread', arguments: { thread_id: threadId } }))).toContain('not_a_participant (-32005)');
  expect(errorText(await stranger.callTool({ name: 'send_message', arguments: { thread_id: threadId, body: 'hi' } }))).toContain('not_a_participant (-32005)');
  expect(errorText(await sender.callTool({ name: 'accept_handoff', arguments: { thread_id: threadId } }))).toContain('not_authorized_transition (-32009)');
  expect(
    errorText(await sender.callTool({ name: 'handoff_to_teammate', arguments: { to: 'nobody@acme', intent: 'inform', summary: 'hi' } })),
  ).toContain('recipient_not_found (-32004)');
  // Still pending: none of the refused calls changed it.
  expect(ok(await recipient.callTool({ name: 'view_thread', arguments: { thread_id: threadId } })).status).toBe('pending');
});

test('POST /mcp needs a valid API key', async () => {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const missing = await fetch(`${relay.url}/mcp`, { method: 'POST', headers, body });
  expect(missing.status).toBe(401);
  expect(await missing.json()).toMatchObject({ error: { code: -32001, data: { code: 'unauthenticated' } } });
  const wrong = await fetch(`${relay.url}/mcp`, { method: 'POST', headers: { ...headers, authorization: 'Bearer hr_not_a_key' }, body });
  expect(wrong.status).toBe(401);
  const get = await fetch(`${relay.url}/mcp`, { headers: { authorization: `Bearer ${recipientKey}`, accept: 'text/event-stream' } });
  expect(get.status).toBe(405);
});
