// GET / on a real relay: a small HTML page with the relay's version (package.json's), its health, and links to what a
// person opens next, that loads nothing from elsewhere; /health answers as /healthz; /inbox says where the pages are.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';

let relay: TestRelay;
let worker: TestRelay;

beforeAll(async () => {
  relay = await startTestRelay({ name: 'home_page' });
  worker = await startTestRelay({ name: 'home_page_worker', env: { RELAY_ROLES: 'worker' } });
});

afterAll(async () => {
  await relay?.stop();
  await worker?.stop();
});

test('GET / is an HTML page with the version, the health of each dependency and the links', async () => {
  const { version } = JSON.parse(await readFile(join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
    version: string;
  };
  const response = await fetch(`${relay.url}/`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/html/);
  expect(response.headers.get('content-security-policy')).toContain("default-src 'none'");
  const html = await response.text();
  expect(html).toContain(`<h1>handoff-relay <span class="meta">${version}</span></h1>`);
  expect(html).toContain('<span id="health" class="ok">ready</span>');
  expect(html).toContain('<li>mongodb: <span class="ok">ok</span></li>');
  expect(html).toContain('<li>redis: <span class="ok">ok</span></li>');
  for (const href of ['/readyz', '/admin/queues', '/metrics', '/.well-known/agent-card.json', '/inbox'])
    expect(html).toContain(`<a href="${href}">`);
  expect(html).toContain('README.md');
  // Nothing from elsewhere: no script, no outside stylesheet, image or font.
  expect(html).not.toMatch(/<script|<link|<img|src=|https?:\/\//);
  // Every link it shows answers (the admin ones with the key).
  for (const href of [...html.matchAll(/<a href="([^"]+)">/g)].map((m) => m[1]!)) {
    const linked = await fetch(`${relay.url}${href}`, { headers: { authorization: `Bearer ${relay.adminKey}` } });
    expect([href, linked.status]).toEqual([href, 200]);
    await linked.text();
  }
});

test('/health answers as /healthz', async () => {
  for (const path of ['/health', '/healthz']) {
    const response = await fetch(`${relay.url}${path}`);
    expect([path, response.status, await response.json()]).toEqual([path, 200, { status: 'ok' }]);
  }
});

test("GET /inbox is a page saying where each handoff's page is, not a JSON 404", async () => {
  const response = await fetch(`${relay.url}/inbox`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/html/);
  expect(await response.text()).toContain('open the inbox_url');
});

test('a relay without the api role shows the page and /health too, linking only what it serves', async () => {
  const html = await (await fetch(`${worker.url}/`)).text();
  expect(html).toContain('<span id="health" class="ok">ready</span>');
  expect(html).toContain('<a href="/metrics">');
  expect(html).not.toContain('<a href="/admin/queues">');
  expect(html).not.toContain('<a href="/inbox">');
  expect((await fetch(`${worker.url}/health`)).status).toBe(200);
});
