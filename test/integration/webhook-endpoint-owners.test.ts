// The webhook fan-out keeps who has an endpoint between teammate writes: a card written by another relay process
// (an api-only one here, on the same database and queues) reaches the very next event's fan-out, not a minute later.
import { randomBytes } from 'node:crypto';
import { WebhookReceiver } from '../../scripts/webhook-receiver';
import { sendHandoff } from '../helpers/handoffs';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { uniqueName } from '../helpers/test-env';
import { waitUntil } from '../helpers/wait-until';

const shared = {
  MONGODB_DB: uniqueName('endpoint_owners'),
  RELAY_QUEUE_PREFIX: uniqueName('endpoint_owners'),
  RELAY_KEY_PEPPER: randomBytes(32).toString('hex'),
  RELAY_WEBHOOK_ALLOW_PRIVATE: '1',
};
let worker: TestRelay;
let api: TestRelay;
let hook: WebhookReceiver;

beforeAll(async () => {
  worker = await startTestRelay({ name: 'endpoint_owners', env: shared });
  api = await startTestRelay({ name: 'endpoint_owners', env: { ...shared, RELAY_ROLES: 'api' } });
  hook = await new WebhookReceiver().start();
});

afterAll(async () => {
  // The receiver first: the challenge it never answers is cut off, so the worker's stop does not wait it out.
  await hook?.stop();
  await api?.stop();
  await worker?.stop();
});

test("bob's endpoint, set through another process after the fan-out looked him up, gets the next event", async () => {
  const alice = await worker.register({ handle: 'alice@acme' });
  const bob = await worker.register({ handle: 'bob@acme' });
  // The worker's fan-out looks bob up (no endpoint) and keeps that.
  await sendHandoff(worker, alice, 'bob@acme', 'before his endpoint');
  await waitUntil(async () => (await worker.store.outbox.count()) === 0, 'the first handoff fanned out');

  // Through the api-only process: bob's card gets an endpoint. Its receiver never answers the challenge, so the
  // worker writes nothing of bob's meanwhile (a write of its own would tell it anyway): only the shared counter can.
  hook.answer = () => null;
  const put = await fetch(`${api.url}/agents/me/card`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${bob}`, 'content-type': 'application/json' },
    body: JSON.stringify({ notification_url: hook.url('/bob') }),
  });
  expect(put.status).toBe(200);

  // The next event is owed to bob (held until his endpoint answers its challenge).
  const id = await sendHandoff(worker, alice, 'bob@acme', 'after his endpoint');
  const deliveries = worker.store.db.collection<{ thread_id: string; handle: string }>('webhook_deliveries');
  await waitUntil(
    async () => ((await deliveries.findOne({ thread_id: id, handle: 'bob@acme' })) ? true : undefined),
    "a delivery to bob's endpoint of the second handoff",
  );
});
