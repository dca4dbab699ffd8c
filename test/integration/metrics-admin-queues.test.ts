// bull-board at /admin/queues on a real relay: only the admin key opens it (Bearer, or Basic for a browser),
// it shows the relay's queues, and a cross-origin change through Basic credentials is refused.
import { startFakeSlack, type FakeSlack } from '../../scripts/fake-slack/fake-slack-api';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';

let slack: FakeSlack;
let relay: TestRelay;

beforeAll(async () => {
  slack = await startFakeSlack();
  relay = await startTestRelay({ name: 'admin_queues', slack });
});

afterAll(async () => {
  await relay?.stop();
  await slack?.close();
});

const basic = (password: string) => `Basic ${Buffer.from(`admin:${password}`).toString('base64')}`;

test('without the admin key the board answers 401 with a Basic challenge, for the page and its API', async () => {
  for (const path of ['/admin/queues', '/admin/queues/api/queues']) {
    const none = await fetch(`${relay.url}${path}`);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Basic realm=/);
    expect((await fetch(`${relay.url}${path}`, { headers: { authorization: `Bearer ${relay.adminKey}x` } })).status).toBe(401);
    expect((await fetch(`${relay.url}${path}`, { headers: { authorization: basic('wrong-password') } })).status).toBe(401);
  }
  const apiKey = await relay.register({ handle: 'not-an-admin@acme' });
  expect((await fetch(`${relay.url}/admin/queues/api/queues`, { headers: { authorization: `Bearer ${apiKey}` } })).status).toBe(401);
});

test('with the admin key as a Bearer token or Basic password the board opens and lists the delivery queues', async () => {
  const page = await fetch(`${relay.url}/admin/queues`, { headers: { authorization: `Bearer ${relay.adminKey}` } });
  expect(page.status).toBe(200);
  expect(page.headers.get('content-type')).toMatch(/^text\/html/);
  const api = await fetch(`${relay.url}/admin/queues/api/queues`, { headers: { authorization: basic(relay.adminKey) } });
  expect(api.status).toBe(200);
  const body = (await api.json()) as { queues: Array<{ name: string }> };
  expect(body.queues.map((q) => q.name)).toEqual(expect.arrayContaining(['slack']));
});

test('a change sent with Basic credentials from another origin is refused; from the same origin it goes through', async () => {
  const path = `${relay.url}/admin/queues/api/queues/slack/pause`;
  const foreign = await fetch(path, { method: 'PUT', headers: { authorization: basic(relay.adminKey), origin: 'https://evil.example' } });
  expect(foreign.status).toBe(403);
  const own = await fetch(path, { method: 'PUT', headers: { authorization: basic(relay.adminKey), origin: relay.url } });
  expect(own.status).toBe(200);
  const resumed = await fetch(`${relay.url}/admin/queues/api/queues/slack/resume`, { method: 'PUT', headers: { authorization: `Bearer ${relay.adminKey}` } });
  expect(resumed.status).toBe(200);
});
