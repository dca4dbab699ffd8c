// Fault: the relay loses its database. A request whose API key cannot be looked up is the relay's failure,
// not the caller's: 503 with the relay's error shape (JSON-RPC on /a2a and /mcp, REST elsewhere), never a 401; and
// a REST route that cannot reach it answers 503 with Retry-After too, never a 500.
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';

let relay: TestRelay;
let key: string;

beforeAll(async () => {
  relay = await startTestRelay({ name: 'mongo_outage', env: { RELAY_ROLES: 'api' } });
  key = await relay.register({ handle: 'outage@acme' });
  // The database goes away under the running relay (its client is closed; nothing reconnects it).
  await relay.store.close();
});

afterAll(async () => {
  await relay?.stop();
});

test('POST /a2a with a key the relay cannot look up answers 503 unavailable in the JSON-RPC error shape', async () => {
  const { status, body } = await relay.rpc(key, 'tasks/list', {});
  expect(status).toBe(503);
  expect(body).toEqual({
    jsonrpc: '2.0',
    id: 1,
    error: {
      code: -32016,
      message: expect.stringMatching(/retry/),
      data: { code: 'unavailable', request_id: expect.any(String) },
    },
  });
});

test('a REST route with a key the relay cannot look up answers 503 unavailable in the REST error shape', async () => {
  const { status, body } = await relay.rest('GET', '/agents/me', key);
  expect(status).toBe(503);
  expect(body).toEqual({
    code: 'unavailable',
    message: expect.stringMatching(/retry/),
    request_id: expect.any(String),
  });
});

test('an admin route, whose key needs no lookup, answers 503 unavailable with Retry-After when its write cannot reach the database', async () => {
  const response = await fetch(`${relay.url}/admin/agents`, {
    method: 'POST',
    headers: { authorization: `Bearer ${relay.adminKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ handle: 'later@acme', display_name: 'Later', role: 'backend' }),
  });
  expect(response.status).toBe(503);
  expect(response.headers.get('retry-after')).toBe('2');
  expect(await response.json()).toEqual({
    code: 'unavailable',
    message: expect.stringMatching(/retry/),
    request_id: expect.any(String),
  });
});

test('without a key the answer is still 401: no lookup was needed', async () => {
  const { status, body } = await relay.rpc(undefined, 'tasks/list', {});
  expect(status).toBe(401);
  expect(body.error.data.code).toBe('unauthenticated');
});

test('POST /mcp with a key the relay cannot look up answers 503 unavailable in the JSON-RPC error shape, with Retry-After', async () => {
  const response = await fetch(`${relay.url}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  expect(response.status).toBe(503);
  expect(response.headers.get('retry-after')).toBe('2');
  expect(await response.json()).toEqual({
    jsonrpc: '2.0',
    id: null,
    error: {
      code: -32016,
      message: expect.stringMatching(/retry/),
      data: { code: 'unavailable', request_id: expect.any(String) },
    },
  });
});
