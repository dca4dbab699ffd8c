// The admin key on /metrics and bull-board at /admin/queues, on a real relay: both take it the same two ways (Bearer,
// or Basic for a browser), both refuse without it with a Basic and a Bearer challenge and a message saying how; the
// board shows the relay's queues, and a cross-origin change through Basic credentials is refused.
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

const ADMIN_PATHS = ['/metrics', '/admin/queues', '/admin/queues/api/queues'];

test.each(ADMIN_PATHS)(
  '%s without the admin key answers 401 with Basic and Bearer challenges and says how to send the key',
  async (path) => {
    const apiKey = await relay.register({ handle: `not-an-admin-${path.replace(/\W/g, '')}@acme` });
    for (const authorization of [
      undefined,
      `Bearer ${relay.adminKey}x`,
      basic('wrong-password'),
      `Bearer ${apiKey}`,
      'Basic !!!',
    ]) {
      const refused = await fetch(`${relay.url}${path}`, { headers: authorization ? { authorization } : {} });
      expect(refused.status).toBe(401);
      expect(refused.headers.get('www-authenticate')).toBe(
        'Basic realm="handoff-relay admin", charset="UTF-8", Bearer realm="handoff-relay admin"',
      );
      const body = (await refused.json()) as { code: string; message: string };
      expect(body.code).toBe('unauthenticated');
      expect(body.message).toContain(
        'as `Authorization: Bearer <key>`, or as the password of HTTP Basic with any user name',
      );
    }
  },
);

test.each(ADMIN_PATHS)('%s opens to the admin key as a Bearer token and as a Basic password', async (path) => {
  for (const authorization of [`Bearer ${relay.adminKey}`, basic(relay.adminKey)]) {
    const page = await fetch(`${relay.url}${path}`, { headers: { authorization } });
    expect(page.status).toBe(200);
    await page.text();
  }
});

test('with the admin key the board lists the delivery queues, and /metrics serves Prometheus text', async () => {
  const page = await fetch(`${relay.url}/admin/queues`, { headers: { authorization: `Bearer ${relay.adminKey}` } });
  expect(page.headers.get('content-type')).toMatch(/^text\/html/);
  await page.text();
  const api = await fetch(`${relay.url}/admin/queues/api/queues`, {
    headers: { authorization: basic(relay.adminKey) },
  });
  const body = (await api.json()) as { queues: Array<{ name: string }> };
  expect(body.queues.map((q) => q.name)).toEqual(expect.arrayContaining(['slack']));
  const metrics = await fetch(`${relay.url}/metrics`, { headers: { authorization: basic(relay.adminKey) } });
  expect(metrics.headers.get('content-type')).toMatch(/^text\/plain/);
  expect(await metrics.text()).toContain('relay_');
});

test('a change sent with Basic credentials from another origin is refused; from the same origin it goes through', async () => {
  const path = `${relay.url}/admin/queues/api/queues/slack/pause`;
  const foreign = await fetch(path, {
    method: 'PUT',
    headers: { authorization: basic(relay.adminKey), origin: 'https://evil.example' },
  });
  expect(foreign.status).toBe(403);
  const own = await fetch(path, {
    method: 'PUT',
    headers: { authorization: basic(relay.adminKey), origin: relay.url },
  });
  expect(own.status).toBe(200);
  const resumed = await fetch(`${relay.url}/admin/queues/api/queues/slack/resume`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${relay.adminKey}` },
  });
  expect(resumed.status).toBe(200);
});
