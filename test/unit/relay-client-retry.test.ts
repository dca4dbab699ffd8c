// The MCP client's retries (mcp/relay-client.ts, p-retry) against a scripted relay on loopback: a 5xx or a dropped
// connection is retried with the same Idempotency-Key, the relay's refusal is not, and what the tool sees at the end.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpRelayClient, RelayCallError } from '../../mcp/relay-client';

type Answer = (res: ServerResponse) => void;

const seen: Array<{ method: string; idempotencyKey?: string; url: string }> = [];
let script: Answer[] = [];
let server: Server;
let relayUrl: string;

const ok =
  (result: unknown): Answer =>
  (res) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: 1, result }));
const status =
  (code: number, body = 'bad gateway', headers: Record<string, string> = {}): Answer =>
  (res) =>
    res.writeHead(code, headers).end(body);
const refusal: Answer = (res) =>
  res.writeHead(200, { 'content-type': 'application/json' }).end(
    JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      error: { code: -32602, message: 'task_id is not a handoff', data: { code: 'invalid_params' } },
    }),
  );
const hangUp: Answer = (res) => res.socket?.destroy();

async function body(req: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of req) text += String(chunk);
  return text;
}

beforeAll(async () => {
  server = createServer((req, res) => {
    void body(req).then((text) => {
      const method = text ? (JSON.parse(text) as { method: string }).method : `GET ${req.url!.split('?')[0]}`;
      seen.push({ method, idempotencyKey: req.headers['idempotency-key'] as string | undefined, url: req.url! });
      const answer = script.shift() ?? status(500, 'script ran out');
      answer(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  relayUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

beforeEach(() => {
  seen.length = 0;
  script = [];
});

const client = (retries = 3) =>
  new HttpRelayClient({ relayUrl, apiKey: 'hr_test', retry: { retries, minTimeout: 1, factor: 1, maxTimeout: 1 } });

test('a read answered 502, then 503 with Retry-After, then dropped, is asked again until it is answered', async () => {
  script = [status(502), status(503, '', { 'retry-after': '0' }), hangUp, ok({ id: 't-1' })];
  const relay = client();
  await expect(relay.call('tasks/get', { task_id: 't-1' })).resolves.toEqual({ id: 't-1' });
  expect(seen.map((s) => s.method)).toEqual(['tasks/get', 'tasks/get', 'tasks/get', 'tasks/get']);
  relay.close();
});

test('a change is repeated under the one Idempotency-Key it was first sent with', async () => {
  script = [status(502), ok({ id: 't-2' })];
  const relay = client();
  await relay.call('message/send', { message: { parts: [] } });
  expect(seen).toHaveLength(2);
  expect(seen[0]!.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
  expect(seen[1]!.idempotencyKey).toBe(seen[0]!.idempotencyKey);
  relay.close();
});

test("the relay's refusal is the tool's answer at once, not retried", async () => {
  script = [refusal];
  const relay = client();
  const failure = relay.call('tasks/get', { task_id: 'nope' });
  await expect(failure).rejects.toThrow(RelayCallError);
  await expect(failure).rejects.toMatchObject({ code: 'invalid_params', numericCode: -32602 });
  expect(seen).toHaveLength(1);
  relay.close();
});

test('after the last retry the last failure is what the tool sees', async () => {
  script = [status(502), status(502), status(502)];
  const relay = client(2);
  await expect(relay.call('tasks/get', { task_id: 't-3' })).rejects.toMatchObject({
    code: 'relay_unavailable',
    message: 'relay_unavailable: the relay answered HTTP 502',
  });
  expect(seen).toHaveLength(3);
  relay.close();
});

test('a method that is neither a read nor keyed is sent once', async () => {
  script = [status(502)];
  const relay = client();
  await expect(relay.call('some/other', {})).rejects.toMatchObject({ code: 'relay_unavailable' });
  expect(seen).toHaveLength(1);
  relay.close();
});

test('a relay nobody answers for is named with the setting to check', async () => {
  const relay = new HttpRelayClient({
    relayUrl: 'http://127.0.0.1:1',
    apiKey: 'hr_test',
    retry: { retries: 1, minTimeout: 1 },
  });
  await expect(relay.call('tasks/get', { task_id: 't-4' })).rejects.toThrow(
    'relay_unreachable: cannot reach the relay at http://127.0.0.1:1 (ECONNREFUSED); is it running? (RELAY_URL)',
  );
  relay.close();
});

test('the event long poll is retried too, its refusal is not', async () => {
  script = [
    status(503),
    (res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ events: [], cursor: 'c-9' })),
  ];
  const relay = client();
  await expect(relay.events({ wait_seconds: 0 })).resolves.toEqual({ events: [], cursor: 'c-9' });
  expect(seen.map((s) => s.method)).toEqual(['GET /events', 'GET /events']);
  seen.length = 0;
  script = [
    (res) =>
      res
        .writeHead(400, { 'content-type': 'application/json' })
        .end(JSON.stringify({ code: 'invalid_params', message: 'since is not a cursor' })),
  ];
  await expect(relay.events({ since: 'x', wait_seconds: 0 })).rejects.toMatchObject({ code: 'invalid_params' });
  expect(seen).toHaveLength(1);
  relay.close();
});
