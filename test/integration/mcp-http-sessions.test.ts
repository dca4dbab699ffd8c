// /mcp with Mcp-Session-Id sessions, against a real relay: the SDK's Client completes a handle, reads a thread as a
// resource, is told on its GET stream when the thread changes, and fills a prompt; a session is its key's alone, ends
// on DELETE, when idle and at relay stop; one key holds a bounded number; requests without a session still work.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { sendHandoff, text as wireText } from '../helpers/handoffs';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { waitUntil } from '../helpers/wait-until';

const PROTOCOL = '2025-11-25';
const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

let relay: TestRelay;
let senderKey: string;
let recipientKey: string;
let strangerKey: string;
let threadId: string;
const clients: Client[] = [];

/** One raw /mcp request (what a client sends by hand); the JSON-RPC answer read from JSON or from the SSE body. */
async function mcp(
  url: string,
  key: string,
  method: 'POST' | 'GET' | 'DELETE',
  opts: { session?: string; body?: unknown } = {},
): Promise<{ status: number; session: string | null; body: any; response: Response }> {
  const response = await fetch(`${url}/mcp`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      accept: method === 'GET' ? 'text/event-stream' : 'application/json, text/event-stream',
      'mcp-protocol-version': PROTOCOL,
      ...(opts.body ? { 'content-type': 'application/json' } : {}),
      ...(opts.session ? { 'mcp-session-id': opts.session } : {}),
    },
    body: opts.body ? JSON.stringify(opts.body) : undefined,
  });
  let body: any;
  if (method !== 'GET') {
    const raw = await response.text();
    const data = raw.split('\n').find((line) => line.startsWith('data: '));
    body = raw && (data ? JSON.parse(data.slice(6)) : raw.startsWith('{') ? JSON.parse(raw) : raw);
  }
  return { status: response.status, session: response.headers.get('mcp-session-id'), body, response };
}

/** Opens a session by hand: initialize, then the initialized notification. Returns its id. */
async function openSession(url: string, key: string): Promise<string> {
  const init = await mcp(url, key, 'POST', { body: INITIALIZE });
  expect(init.status).toBe(200);
  expect(init.session).toMatch(/^[0-9a-f-]{36}$/);
  const note = await mcp(url, key, 'POST', {
    session: init.session!,
    body: { jsonrpc: '2.0', method: 'notifications/initialized' },
  });
  expect(note.status).toBe(202);
  return init.session!;
}

const listTools = (url: string, key: string, session?: string) =>
  mcp(url, key, 'POST', { session, body: { jsonrpc: '2.0', id: 2, method: 'tools/list' } });

async function sessionClient(key: string): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: 'session-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${relay.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  clients.push(client);
  return { client, transport };
}

beforeAll(async () => {
  relay = await startTestRelay({ name: 'mcp_sessions' });
  senderKey = await relay.register({ handle: 'api-dev@acme', name: 'API developer', role: 'backend' });
  recipientKey = await relay.register({ handle: 'web-dev@acme', name: 'Web developer', role: 'frontend' });
  strangerKey = await relay.register({ handle: 'qa@acme', name: 'QA', role: 'qa' });
  threadId = await sendHandoff(relay, senderKey, 'web-dev@acme', 'Users now page by cursor.');
});

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => {});
  await relay?.stop();
});

test('over a session, the SDK client completes a handle, reads a thread, is told when it changes, and fills a prompt', async () => {
  const { client, transport } = await sessionClient(recipientKey);
  expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
  expect(client.getServerCapabilities()?.resources).toMatchObject({ subscribe: true });

  const completion = await client.complete({
    ref: { type: 'ref/prompt', name: 'hand_off' },
    argument: { name: 'to', value: 'API' },
  });
  expect(completion.completion.values).toEqual(['api-dev@acme']);

  const read = await client.readResource({ uri: `handoff://thread/${threadId}` });
  expect(JSON.parse(String((read.contents[1] as { text: string }).text))).toMatchObject({
    thread_id: threadId,
    status: 'pending',
    messages: [],
  });

  const updated: string[] = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updated.push(n.params.uri));
  expect(await client.subscribeResource({ uri: `handoff://thread/${threadId}` })).toEqual({});
  // The change comes through JSON-RPC on /a2a, from the other side: the session's GET stream carries the news.
  const reply = await relay.rpc(senderKey, 'message/send', {
    task_id: threadId,
    message: wireText('Also the export page.'),
  });
  expect(reply.status).toBe(200);
  await waitUntil(async () => updated.includes(`handoff://thread/${threadId}`), 'resources/updated for the thread');
  const reread = await client.readResource({ uri: `handoff://thread/${threadId}` });
  expect(JSON.parse(String((reread.contents[1] as { text: string }).text)).messages).toEqual([
    expect.objectContaining({ from: 'api-dev@acme', sequence_no: 1 }),
  ]);

  const prompt = await client.getPrompt({ name: 'answer_handoff', arguments: { thread_id: threadId } });
  expect(prompt.messages[0]!.content).toMatchObject({
    type: 'resource',
    resource: { uri: `handoff://thread/${threadId}` },
  });
  expect(JSON.stringify(prompt.messages[0]!.content)).toContain('Also the export page.');
});

