// check_inbox with wait_seconds and since, over the stdio server (which long-polls GET /events over HTTP) and over
// Streamable HTTP (in process): it answers as soon as something changes after the cursor, and empty when time is up.
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { connectMcpHttp, toolErrorText, toolOk as ok } from '../helpers/mcp-http-client';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { sendHandoff } from '../helpers/handoffs';

const STDIO = join(__dirname, '..', '..', 'dist', 'mcp', 'stdio.js');
let relay: TestRelay;
let senderKey: string;
const clients: Record<string, Client> = {};

beforeAll(async () => {
  relay = await startTestRelay({ name: 'mcp_inbox_wait' });
  senderKey = await relay.register({ handle: 'api-dev@acme' });
  const recipientKey = await relay.register({ handle: 'web-dev@acme' });
  const stdio = new Client({ name: 'inbox-wait-test', version: '1.0.0' });
  await stdio.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [STDIO],
      env: { PATH: process.env.PATH!, RELAY_URL: relay.url, RELAY_API_KEY: recipientKey },
      stderr: 'pipe',
    }),
  );
  clients.stdio = stdio;
  clients.http = await connectMcpHttp(relay.url, recipientKey);
});

afterAll(async () => {
  for (const client of Object.values(clients)) await client.close();
  await relay?.stop();
});

describe.each(['stdio', 'http'])('check_inbox over %s', (name) => {
  const client = () => clients[name]!;

  test('wait_seconds returns early when a new handoff arrives, with the change and a new events_cursor', async () => {
    const first = ok(await client().callTool({ name: 'check_inbox', arguments: { wait_seconds: 0 } }));
    expect(first).toMatchObject({ events_cursor: expect.stringMatching(/^\d+$/), changes: [] });

    const started = Date.now();
    const waiting = client().callTool({
      name: 'check_inbox',
      arguments: { wait_seconds: 45, since: first.events_cursor },
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const id = await sendHandoff(relay, senderKey, 'web-dev@acme', `wake ${name}`);
    const answer = ok(await waiting);
    expect(Date.now() - started).toBeLessThan(45_000);
    expect(answer.changes).toEqual([
      {
        cursor: expect.any(String),
        thread_id: id,
        type: 'thread.created',
        at: expect.any(String),
        by: 'api-dev@acme',
        via: 'a2a',
      },
    ]);
    expect(answer.events_cursor).toBe(answer.changes[0].cursor);
    expect(Number(answer.events_cursor)).toBeGreaterThan(Number(first.events_cursor));
    expect(answer.items.map((i: any) => i.thread_id)).toContain(id);

    // What happened between two calls is not lost: an accept made before the next call comes back at once.
    const accepted = await relay.rpc(senderKey, 'tasks/cancel', { task_id: id });
    expect(accepted.body.result.status).toBe('cancelled');
    const next = ok(
      await client().callTool({ name: 'check_inbox', arguments: { wait_seconds: 45, since: answer.events_cursor } }),
    );
    expect(next.changes.map((c: any) => [c.type, c.thread_id])).toEqual([['thread.cancelled', id]]);
  });

  test('with nothing new it answers when the time is up: no changes, the same cursor', async () => {
    const { events_cursor } = ok(await client().callTool({ name: 'check_inbox', arguments: { wait_seconds: 0 } }));
    const answer = ok(
      await client().callTool({ name: 'check_inbox', arguments: { wait_seconds: 1, since: events_cursor } }),
    );
    expect(answer).toMatchObject({ changes: [], events_cursor });
  });

  test('a cursor that is not one, or past the end, is refused; without wait_seconds or since the answer is as before', async () => {
    expect(toolErrorText(await client().callTool({ name: 'check_inbox', arguments: { since: 'abc' } }))).toContain(
      'events_cursor',
    );
    expect(toolErrorText(await client().callTool({ name: 'check_inbox', arguments: { wait_seconds: 61 } }))).toContain(
      'wait_seconds',
    );
    expect(toolErrorText(await client().callTool({ name: 'check_inbox', arguments: { since: '999999' } }))).toContain(
      'invalid_params (-32602)',
    );
    const plain = ok(await client().callTool({ name: 'check_inbox', arguments: {} }));
    expect(Object.keys(plain).sort()).toEqual(['items', 'next_cursor', 'provenance_nonce']);
  });
});
