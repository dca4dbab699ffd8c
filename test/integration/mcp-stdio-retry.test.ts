// The real stdio MCP server process against a relay behind a flaky proxy: a 5xx after the relay already created the
// thread (a bare 502, or a 503 with Retry-After and the JSON-RPC error body the relay sends for its own failures) is
// retried with the same Idempotency-Key and yields one thread; a relay that is down is a tool error, not a crash; a
// missing RELAY_API_KEY stops the process with one line naming it.
import { execFile } from 'node:child_process';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { findFreePort } from '../../scripts/local-services/ports';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';

const ROOT = join(__dirname, '..', '..');
const STDIO = join(ROOT, 'dist/mcp/stdio.js');
const run = promisify(execFile);

let relay: TestRelay;
let proxy: Server;
let proxyUrl: string;
let senderKey: string;
const sends: Array<{ idempotencyKey: string | undefined; upstreamStatus: number; answered: number }> = [];
/** How the proxy answers the first message/send after it has forwarded it (the relay did the work). */
let firstSendFailure: 'bare-502' | 'relay-503' = 'bare-502';
/** The answer the relay gives for its own failures, as the client sees it. */
const RELAY_503 = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  error: {
    code: -32016,
    message: 'The relay cannot reach its database or queue right now; retry in a moment',
    data: { code: 'unavailable', request_id: 'r-1' },
  },
});
const clients: Client[] = [];

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Forwards everything to the relay; the first message/send is forwarded and then answered 502 to the client. */
function startProxy(target: string): Promise<Server> {
  const server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) {
        if (typeof value === 'string' && !['host', 'connection', 'content-length'].includes(name))
          headers[name] = value;
      }
      const upstream = await fetch(`${target}${req.url}`, {
        method: req.method,
        headers,
        body: ['GET', 'HEAD'].includes(req.method!) ? undefined : body.toString('utf8'),
      });
      const text = await upstream.text();
      let method: string | undefined;
      if (req.method === 'POST' && req.url === '/a2a') {
        try {
          method = (JSON.parse(body.toString('utf8')) as { method?: string }).method;
        } catch {
          method = undefined;
        }
      }
      if (method === 'message/send') {
        const first = sends.length === 0;
        const answered = first ? (firstSendFailure === 'bare-502' ? 502 : 503) : upstream.status;
        sends.push({
          idempotencyKey: req.headers['idempotency-key'] as string | undefined,
          upstreamStatus: upstream.status,
          answered,
        });
        if (first && firstSendFailure === 'bare-502') {
          res.writeHead(502, { 'content-type': 'text/plain' }).end('bad gateway');
          return;
        }
        if (first) {
          res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '1' }).end(RELAY_503);
          return;
        }
      }
      res
        .writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' })
        .end(text);
    })().catch((error: Error) => {
      if (!res.headersSent) res.writeHead(500).end(error.message);
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function connect(env: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'retry-test', version: '1.0.0' });
  clients.push(client);
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [STDIO],
      cwd: ROOT,
      env: { PATH: process.env.PATH!, HOME: process.env.HOME ?? '/root', ...env },
      stderr: 'pipe',
    }),
  );
  return client;
}

const textOf = (result: Awaited<ReturnType<Client['callTool']>>) =>
  (result.content as Array<{ type: string; text?: string }>).map((c) => c.text ?? '').join('\n');

beforeAll(async () => {
  relay = await startTestRelay({ name: 'mcp_stdio_retry' });
  senderKey = await relay.register({ handle: 'api-dev@acme' });
  await relay.register({ handle: 'web-dev@acme' });
  proxy = await startProxy(relay.url!);
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => undefined);
  await new Promise((resolve) => proxy?.close(resolve));
  await relay?.stop();
});

test('a 502 after the relay created the thread is retried with the same Idempotency-Key: one thread', async () => {
  const mcp = await connect({ RELAY_URL: proxyUrl, RELAY_API_KEY: senderKey });
  const result = await mcp.callTool({
    name: 'handoff_to_teammate',
    arguments: { to: 'web-dev@acme', intent: 'inform', summary: 'The /users endpoint now pages with next_cursor.' },
  });
  expect(result.isError).toBeFalsy();
  const threadId = (result.structuredContent as { thread_id?: string }).thread_id;
  expect(threadId).toEqual(expect.any(String));

  const threads = await relay.store.threads.find({ from: 'api-dev@acme' }).toArray();
  expect(threads.map((t) => t._id)).toEqual([threadId]);

  expect(sends).toHaveLength(2);
  expect(sends[0].upstreamStatus).toBe(200); // the relay did the work; the client only saw the 502
  expect(sends[0].answered).toBe(502);
  expect(sends[0].idempotencyKey).toEqual(expect.any(String));
  expect(sends[1].idempotencyKey).toBe(sends[0].idempotencyKey);
  expect(sends[1].answered).toBe(200);
});

test('a 503 with Retry-After and the JSON-RPC error body is retried with the same Idempotency-Key: one thread', async () => {
  sends.length = 0;
  firstSendFailure = 'relay-503';
  const mcp = await connect({ RELAY_URL: proxyUrl, RELAY_API_KEY: senderKey });
  const result = await mcp.callTool({
    name: 'handoff_to_teammate',
    arguments: { to: 'web-dev@acme', intent: 'inform', summary: 'Retried after the relay said 503.' },
  });
  expect(result.isError).toBeFalsy();
  const threadId = (result.structuredContent as { thread_id?: string }).thread_id;
  const threads = await relay.store.threads
    .find({ from: 'api-dev@acme', summary: 'Retried after the relay said 503.' })
    .toArray();
  expect(threads.map((t) => t._id)).toEqual([threadId]);
  expect(sends.map((s) => [s.upstreamStatus, s.answered])).toEqual([
    [200, 503],
    [200, 200],
  ]);
  expect(sends[1].idempotencyKey).toBe(sends[0].idempotencyKey);
});

test('a relay that is down is a relay_unreachable tool error and the server keeps running', async () => {
  const closedPort = await findFreePort();
  const mcp = await connect({ RELAY_URL: `http://127.0.0.1:${closedPort}`, RELAY_API_KEY: senderKey });
  const result = await mcp.callTool({
    name: 'handoff_to_teammate',
    arguments: { to: 'web-dev@acme', intent: 'inform', summary: 'hello' },
  });
  expect(result.isError).toBe(true);
  expect(textOf(result)).toContain('relay_unreachable');
  const tools = await mcp.listTools();
  expect(tools.tools.map((t) => t.name)).toContain('handoff_to_teammate');
});

test('a missing RELAY_API_KEY exits 1 with one line on stderr naming it', async () => {
  const failure = (await run(process.execPath, [STDIO], {
    cwd: ROOT,
    env: { PATH: process.env.PATH!, RELAY_URL: relay.url! },
    timeout: 15_000,
  }).then(
    () => undefined,
    (error: unknown) => error,
  )) as { code?: number; stderr?: string } | undefined;
  expect(failure?.code).toBe(1);
  const lines = failure!.stderr!.trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain('RELAY_API_KEY');
});