test("a session is its key's alone: another key, an unknown id and a deleted session are told 404", async () => {
  const session = await openSession(relay.url, recipientKey);
  expect((await listTools(relay.url, recipientKey, session)).body.result.tools.length).toBeGreaterThan(0);

  // Another teammate's key with this session id: as unknown as a made-up one, for POST, GET and DELETE alike.
  for (const method of ['POST', 'GET', 'DELETE'] as const) {
    const other = await mcp(relay.url, strangerKey, method, {
      session,
      body:
        method === 'POST'
          ? { jsonrpc: '2.0', id: 3, method: 'resources/read', params: { uri: 'handoff://inbox' } }
          : undefined,
    });
    expect(other.status).toBe(404);
    if (method === 'GET') other.body = await other.response.json();
    expect(other.body.error).toMatchObject({ code: -32001, data: { code: 'session_not_found' } });
  }
  const unknown = await listTools(relay.url, recipientKey, '5a1d3c59-0000-4000-8000-000000000000');
  expect(unknown.status).toBe(404);
  expect(unknown.body.error.message).toContain('send initialize without Mcp-Session-Id to open a new one');
  // Nothing the stranger sent touched it: the owner still uses it, then ends it.
  expect((await listTools(relay.url, recipientKey, session)).status).toBe(200);
  expect((await mcp(relay.url, recipientKey, 'DELETE', { session })).status).toBe(200);
  expect((await listTools(relay.url, recipientKey, session)).status).toBe(404);

  // A key that is not valid is refused before any session is looked at.
  const bad = await listTools(relay.url, 'hr_not_a_key', session);
  expect(bad.status).toBe(401);
});

test('a request without Mcp-Session-Id is served statelessly, and GET without a session is not allowed', async () => {
  const stateless = await listTools(relay.url, senderKey);
  expect(stateless.status).toBe(200);
  expect(stateless.session).toBeNull();
  expect(stateless.body.result.tools.map((t: { name: string }) => t.name)).toContain('handoff_to_teammate');
  const get = await mcp(relay.url, senderKey, 'GET');
  expect(get.status).toBe(405);
  expect(get.response.headers.get('allow')).toBe('POST');
  expect((await get.response.json()).error.message).toContain('without Mcp-Session-Id');
});

describe('with a short idle time and two sessions per key', () => {
  let small: TestRelay;
  let stopped = false;
  let key: string;

  beforeAll(async () => {
    small = await startTestRelay({
      name: 'mcp_sessions_small',
      env: { RELAY_MCP_SESSION_IDLE: '1s', RELAY_MCP_SESSIONS_PER_KEY: '2' },
    });
    key = await small.register({ handle: 'api-dev@acme', name: 'API developer' });
  });

  afterAll(async () => {
    if (!stopped) await small?.stop();
  });

  /** The relay's own count of the sessions it holds (a request on the session would keep it alive). */
  const held = async () => {
    const metrics = await fetch(`${small.url}/metrics`, {
      headers: { authorization: `Bearer ${small.adminKey}` },
    }).then((r) => r.text());
    return Number(/^relay_mcp_sessions_open (\d+)$/m.exec(metrics)?.[1]);
  };

  test('an idle session expires and its id is then told 404', async () => {
    const session = await openSession(small.url, key);
    await waitUntil(async () => (await held()) === 0, 'the idle session to end');
    expect((await listTools(small.url, key, session)).status).toBe(404);
    const again = await openSession(small.url, key);
    expect((await listTools(small.url, key, again)).status).toBe(200);
    await mcp(small.url, key, 'DELETE', { session: again });
  });

  test("a key's third session closes its least recently used one, even with a GET stream open; stop ends the rest", async () => {
    const [first, second] = [await openSession(small.url, key), await openSession(small.url, key)];
    expect((await listTools(small.url, key, first)).status).toBe(200); // first is now the more recently used
    const third = await openSession(small.url, key);
    expect((await listTools(small.url, key, second)).status).toBe(404);
    expect((await listTools(small.url, key, first)).status).toBe(200);

    // Streams open on both (first's the older): a new session closes first, and its stream ends.
    const streams = [
      await mcp(small.url, key, 'GET', { session: first }),
      await mcp(small.url, key, 'GET', { session: third }),
    ];
    expect(streams.map((s) => s.status)).toEqual([200, 200]);
    expect(await held()).toBe(2);
    const untilEnd = (s: (typeof streams)[number]) => {
      const reader = s.response.body!.getReader();
      return (async () => {
        for (;;) if ((await reader.read()).done) return true;
      })();
    };
    const [firstEnded, thirdEnded] = streams.map(untilEnd);
    const fourth = await openSession(small.url, key);
    expect(await firstEnded).toBe(true);
    expect((await listTools(small.url, key, first)).status).toBe(404);
    expect((await listTools(small.url, key, third)).status).toBe(200);
    expect((await listTools(small.url, key, fourth)).status).toBe(200);
    expect(await held()).toBe(2);

    // Relay stop ends the sessions' streams (the stop does not wait on them).
    stopped = true;
    await small.stop();
    expect(await thirdEnded).toBe(true);
  });
});
