// Rotating a webhook signing secret: the new secret is returned once, and for the overlap every call is signed
// with both, so a receiver still holding the old secret verifies it; after the overlap only the new one signs.
import { WEBHOOK_SECRET_OVERLAP_MS } from '../../relay-core/webhooks/endpoint-lifecycle';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { TestClock } from '../helpers/test-clock';
import { waitUntil } from '../helpers/wait-until';
import { echoChallenge, verifyWebhook, WebhookReceiver, type Answer } from '../../scripts/webhook-receiver';

let relay: TestRelay;
const clock = new TestClock();
let hook: WebhookReceiver;
let sender: string;
let bob: string;
let original: string;

const rest = (...args: Parameters<TestRelay['rest']>) => relay.rest(...args);

beforeAll(async () => {
  relay = await startTestRelay({
    name: 'webhook_rotation',
    clock,
    env: { RELAY_WEBHOOK_ALLOW_PRIVATE: '1', RELAY_WEBHOOK_RETRY_SCHEDULE: '100ms,200ms' },
  });
  hook = await new WebhookReceiver().start();
  sender = await relay.register({ handle: 'sender@acme' });
  bob = await relay.register({ handle: 'bob@acme' });
  const put = await rest('PUT', '/agents/me/card', bob, { notification_url: hook.url() });
  original = put.body.notification_secret;
  await waitUntil(
    async () => (await rest('GET', '/agents/me', bob)).body.notification?.verified === true || undefined,
    'the endpoint to be verified',
  );
});

afterAll(async () => {
  await relay?.stop();
  await hook?.stop();
});

/** Sends a handoff to bob and returns the webhook call bob's receiver got for it. */
async function deliveredEvent(summary: string) {
  await relay.rpc(sender, 'message/send', {
    recipient: 'bob@acme',
    intent: 'inform',
    message: { parts: [{ text: summary }] },
  });
  return waitUntil(
    async () => hook.requests.find((r) => r.json?.data?.summary === summary),
    `the webhook for "${summary}"`,
  );
}

test('a teammate without a webhook cannot rotate: a clear 400, nothing changes', async () => {
  const answer = await rest('POST', '/agents/me/notification/secret', sender);
  expect(answer.status).toBe(400);
  expect(answer.body.message).toMatch(/no webhook is set/);
  expect((await rest('POST', '/agents/me/notification/secret', undefined)).status).toBe(401);
});

test('during the overlap a call verifies with the old secret and with the new one; afterwards only with the new', async () => {
  const before = await deliveredEvent('before rotation');
  expect(verifyWebhook(original, before)).toBeTruthy();

  const rotated = await rest('POST', '/agents/me/notification/secret', bob);
  expect(rotated.status).toBe(201);
  const fresh = rotated.body.notification_secret as string;
  expect(fresh).toMatch(/^whsec_[A-Za-z0-9+/=]{44}$/);
  expect(fresh).not.toBe(original);
  expect(new Date(rotated.body.previous_secret_expires_at).getTime()).toBeGreaterThan(Date.now() + 23 * 3600 * 1000);
  // The secret is never shown again.
  expect(JSON.stringify((await rest('GET', '/agents/me', bob)).body)).not.toContain(fresh.slice(6, 30));

  const during = await deliveredEvent('during overlap');
  expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2);
  expect(verifyWebhook(original, during)).toBeTruthy();
  expect(verifyWebhook(fresh, during)).toBeTruthy();

  // The overlap ends: the relay's clock moves past it.
  clock.advance(WEBHOOK_SECRET_OVERLAP_MS + 1_000);
  const after = await deliveredEvent('after overlap');
  expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1);
  expect(verifyWebhook(fresh, after)).toBeTruthy();
  expect(() => verifyWebhook(original, after)).toThrow();
});

test('a rotation while the endpoint answers its challenge keeps both the new secret and the verification', async () => {
  // The two writes to the teammate's document land together: FerretDB applies an update by reading and writing
  // back the whole document, so without a serialized write one of them silently undoes the other.
  const racers = await Promise.all([1, 2, 3, 4, 5, 6].map((n) => relay.register({ handle: `racer${n}@acme` })));
  const held: Array<() => void> = [];
  hook.answer = (request) => {
    if (request.json?.type !== 'endpoint.challenge') return echoChallenge(request);
    return new Promise<Answer>((resolve) => held.push(() => resolve(echoChallenge(request))));
  };
  try {
    for (const key of racers) await rest('PUT', '/agents/me/card', key, { notification_url: hook.url() });
    await waitUntil(async () => held.length === racers.length, 'every challenge to arrive');
    const rotations = racers.map((key) => rest('POST', '/agents/me/notification/secret', key));
    for (const release of held) release();
    const secrets = (await Promise.all(rotations)).map((answer) => answer.body.notification_secret as string);

    for (const [i, key] of racers.entries()) {
      await waitUntil(
        async () => (await rest('GET', '/agents/me', key)).body.notification?.verified === true || undefined,
        `racer${i + 1}'s endpoint to be verified`,
      );
      expect((await relay.store.agentWriter.read(`racer${i + 1}@acme`))?.notification?.secret).toBe(secrets[i]);
    }
  } finally {
    hook.answer = echoChallenge;
  }
});
