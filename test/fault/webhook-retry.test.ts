// Webhook receivers that fail: retries on the (compressed) schedule with every attempt recorded, the dead
// letter after the last attempt (admin API and `handoff-relay deliveries`), re-drive, 410 Gone, redirects.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { waitUntil } from '../helpers/wait-until';
import { echoChallenge, verifyWebhook, WebhookReceiver } from '../../scripts/webhook-receiver';
import { sendHandoff } from '../helpers/handoffs';

const run = promisify(execFile);
const CLI = join(__dirname, '..', '..', 'dist', 'scripts', 'cli.js');
/** 4 retries after the first attempt: 5 attempts in all. */
const SCHEDULE = '50ms,100ms,150ms,200ms';
const ATTEMPTS = 5;

let relay: TestRelay;
let sender: string;
const receivers: WebhookReceiver[] = [];
let n = 0;

const rest = (...args: Parameters<TestRelay['rest']>) => relay.rest(...args);

/** A recipient whose verified endpoint is a fresh receiver. */
async function recipient(): Promise<{ handle: string; key: string; secret: string; hook: WebhookReceiver }> {
  const hook = await new WebhookReceiver().start();
  receivers.push(hook);
  const handle = `r${(n += 1)}@acme`;
  const key = await relay.register({ handle });
  const put = await rest('PUT', '/agents/me/card', key, { notification_url: hook.url() });
  await waitUntil(async () => (await rest('GET', '/agents/me', key)).body.notification?.verified, `${handle} verified`);
  return { handle, key, secret: put.body.notification_secret, hook };
}

const handoffTo = (handle: string) => sendHandoff(relay, sender, handle);

async function delivery(handle: string, status: string): Promise<any> {
  return waitUntil(
    async () =>
      (await rest('GET', `/admin/deliveries?status=${status}&handle=${handle}`, relay.adminKey)).body.deliveries[0],
    `a ${status} delivery for ${handle}`,
  );
}

function cli(args: string[]) {
  return run('node', [CLI, ...args], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, RELAY_URL: relay.url, RELAY_ADMIN_KEY: relay.adminKey },
  }).then(
    ({ stdout, stderr }) => ({ stdout, stderr, code: 0 }),
    (error: { code: number; stdout: string; stderr: string }) => ({
      stdout: error.stdout,
      stderr: error.stderr,
      code: error.code,
    }),
  );
}

beforeAll(async () => {
  relay = await startTestRelay({
    name: 'webhook_retry',
    env: { RELAY_WEBHOOK_ALLOW_PRIVATE: '1', RELAY_WEBHOOK_RETRY_SCHEDULE: SCHEDULE },
  });
  sender = await relay.register({ handle: 'sender@acme' });
});

afterAll(async () => {
  await relay?.stop();
  await Promise.all(receivers.map((r) => r.stop()));
});

test('a receiver answering 500 three times then 200 gets the event on the 4th attempt, same webhook-id each time, every attempt recorded', async () => {
  const r = await recipient();
  let events = 0;
  r.hook.answer = (req) =>
    req.json?.type === 'endpoint.challenge'
      ? echoChallenge(req)
      : (events += 1) <= 3
        ? { status: 500 }
        : { status: 200 };
  const thread = await handoffTo(r.handle);

  const done = await delivery(r.handle, 'delivered');
  expect(done.attempts.map((a: any) => [a.outcome, a.http_status])).toEqual([
    ['failed', 500],
    ['failed', 500],
    ['failed', 500],
    ['delivered', 200],
  ]);
  expect(done).toMatchObject({ event_type: 'thread.created', thread_id: thread, handle: r.handle });
  const received = r.hook.events();
  expect(received).toHaveLength(4);
  expect(new Set(received.map((q) => q.headers['webhook-id']))).toEqual(new Set([done.id]));
  for (const q of received)
    expect(verifyWebhook(r.secret, q)).toMatchObject({ type: 'thread.created', data: { thread_id: thread } });
});

