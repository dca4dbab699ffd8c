// A2A v1.0 push notification configs driven by @a2a-js/sdk's client: Create / Get / List / Delete on a task, and
// the webhooks worker POSTing each later event of the task to the config's URL — signed with the config's secret
// (Standard Webhooks), carrying its token, retried on the schedule, dead-lettered after the last attempt, and
// refused for private addresses unless the relay allows them.
import {
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransportFactory,
  createAuthenticatingFetchWithRetry,
  type Client,
} from '@a2a-js/sdk/client';
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { sendHandoff, text } from '../helpers/handoffs';
import { waitUntil } from '../helpers/wait-until';
import { verifyWebhook, WebhookReceiver } from '../../scripts/webhook-receiver';

let relay: TestRelay;
let strict: TestRelay;
let alice: string;
let bob: string;
let carol: string;
let hooks: WebhookReceiver;

beforeAll(async () => {
  hooks = await new WebhookReceiver().start();
  relay = await startTestRelay({
    name: 'a2a_push',
    env: { RELAY_WEBHOOK_ALLOW_PRIVATE: '1', RELAY_WEBHOOK_RETRY_SCHEDULE: '50ms,100ms,150ms' },
  });
  strict = await startTestRelay({ name: 'a2a_push_strict', env: { RELAY_WEBHOOK_RETRY_SCHEDULE: '10ms' } });
  [alice, bob, carol] = await Promise.all(
    ['alice@acme', 'bob@acme', 'carol@acme'].map((handle) => relay.register({ handle })),
  );
});

afterAll(async () => {
  await relay?.stop();
  await strict?.stop();
  await hooks?.stop();
});

async function client(apiKey: string, on = relay): Promise<Client> {
  const fetchImpl = createAuthenticatingFetchWithRetry(fetch, {
    headers: async () => ({ Authorization: `Bearer ${apiKey}` }),
    shouldRetryWithHeaders: async () => undefined,
  });
  const options = ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl })],
  });
  return new ClientFactory(options).createFromUrl(on.url);
}

const config = (taskId: string, path: string, extra: Record<string, unknown> = {}) => ({
  tenant: '',
  id: '',
  taskId,
  url: hooks.url(path),
  token: '',
  authentication: undefined,
  ...extra,
});
const at = (path: string) => hooks.events().filter((r) => r.path === path);

/** The delivery records of a task, as GET /admin/deliveries/:id shows each. */
async function deliveries(id: string): Promise<any[]> {
  const docs = await relay.store.db.collection('webhook_deliveries').find({ thread_id: id }).toArray();
  return Promise.all(
    docs.map(
      async (d) =>
        (await relay.rest('GET', `/admin/deliveries/${encodeURIComponent(String(d._id))}`, relay.adminKey)).body,
    ),
  );
}

test('the agent card says push notifications are on', async () => {
  const card = await (await fetch(`${relay.url}/.well-known/agent-card.json`)).json();
  expect(card.capabilities).toMatchObject({ pushNotifications: true, streaming: true });
});

test('Create, Get, List and Delete through the SDK; only the owner sees a config, only participants make one', async () => {
  const id = await sendHandoff(relay, alice, 'bob@acme', 'configs');
  const sdk = await client(alice);
  const created = await sdk.createTaskPushNotificationConfig(config(id, '/crud', { id: 'mine', token: 'tok-1' }));
  expect(created).toMatchObject({ id: 'mine', taskId: id, url: hooks.url('/crud'), token: 'tok-1' });
  const generated = await sdk.createTaskPushNotificationConfig(config(id, '/crud2'));
  expect(generated.id).toMatch(/^[0-9a-f-]{36}$/);

  expect(await sdk.getTaskPushNotificationConfig({ tenant: '', taskId: id, id: 'mine' })).toMatchObject({
    id: 'mine',
    url: hooks.url('/crud'),
  });
  expect(
    (await sdk.listTaskPushNotificationConfig({ tenant: '', taskId: id, pageSize: 0, pageToken: '' })).configs
      .map((c) => c.id)
      .sort(),
  ).toEqual(['mine', generated.id].sort());
  // Bob is a participant but owns none of them; Carol is not a participant.
  expect(
    (await (await client(bob)).listTaskPushNotificationConfig({ tenant: '', taskId: id, pageSize: 0, pageToken: '' }))
      .configs,
  ).toEqual([]);
  const refusal = async (call: Promise<unknown>) =>
    call.then(
      () => {
        throw new Error('expected a refusal');
      },
      (e: any) => e.data?.code ?? e.message,
    );
  expect(await refusal((await client(bob)).getTaskPushNotificationConfig({ tenant: '', taskId: id, id: 'mine' }))).toBe(
    'not_found',
  );
  expect(await refusal((await client(carol)).createTaskPushNotificationConfig(config(id, '/carol')))).toBe(
    'not_a_participant',
  );
  expect(await refusal(sdk.createTaskPushNotificationConfig(config(id, '/again', { id: 'mine' })))).toBe('conflict');
  expect(await refusal(sdk.createTaskPushNotificationConfig({ ...config(id, '/x'), url: 'ftp://example.com/' }))).toBe(
    'invalid_params',
  );

  await sdk.deleteTaskPushNotificationConfig({ tenant: '', taskId: id, id: 'mine' });
  expect(
    (await sdk.listTaskPushNotificationConfig({ tenant: '', taskId: id, pageSize: 0, pageToken: '' })).configs.map(
      (c) => c.id,
    ),
  ).toEqual([generated.id]);
  expect(await refusal(sdk.getTaskPushNotificationConfig({ tenant: '', taskId: id, id: 'mine' }))).toBe('not_found');
});

