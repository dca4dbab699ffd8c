// `npm run slack:local` in a real browser (Playwright driving Debian's Chromium): the page lists the registered
// people, a handoff sent through MCP appears as the recipient's DM drawn from its Block Kit, a click on Accept reaches
// the relay signed as Slack signs it and the DM redraws; /handoff opens the new-handoff modal with a fresh trigger_id.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { findFreePort } from '../../scripts/local-services/ports';
import { connectMcpHttp, toolOk } from '../helpers/mcp-http-client';
import { queuePrefix } from '../helpers/queue-keys';
import { testMongoUrl, testRedisUrl, uniqueName } from '../helpers/test-env';
import { waitUntil } from '../helpers/wait-until';

const LOCAL_SLACK = join(__dirname, '..', '..', 'dist', 'scripts', 'local-slack', 'local-slack.js');
const CHROMIUM = '/usr/bin/chromium';
const ALICE = 'U0ALICE01';
const BOB = 'U0BOB0001';

let child: ChildProcess;
let output = '';
let relayUrl: string;
let pageUrl: string;
const adminKey = `hra_${randomBytes(24).toString('base64url')}`;
let browser: BrowserContext;
let profile: string;
let page: Page;

beforeAll(async () => {
  const port = await findFreePort();
  relayUrl = `http://127.0.0.1:${port}`;
  child = spawn('node', [LOCAL_SLACK, '--page-port', '0'], {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      PORT: String(port),
      MONGODB_URL: testMongoUrl(),
      MONGODB_DB: uniqueName('local_slack'),
      REDIS_URL: testRedisUrl(),
      RELAY_QUEUE_PREFIX: queuePrefix('local_slack'),
      RELAY_ADMIN_KEY: adminKey,
      RELAY_KEY_PEPPER: randomBytes(32).toString('hex'),
      RELAY_DIGEST_AT: 'off',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  pageUrl = await waitUntil(
    async () => /Local Slack \(development only[^\n]*: (http:\/\/\S+)/.exec(output)?.[1],
    `the local Slack page; output so far:\n${output}`,
    30_000,
  );
  profile = await mkdtemp(join(tmpdir(), 'local-slack-chromium-'));
  // A fresh profile (Playwright passes it as --user-data-dir); without the networking flags Chromium calls out.
  browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
});

afterAll(async () => {
  await browser?.close();
  if (child && child.exitCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
  if (profile) await rm(profile, { recursive: true, force: true });
});

async function register(handle: string, slackUser: string): Promise<string> {
  const response = await fetch(`${relayUrl}/admin/agents`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ handle, name: handle.split('@')[0], role: 'engineer', slack_user_id: slackUser }),
  });
  const body = (await response.json()) as { api_key: string };
  return body.api_key;
}

test('the page says it is a development tool, lists the people, and shows a DM sent through MCP; Accept redraws it', async () => {
  const aliceKey = await register('alice@acme', ALICE);
  await register('bob@acme', BOB);
  page = await browser.newPage();
  await page.goto(`${pageUrl}?user=${BOB}`);
  await page.getByText('Development only.').waitFor();
  await page.getByRole('link', { name: 'bob (bob@acme)' }).waitFor();
  await page.getByRole('link', { name: 'alice (alice@acme)' }).waitFor();

  const mcp = await connectMcpHttp(relayUrl, aliceKey);
  try {
    toolOk(
      await mcp.callTool({
        name: 'handoff_to_teammate',
        arguments: { to: 'bob@acme', intent: 'inform', summary: 'Paging moved to cursors in /users' },
      }),
    );
  } finally {
    await mcp.close();
  }

  const dm = page.locator('#dm .msg').filter({ hasText: 'Paging moved to cursors in /users' });
  await dm.getByRole('button', { name: 'Accept' }).click();
  // Redrawn in place from the relay's chat.update: the Accept button is gone and the DM says it was accepted.
  await dm.getByText('Accepted').first().waitFor();
  await expectNoButton(dm, 'Accept');
  expect(await page.locator('#status').textContent()).toBe('relay answered HTTP 200');
  // Mentions show the person, emoji their character.
  await dm.getByText('Accepted by @bob (bob@acme) via Slack').waitFor();
  await dm.getByText('✅').first().waitFor();
});

test("a question's DM shows the question quoted, as Slack draws a > line, not the > itself", async () => {
  const carolKey = await register('carol@acme', 'U0CAROL01');
  const mcp = await connectMcpHttp(relayUrl, carolKey);
  try {
    toolOk(
      await mcp.callTool({
        name: 'handoff_to_teammate',
        arguments: {
          to: 'bob@acme',
          intent: 'ask_question',
          summary: 'Who pages /users?',
          question: 'Which clients page?',
        },
      }),
    );
  } finally {
    await mcp.close();
  }
  const dm = page.locator('#dm .msg').filter({ hasText: 'Who pages /users?' });
  await dm.locator('.quote', { hasText: 'Which clients page?' }).waitFor();
  expect(await dm.textContent()).not.toContain('>Which clients page?');
});

test('opening the App Home sends app_home_opened, and the Home the relay publishes is drawn', async () => {
  await page.getByRole('button', { name: 'Open App Home' }).click();
  await page.locator('#home').getByText('Paging moved to cursors in /users').first().waitFor();
});

test("a slash command opens the relay's modal (a fresh trigger_id each time), and Cancel closes it", async () => {
  await page.locator('#command-text').fill('/handoff');
  await page.locator('#command-text').press('Enter');
  const modal = page.locator('.modal');
  await modal.waitFor();
  await modal.getByRole('button', { name: 'Cancel' }).click();
  await modal.waitFor({ state: 'detached' });
  // Again: a trigger_id is single use, so a second one works only if each command gets its own.
  await page.locator('#command-text').fill('/handoff');
  await page.locator('#command-text').press('Enter');
  await modal.waitFor();
});

async function expectNoButton(scope: ReturnType<Page['locator']>, name: string): Promise<void> {
  await waitUntil(
    async () => ((await scope.getByRole('button', { name, exact: true }).count()) === 0 ? true : null),
    `no ${name} button`,
  );
}