test('a receiver down past the last attempt lands in the dead-letter list (admin API and CLI); a re-drive delivers it', async () => {
  const r = await recipient();
  await r.hook.stop();
  const thread = await handoffTo(r.handle);

  const failed = await delivery(r.handle, 'failed');
  expect(failed.attempts).toHaveLength(ATTEMPTS);
  for (const a of failed.attempts)
    expect(a).toMatchObject({ outcome: 'failed', http_status: null, error: expect.stringContaining('ECONNREFUSED') });
  expect(JSON.stringify(failed)).not.toContain('/hook');

  const listed = await cli(['deliveries', '--failed', '--handle', r.handle]);
  expect(listed.stdout).toContain(failed.id);
  expect(listed.stdout).toContain(`thread.created  to ${r.handle}  thread ${thread}  ${ATTEMPTS} attempts`);

  await r.hook.restart();
  const redriven = await cli(['deliveries', '--redrive', failed.id]);
  expect(redriven.stdout).toContain(`Re-driving ${failed.id}`);
  const done = await delivery(r.handle, 'delivered');
  expect(done.redrives).toBe(1);
  expect(done.attempts).toHaveLength(ATTEMPTS + 1);
  expect(r.hook.events()).toHaveLength(1);
  expect(r.hook.events()[0]!.headers['webhook-id']).toBe(failed.id);
  expect(verifyWebhook(r.secret, r.hook.events()[0]!)).toMatchObject({ type: 'thread.created' });

  // A second re-drive of a delivered one is refused, with the relay's reason.
  const again = await cli(['deliveries', '--redrive', failed.id]);
  expect(again.code).toBe(1);
  expect(again.stderr).toContain('only failed deliveries can be re-driven');
});

test('--redrive-all re-drives every failed delivery; CLI input errors are clear', async () => {
  const r = await recipient();
  await r.hook.stop();
  await handoffTo(r.handle);
  await handoffTo(r.handle);
  await waitUntil(
    async () =>
      (await rest('GET', `/admin/deliveries?status=failed&handle=${r.handle}`, relay.adminKey)).body.deliveries
        .length === 2,
    'two failed',
  );
  await r.hook.restart();
  const all = await cli(['deliveries', '--redrive-all']);
  expect(all.stdout).toMatch(/Re-driving [1-9]\d* failed deliveries/);
  await waitUntil(
    async () =>
      (await rest('GET', `/admin/deliveries?status=delivered&handle=${r.handle}`, relay.adminKey)).body.deliveries
        .length === 2,
    'both delivered',
  );
  expect(r.hook.events()).toHaveLength(2);

  const both = await cli(['deliveries', '--failed', '--redrive-all']);
  expect(both).toMatchObject({
    code: 1,
    stderr: expect.stringContaining('exactly one of --failed, --redrive ID, --redrive-all'),
  });
  const bad = await cli(['deliveries', '--redrive', 'nonsense']);
  expect(bad).toMatchObject({ code: 1, stderr: expect.stringContaining('path.id: must be a delivery id') });
});

test('410 Gone disables the endpoint: no retry, the card says so, later events are not sent to it', async () => {
  const gone = await recipient();
  gone.hook.answer = (req) => (req.json?.type === 'endpoint.challenge' ? echoChallenge(req) : { status: 410 });
  const thread = await handoffTo(gone.handle);
  const record = await delivery(gone.handle, 'gone');
  expect(record.attempts).toEqual([expect.objectContaining({ outcome: 'gone', http_status: 410 })]);
  const card = (await rest('GET', '/agents/me', gone.key)).body.notification;
  expect(card).toEqual({ url: gone.hook.url(), verified: false, gone_at: expect.any(String) });

  // The next event of the thread (the gone teammate accepts it from elsewhere) reaches the sender's working hook, not the gone one.
  const senderHook = await new WebhookReceiver().start();
  receivers.push(senderHook);
  await rest('PUT', '/agents/me/card', sender, { notification_url: senderHook.url() });
  await waitUntil(async () => (await rest('GET', '/agents/me', sender)).body.notification?.verified, 'sender verified');
  await relay.rpc(gone.key, 'tasks/update', { task_id: thread, transition: 'accept' });
  await waitUntil(
    async () => senderHook.events().some((q) => q.json?.type === 'thread.accepted'),
    'the sender hears of the accept',
  );
  expect(gone.hook.events()).toHaveLength(1);
  await rest('PUT', '/agents/me/card', sender, { notification_url: null });

  // Setting the URL again re-enables it (a new secret, a new challenge).
  const reset = await rest('PUT', '/agents/me/card', gone.key, { notification_url: gone.hook.url() });
  expect(reset.body.notification).toEqual({ url: gone.hook.url(), verified: false });
  expect(reset.body.notification_secret).toMatch(/^whsec_/);
});

test('a redirect is not followed: 3xx counts as a failed attempt and the Location is never requested', async () => {
  const r = await recipient();
  r.hook.answer = (req) =>
    req.json?.type === 'endpoint.challenge'
      ? echoChallenge(req)
      : { status: 307, headers: { location: r.hook.url('/elsewhere') } };
  await handoffTo(r.handle);
  const failed = await delivery(r.handle, 'failed');
  expect(failed.attempts).toHaveLength(ATTEMPTS);
  for (const a of failed.attempts)
    expect(a).toMatchObject({ outcome: 'failed', http_status: 307, error: 'HTTP 307 (redirects are not followed)' });
  expect(r.hook.requests.filter((q) => q.path === '/elsewhere')).toHaveLength(0);
});
