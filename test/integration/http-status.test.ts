// HTTP status of JSON-RPC answers on one real relay whose FerretDB is its own: a client's mistake keeps 200 (401 for
// authentication), a body that is not application/json is 415 on /a2a and /mcp, and once the relay's store is gone
// its own failure is a 503 with Retry-After and the same JSON-RPC error body.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFerretDb, type RunningFerretDb } from '../../scripts/local-services/ferretdb';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';

let ferret: RunningFerretDb;
let dataDir: string;
let relay: TestRelay;
let alice: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'http-status-'));
  ferret = await startFerretDb({ dataDir, log: () => {} });
  relay = await startTestRelay({ name: 'http_status', env: { MONGODB_URL: ferret.url } });
  alice = await relay.register({ handle: 'alice@acme' });
  await relay.register({ handle: 'bob@acme' });
});

afterAll(async () => {
  await relay?.stop().catch(() => undefined);
  await ferret?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

const send = (text: string) => ({
  recipient: 'bob@acme',
  intent: 'inform',
  message: { parts: [{ type: 'text', text }] },
});

async function post(path: string, contentType: string, body: string) {
  const response = await fetch(`${relay.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${alice}`, 'content-type': contentType },
    body,
  });
  return { status: response.status, body: (await response.json()) as any };
}

describe('while the store is up', () => {
  test("a client's mistakes keep their status: invalid_params 200, unauthenticated 401", async () => {
    const bad = await relay.rpc(alice, 'message/send', { ...send('x'), recipient: 'nobody' });
    expect([bad.status, bad.body.error.data.code]).toEqual([200, 'invalid_params']);
    const unknown = await relay.rpc(alice, 'message/send', { ...send('x'), recipient: 'nobody@acme' });
    expect([unknown.status, unknown.body.error.data.code]).toEqual([200, 'recipient_not_found']);
    const noKey = await relay.rpc(undefined, 'tasks/list', {});
    expect([noKey.status, noKey.body.error.data.code]).toEqual([401, 'unauthenticated']);
  });

  test.each(['/a2a', '/mcp'])(
    '%s answers 415 in the JSON-RPC error shape for a body that is not application/json',
    async (path) => {
      const rpc = JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: path === '/a2a' ? 'message/send' : 'tools/list',
        params: path === '/a2a' ? send('as text') : {},
      });
      for (const type of ['text/plain', 'text/plain; charset=utf-8', 'application/x-www-form-urlencoded']) {
        const answer = await post(path, type, rpc);
        expect(answer).toEqual({
          status: 415,
          body: {
            jsonrpc: '2.0',
            id: null,
            error: {
              code: -32600,
              message: expect.stringContaining('Content-Type must be application/json'),
              data: { code: 'invalid_request', request_id: expect.any(String) },
            },
          },
        });
      }
      expect(await relay.store.threads.countDocuments({})).toBe(0);
    },
  );

  test('/mcp takes application/json with a charset', async () => {
    const init = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    });
    const response = await fetch(`${relay.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${alice}`,
        'content-type': 'application/json; charset=utf-8',
        accept: 'application/json, text/event-stream',
      },
      body: init,
    });
    expect(response.status).toBe(200);
  });
});

describe('once the store is gone', () => {
  beforeAll(async () => {
    await ferret.stop();
  });

  test('message/send and tasks/list answer 503 with Retry-After and the JSON-RPC error body', async () => {
    for (const [method, params] of [
      ['message/send', send('while the store is down')],
      ['tasks/list', {}],
    ] as const) {
      const response = await fetch(`${relay.url}/a2a`, {
        method: 'POST',
        headers: { authorization: `Bearer ${alice}`, 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 9, method, params }),
      });
      expect(response.status).toBe(503);
      expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await response.json()).toEqual({
        jsonrpc: '2.0',
        id: 9,
        error: {
          code: -32016,
          message: expect.stringContaining('retry'),
          data: { code: 'unavailable', request_id: expect.any(String) },
        },
      });
    }
  });
});
