// The webhook SSRF guard as a table, the delivery-time refusal after DNS (a real loopback receiver that must
// receive nothing), the retry schedule's parsing and the backoff it drives.
import { ConfigError, DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS, loadConfig } from '../../relay-core/ops/config';
import { assertAllowedTarget, refusedAddressReason, WebhookTargetError } from '../../relay-core/webhooks/ssrf-guard';
import { postSigned } from '../../relay-core/webhooks/signed-post';
import { webhookBackoffStrategy } from '../../relay-core/webhooks/webhook-queues';
import { verifyWebhook, WebhookReceiver } from '../../scripts/webhook-receiver';

describe('refusedAddressReason', () => {
  test.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.5.4', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'linkLocal'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['100.100.100.200', 'carrierGradeNat'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.251', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['192.0.2.10', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'linkLocal'],
    ['fd00:ec2::254', 'uniqueLocal'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:169.254.169.254', 'linkLocal'],
    ['64:ff9b::7f00:1', 'rfc6052'],
    ['2002:7f00:1::1', '6to4'],
  ])('%s is refused as %s', (address, range) => {
    expect(refusedAddressReason(address)).toContain(range);
  });

  test.each(['8.8.8.8', '93.184.215.14', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('%s is allowed', (address) => {
    expect(refusedAddressReason(address)).toBeNull();
  });

  test('a non-address is refused, not crashed on', () => {
    expect(refusedAddressReason('example.com')).toMatch(/not an IP address/);
  });
});

describe('assertAllowedTarget (registration)', () => {
  const strict = { allowPrivate: false };
  test.each([
    ['http://localhost:9/x', /localhost resolves to 127\.0\.0\.1 is a loopback address/],
    ['http://127.0.0.1/x', /loopback/],
    ['http://[::1]/x', /loopback/],
    ['http://[::ffff:7f00:1]/x', /loopback/],
    ['http://169.254.169.254/', /linkLocal/],
    ['ftp://8.8.8.8/', /http or https/],
    ['not a url', /not a URL/],
  ])('%s is refused', async (url, message) => {
    await expect(assertAllowedTarget(url, strict)).rejects.toThrow(message);
    await expect(assertAllowedTarget(url, strict)).rejects.toBeInstanceOf(WebhookTargetError);
  });

  test('public addresses pass; RELAY_WEBHOOK_ALLOW_PRIVATE lets loopback through, never other schemes', async () => {
    await expect(assertAllowedTarget('https://8.8.8.8/hook', strict)).resolves.toBeUndefined();
    await expect(assertAllowedTarget('http://localhost:9/x', { allowPrivate: true })).resolves.toBeUndefined();
    await expect(assertAllowedTarget('file:///etc/passwd', { allowPrivate: true })).rejects.toThrow(/http or https/);
  });
});

describe('postSigned (delivery time)', () => {
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await new WebhookReceiver().start();
  });
  afterAll(async () => {
    await receiver.stop();
  });
  const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;

  test('refuses a host that resolves to loopback after DNS, and an IP literal, before connecting', async () => {
    const port = new URL(receiver.url()).port;
    const send = (url: string) =>
      postSigned({ url, secrets: [secret], id: 'msg_1', body: '{}', policy: { allowPrivate: false } });
    await expect(send(`http://localhost:${port}/hook`)).rejects.toThrow(
      /refused: localhost resolves to 127\.0\.0\.1 is a loopback address/,
    );
    await expect(send(`http://127.0.0.1:${port}/hook`)).rejects.toThrow(/refused: 127\.0\.0\.1 is a loopback address/);
    await expect(send(`http://[::ffff:127.0.0.1]:${port}/hook`)).rejects.toThrow(/refused/);
    expect(receiver.requests).toHaveLength(0);
  });

  test('when allowed, the request carries Standard Webhooks headers that standardwebhooks verifies', async () => {
    const answer = await postSigned({
      url: receiver.url(),
      secrets: [secret],
      id: 'msg_2',
      body: '{"type":"x"}',
      policy: { allowPrivate: true },
    });
    expect(answer.status).toBe(200);
    const got = receiver.requests[receiver.requests.length - 1]!;
    expect(got.headers['webhook-id']).toBe('msg_2');
    expect(got.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/=]+$/);
    expect(verifyWebhook(secret, got)).toEqual({ type: 'x' });
  });

  test('gives up after the timeout', async () => {
    const slow = await new WebhookReceiver().start();
    // A receiver that never answers: hold the response open.
    slow.answer = () => null;
    await expect(
      postSigned({
        url: slow.url(),
        secrets: [secret],
        id: 'msg_3',
        body: '{}',
        policy: { allowPrivate: true },
        timeoutMs: 200,
      }),
    ).rejects.toThrow(/no answer within 200 ms/);
    await slow.stop();
  });
});

describe('RELAY_WEBHOOK_RETRY_SCHEDULE', () => {
  const base = { MONGODB_URL: 'mongodb://127.0.0.1:1' };
  test('defaults to the Svix schedule: immediately, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h', () => {
    expect(loadConfig(base).webhooks).toEqual({
      retryScheduleMs: [...DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS],
      allowPrivate: false,
    });
    expect(DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS).toEqual([
      5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000,
    ]);
  });

  test('accepts ms and durations', () => {
    expect(
      loadConfig({ ...base, RELAY_WEBHOOK_RETRY_SCHEDULE: '10, 250ms,2s,1m,1h' }).webhooks.retryScheduleMs,
    ).toEqual([10, 250, 2_000, 60_000, 3_600_000]);
    expect(() => loadConfig({ ...base, RELAY_WEBHOOK_RETRY_SCHEDULE: '5s,5x' })).toThrow(
      /^RELAY_WEBHOOK_RETRY_SCHEDULE: must be 1–20 comma-separated delays/,
    );
  });

  test.each([
    ['RELAY_WEBHOOK_RETRY_SCHEDULE', '5s,,5m'],
    ['RELAY_WEBHOOK_RETRY_SCHEDULE', '-5s'],
    ['RELAY_WEBHOOK_RETRY_SCHEDULE', '2d'],
    ['RELAY_WEBHOOK_RETRY_SCHEDULE', '25h'],
    ['RELAY_WEBHOOK_ALLOW_PRIVATE', 'yes'],
  ])('%s=%s stops start-up naming the variable', (variable, value) => {
    expect(() => loadConfig({ ...base, [variable]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, [variable]: value })).toThrow(new RegExp(`^${variable}: `));
  });

  test('the backoff strategy follows the schedule and repeats its last entry', () => {
    const backoff = webhookBackoffStrategy([5, 50, 500]);
    expect([1, 2, 3, 4].map((n) => backoff(n, 'webhook'))).toEqual([5, 50, 500, 500]);
  });
});