test('each later event of the task reaches the config once, signed with its secret and carrying its token', async () => {
  const id = await sendHandoff(relay, alice, 'bob@acme', 'push me');
  // The raw call shows the signing secret (the SDK's types have no field for it).
  const { body } = await relay.rpc(alice, 'CreateTaskPushNotificationConfig', {
    taskId: id,
    id: 'signed',
    url: hooks.url('/signed'),
    token: 'secret-token',
    authentication: { scheme: 'Bearer', credentials: 'cred-1' },
  });
  expect(body.result).toMatchObject({ id: 'signed', taskId: id, signing_secret: expect.stringMatching(/^whsec_/) });
  const secret = body.result.signing_secret as string;

  await relay.rpc(bob, 'tasks/update', { task_id: id, transition: 'accept' });
  await relay.rpc(bob, 'message/send', { task_id: id, message: text('looking') });
  await relay.rpc(bob, 'tasks/update', { task_id: id, transition: 'complete', result_summary: 'done' });
  await waitUntil(async () => at('/signed').length >= 3, 'three push notifications');
  await new Promise((resolve) => setTimeout(resolve, 500));
  const received = at('/signed');
  expect(received).toHaveLength(3);
  for (const request of received) {
    const payload = verifyWebhook(secret, request);
    expect(request.headers['x-a2a-notification-token']).toBe('secret-token');
    expect(request.headers.authorization).toBe('Bearer cred-1');
    expect(String(request.headers['webhook-id'])).toBe(
      `${payload.statusUpdate.metadata.handoff_event.event_id}.push.signed`,
    );
  }
  const updates = received.map((r) => r.json.statusUpdate);
  expect(new Set(updates.map((u) => u.metadata.handoff_event.type))).toEqual(
    new Set(['thread.accepted', 'thread.message', 'thread.completed']),
  );
  expect(updates.find((u) => u.metadata.handoff_event.type === 'thread.completed').status.state).toBe(
    'TASK_STATE_COMPLETED',
  );
  expect(updates.every((u) => u.taskId === id && u.contextId === id)).toBe(true);
});

test('a failing receiver is retried on the schedule, then dead-lettered; 410 deletes the config', async () => {
  const id = await sendHandoff(relay, alice, 'bob@acme', 'flaky');
  await relay.rpc(alice, 'CreateTaskPushNotificationConfig', { taskId: id, id: 'flaky', url: hooks.url('/flaky') });
  await relay.rpc(alice, 'CreateTaskPushNotificationConfig', { taskId: id, id: 'dead', url: hooks.url('/dead') });
  await relay.rpc(alice, 'CreateTaskPushNotificationConfig', { taskId: id, id: 'gone', url: hooks.url('/gone') });
  let flaky = 0;
  hooks.answer = (r) => {
    if (r.path === '/flaky') return { status: ++flaky < 3 ? 503 : 200 };
    if (r.path === '/dead') return { status: 500 };
    if (r.path === '/gone') return { status: 410 };
    return { status: 200 };
  };
  await relay.rpc(bob, 'tasks/update', { task_id: id, transition: 'accept' });
  await waitUntil(async () => {
    const docs = await deliveries(id);
    const state = (suffix: string) => docs.find((d) => d.id.endsWith(suffix))?.status;
    return state('.push.flaky') === 'delivered' && state('.push.dead') === 'failed' && state('.push.gone') === 'gone';
  }, 'delivered, dead-lettered and gone');
  expect(at('/flaky')).toHaveLength(3);
  expect(at('/dead')).toHaveLength(4);
  const dead = (await deliveries(id)).find((d) => d.id.endsWith('.push.dead'));
  expect(dead.attempts.map((a: any) => a.http_status)).toEqual([500, 500, 500, 500]);
  expect(
    (await relay.rpc(alice, 'ListTaskPushNotificationConfigs', { taskId: id })).body.result.configs
      .map((c: any) => c.id)
      .sort(),
  ).toEqual(['dead', 'flaky']);

  // A re-drive of the dead letter goes to the same config again.
  hooks.answer = () => ({ status: 200 });
  expect(
    (await relay.rest('POST', `/admin/deliveries/${encodeURIComponent(dead.id)}/redrive`, relay.adminKey)).status,
  ).toBeLessThan(300);
  await waitUntil(
    async () => (await deliveries(id)).find((d) => d.id === dead.id)?.status === 'delivered',
    'the re-driven push delivered',
  );
  expect(at('/dead')).toHaveLength(5);
});

test('a config on a loopback URL is never called by a relay that does not allow private addresses (SSRF guard)', async () => {
  const [a, b] = [await strict.register({ handle: 'alice@acme' }), await strict.register({ handle: 'bob@acme' })];
  const id = await sendHandoff(strict, a, 'bob@acme', 'ssrf');
  const before = hooks.requests.length;
  expect(
    (await strict.rpc(a, 'CreateTaskPushNotificationConfig', { taskId: id, id: 'local', url: hooks.url('/ssrf') })).body
      .result.id,
  ).toBe('local');
  await strict.rpc(b, 'tasks/update', { task_id: id, transition: 'accept' });
  await waitUntil(async () => {
    const { body } = await strict.rest('GET', '/admin/deliveries?status=failed&limit=50', strict.adminKey);
    return body.deliveries.find((d: any) => d.id.endsWith('.push.local'));
  }, 'the push refused by the guard and dead-lettered');
  expect(hooks.requests.length).toBe(before);
});
