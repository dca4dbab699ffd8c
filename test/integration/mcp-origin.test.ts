// POST/GET /mcp on a real relay refuses a DNS-rebinding request (foreign Host or Origin) with 403 before reading its key.
import http from 'node:http';
import { connectMcpHttp } from '../helpers/mcp-http-client';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';

let relay: TestRelay;
let key: string;

beforeAll(async () => {
  relay = await startTestRelay({ name: 'mcp_origin' });
  key = await relay.register({ handle: 'origin-dev@acme', name: 'Origin developer', role: 'backend' });
});

afterAll(async () => {
  await relay?.stop();
});

const initialize = JSON.stringify({
  jsonrpc: '2.0',
  id: 7,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'origin-test', version: '1.0.0' } },
});

/** One request with the Host and Origin a browser would send (fetch cannot set Host). */
function send(method: 'POST' | 'GET', headers: Record<string, string>): Promise<{ status: number; body: any }> {
  const url = new URL(`${relay.url}/mcp`);
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method,
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          const json = text.startsWith('{') ? JSON.parse(text) : JSON.parse(/^data: (.*)$/m.exec(text)?.[1] ?? 'null');
          resolve({ status: res.statusCode ?? 0, body: json });
        });
      },
    );
    req.on('error', reject);
    req.end(method === 'POST' ? initialize : undefined);
  });
}

test('a rebinding request (Host and Origin evil.example.com) is refused with 403 whether or not its key is valid', async () => {
  const auths: Array<Record<string, string>> = [
    { authorization: `Bearer ${key}` },
    {},
    { authorization: 'Bearer hr_not_a_key' },
  ];
  for (const auth of auths) {
    const answer = await send('POST', { host: 'evil.example.com', origin: 'http://evil.example.com', ...auth });
    expect(answer.status).toBe(403);
    expect(answer.body).toMatchObject({
      jsonrpc: '2.0',
      id: null,
      error: {
        code: -32002,
        message: expect.stringContaining('Host "evil.example.com" is not this relay\'s'),
        data: { code: 'forbidden', details: { header: 'Host' } },
      },
    });
  }
  const get = await send('GET', { host: 'evil.example.com', authorization: `Bearer ${key}` });
  expect(get.status).toBe(403);
});

test("a foreign Origin under the relay's own Host is refused; a local page and a program are served", async () => {
  const host = new URL(relay.url).host;
  const foreign = await send('POST', { host, origin: 'https://evil.example.com', authorization: `Bearer ${key}` });
  expect(foreign.status).toBe(403);
  expect(foreign.body.error).toMatchObject({
    code: -32002,
    message: expect.stringContaining('Origin "https://evil.example.com" may not call /mcp'),
    data: { details: { header: 'Origin' } },
  });

  const localPage = await send('POST', {
    host: `localhost:${new URL(relay.url).port}`,
    origin: 'http://localhost:5173',
    authorization: `Bearer ${key}`,
  });
  expect(localPage.status).toBe(200);
  expect(localPage.body).toMatchObject({ id: 7, result: { serverInfo: { name: 'handoff-relay' } } });

  // The SDK's own client sends no Origin: served as before.
  const client = await connectMcpHttp(relay.url, key, 'origin-test');
  expect((await client.listTools()).tools.length).toBeGreaterThan(0);
  await client.close();
});
