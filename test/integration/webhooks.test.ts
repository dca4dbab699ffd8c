// Signed webhooks on a real relay (FerretDB, Redis, BullMQ workers) to real HTTP receivers on loopback:
// every event type reaches both participants, verified with standardwebhooks as a receiver would; an
// unverified endpoint gets nothing until it answers its challenge; SSRF refusals; admin input errors.
import { startTestRelay, type TestRelay } from '../helpers/relay-harness';
import { waitUntil } from '../helpers/wait-until';
import { echoChallenge, verifyWebhook, WebhookReceiver, type ReceivedRequest } from '../../scripts/webhook-receiver';
import { text } from '../helpers/handoffs';

let relay: TestRelay;
const receivers: WebhookReceiver[] = [];

const rest = (...args: Parameters<TestRelay['rest']>) => relay.rest(...args);

async function call(key: string, method: string, params: Record<string, unknown>): Promise<any> {
  const { body } = await relay.rpc(key, method, params);
  if (!body.result) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
  return body.result;
}

async function receiver(): Promise<WebhookReceiver> {
  const r = await new WebhookReceiver().start();
  receivers.push(r);
  return r;
}

/** Registers a teammate with a webhook on `hook`; returns its key and signing secret. */
async function teammateWithHook(handle: string, hook: WebhookReceiver): Promise<{ key: string; secret: string }> {
  const key = await relay.register({ handle });
  const put = await rest('PUT', '/agents/me/card', key, { notification_url: hook.url() });
  expect(put.status).toBe(200);
  return { key, secret: put.body.notification_secret };
}

const verified = (key: string) => async () =>
  (await rest('GET', '/agents/me', key, undefined)).body.notification?.verified === true;

beforeAll(async () => {
  relay = await startTestRelay({
    name: 'webhooks',
    env: { RELAY_WEBHOOK_ALLOW_PRIVATE: '1', RELAY_WEBHOOK_RETRY_SCHEDULE: '100ms,200ms,300ms,400ms,500ms,1s,2s' },
  });
});

afterAll(async () => {
  await relay?.stop();
  await Promise.all(receivers.map((r) => r.stop()));
});

describe('webhook delivery', () => {
  test('every event type reaches sender and recipient, signed (standardwebhooks verifies), once per webhook-id, without secrets', async () => {
    const aliceHook = await receiver();
    const bobHook = await receiver();
    const alice = await teammateWithHook('alice@acme', aliceHook);
    const bob = await teammateWithHook('bob@acme', bobHook);
    await waitUntil(verified(alice.key), 'alice verified');
    await waitUntil(verified(bob.key), 'bob verified');
    expect((await rest('GET', '/agents/me', bob.key, undefined)).body.notification).toEqual({
      url: bobHook.url(),
      verified: true,
    });

    const one = (
      await call(alice.key, 'message/send', { recipient: 'bob@acme', intent: 'inform', message: text('work') })
    ).task_id;
    await call(bob.key, 'message/send', { task_id: one, message: text('on it') });
    await call(bob.key, 'tasks/update', { task_id: one, transition: 'accept' });
    await call(bob.key, 'tasks/update', { task_id: one, transition: 'complete', result_summary: 'done' });
    const two = (
      await call(alice.key, 'message/send', { recipient: 'bob@acme', intent: 'inform', message: text('other') })
    ).task_id;
    await call(bob.key, 'tasks/update', { task_id: two, transition: 'decline', reason: 'not mine' });
    const three = (
      await call(alice.key, 'message/send', { recipient: 'bob@acme', intent: 'inform', message: text('third') })
    ).task_id;
    await call(alice.key, 'tasks/cancel', { task_id: three });

    const expected = [
      'thread.created',
      'thread.message',
      'thread.accepted',
      'thread.completed',
      'thread.created',
      'thread.declined',
      'thread.created',
      'thread.cancelled',
    ];
    for (const [hook, party] of [
      [aliceHook, alice],
      [bobHook, bob],
    ] as const) {
      await waitUntil(async () => hook.events().length >= expected.length, `${expected.length} events`);
      const payloads = hook.events().map((r: ReceivedRequest) => verifyWebhook(party.secret, r) as any);
      expect(payloads.map((p) => p.type).sort()).toEqual([...expected].sort());
      // One delivery per (event, endpoint): no webhook-id twice.
      const ids = hook.events().map((r) => r.headers['webhook-id']);
      expect(new Set(ids).size).toBe(ids.length);
      for (const p of payloads) {
        expect(p).toEqual({
          type: expect.any(String),
          timestamp: expect.any(String),
          data: expect.objectContaining({
            thread_id: expect.any(String),
            event_id: expect.any(String),
            by: expect.any(String),
            via: 'a2a',
            status: expect.any(String),
          }),
        });
        for (const forbidden of ['outbox', 'handoff_token', 'request_hash', 'body_hash', 'slack', 'version'])
          expect(p.data).not.toHaveProperty(forbidden);
      }
      for (const r of hook.requests) {
        expect(r.raw).not.toContain('whsec_');
        expect(r.raw).not.toContain(alice.secret.slice(6));
        expect(r.raw).not.toContain(bob.secret.slice(6));
      }
      const accepted = payloads.find((p) => p.type === 'thread.accepted');
      expect(accepted.data).toMatchObject({
        thread_id: one,
        by: 'bob@acme',
        sender: { handle: 'alice@acme' },
        recipient: { handle: 'bob@acme' },
      });
      const message = payloads.find((p) => p.type === 'thread.message');
      expect(message.data.message_id).toEqual(expect.any(String));
    }
    // A signature made with the other teammate's secret does not verify.
    expect(() => verifyWebhook(alice.secret, bobHook.events()[0]!)).toThrow();
    // The relay records a delivery once the receiver's answer is back, a moment after the receiver saw it.
    const delivered = await waitUntil(async () => {
      const list = await rest('GET', '/admin/deliveries?status=delivered&handle=bob@acme', relay.adminKey);
      return list.body.deliveries.length === expected.length && list;
    }, 'all 8 recorded as delivered');
    expect(JSON.stringify(delivered.body)).not.toContain(bobHook.url());
  });

  test('an unverified endpoint gets nothing until it echoes the challenge; then the held event is delivered', async () => {
    const hook = await receiver();
    hook.answer = () => ({ status: 200, body: 'ok' }); // answers, but does not echo the challenge
    const sender = await relay.register({ handle: 'carol@acme' });
    const dave = await teammateWithHook('dave@acme', hook);
    const id = (await call(sender, 'message/send', { recipient: 'dave@acme', intent: 'inform', message: text('held') }))
      .task_id;

    await waitUntil(async () => {
      const list = await rest('GET', '/admin/deliveries?status=pending&handle=dave@acme', relay.adminKey);
      return list.body.deliveries[0]?.attempts.some((a: any) => a.outcome === 'held');
    }, 'a held attempt');
    await waitUntil(async () => hook.challenges().length >= 2, 'a retried challenge');
    expect(hook.events()).toHaveLength(0);
    expect((await rest('GET', '/agents/me', dave.key, undefined)).body.notification.verified).toBe(false);
    for (const c of hook.challenges())
      expect(verifyWebhook(dave.secret, c)).toMatchObject({
        type: 'endpoint.challenge',
        challenge: expect.any(String),
      });

    hook.answer = (r) =>
      r.json?.type === 'endpoint.challenge'
        ? { status: 200, body: JSON.stringify({ challenge: r.json.challenge }) }
        : { status: 204 };
    await waitUntil(verified(dave.key), 'dave verified');
    await waitUntil(async () => hook.events().length === 1, 'the held event');
    expect(verifyWebhook(dave.secret, hook.events()[0]!)).toMatchObject({
      type: 'thread.created',
      data: { thread_id: id },
    });
  });

  test('changing the URL issues a new secret, makes it unverified and challenges the new URL signed with the new secret', async () => {
    const first = await receiver();
    const second = await receiver();
    const erin = await teammateWithHook('erin@acme', first);
    await waitUntil(verified(erin.key), 'erin verified');
    const put = await rest('PUT', '/agents/me/card', erin.key, { notification_url: second.url('/v2') });
    expect(put.body.notification).toEqual({ url: second.url('/v2'), verified: false });
    expect(put.body.notification_secret).not.toBe(erin.secret);
    await waitUntil(verified(erin.key), 'erin verified again');
    expect(verifyWebhook(put.body.notification_secret, second.challenges()[0]!)).toMatchObject({
      type: 'endpoint.challenge',
    });
    expect(() => verifyWebhook(erin.secret, second.challenges()[0]!)).toThrow();
  });

  test('a receiver slow to answer holds a dozen deliveries at once, not the worker, and the event feed goes on meanwhile; each is delivered', async () => {
    const hook = await receiver();
    const sender = await relay.register({ handle: 'gina@acme' });
    const hank = await teammateWithHook('hank@acme', hook);
    await waitUntil(verified(hank.key), 'hank verified');
    // From now on every event is answered only when the test lets it go.
    let inFlight = 0;
    let most = 0;
    const held: Array<() => void> = [];
    hook.answer = (request) => {
      if (request.json?.type === 'endpoint.challenge') return echoChallenge(request);
      inFlight += 1;
      most = Math.max(most, inFlight);
      return new Promise((resolve) =>
        held.push(() => {
          inFlight -= 1;
          resolve({ status: 204 });
        }),
      );
    };
    const start = (await rest('GET', '/events', sender, undefined)).body.cursor as string;
    const ids: string[] = [];
    for (let i = 0; i < 12; i += 1)
      ids.push(
        (await call(sender, 'message/send', { recipient: 'hank@acme', intent: 'inform', message: text(`slow ${i}`) }))
          .task_id,
      );
    // The webhooks worker runs 32 jobs at once (it was 8, which a slow receiver could fill).
    await waitUntil(async () => (inFlight === ids.length ? true : undefined), 'every delivery in flight at once');
    expect(most).toBe(ids.length);
    // Events are in the participants' logs while those POSTs wait.
    const feed = await rest('GET', `/events?since=${start}`, sender, undefined);
    expect(feed.status).toBe(200);
    expect(
      feed.body.events
        .filter((e: any) => e.type === 'thread.created')
        .map((e: any) => e.thread_id)
        .sort(),
    ).toEqual([...ids].sort());
    for (const release of held.splice(0)) release();
    const delivered = () => new Set(hook.events().map((r) => verifyWebhook(hank.secret, r).data.thread_id as string));
    await waitUntil(async () => (delivered().size === ids.length ? true : undefined), 'each delivered');
    expect([...delivered()].sort()).toEqual([...ids].sort());
  });
});

describe('SSRF guard at registration', () => {
  let strict: TestRelay;
  beforeAll(async () => {
    strict = await startTestRelay({ name: 'webhooks_ssrf' });
  });
  afterAll(async () => {
    await strict?.stop();
  });

  test.each([
    ['http://127.0.0.1:8080/hook', 'loopback'],
    ['http://10.1.2.3/hook', 'private'],
    ['http://192.168.0.10/hook', 'private'],
    ['http://169.254.169.254/latest/meta-data', 'linkLocal'],
    ['http://100.100.100.200/metadata', 'carrierGradeNat'],
    ['http://[::1]:8080/hook', 'loopback'],
    ['http://[::ffff:127.0.0.1]/hook', 'loopback'],
    ['http://[fd00:ec2::254]/hook', 'uniqueLocal'],
    ['http://0.0.0.0/hook', 'unspecified'],
    ['http://224.0.0.1/hook', 'multicast'],
    ['http://localhost:8080/hook', 'loopback'],
  ])('%s is refused (%s) and nothing is stored', async (url, range) => {
    const key = await strict.register({ handle: `ssrf${Math.random().toString(36).slice(2, 8)}@acme` });
    const res = await fetch(`${strict.url}/agents/me/card`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ notification_url: url, role: 'changed' }),
    });
    const body = (await res.json()) as any;
    expect(res.status).toBe(400);
    expect(body).toMatchObject({ code: 'invalid_params' });
    expect(body.message).toMatch(/^body\.notification_url: refused: /);
    expect(body.message).toContain(range);
    const me = (await (
      await fetch(`${strict.url}/agents/me`, { headers: { authorization: `Bearer ${key}` } })
    ).json()) as any;
    expect(me).toMatchObject({ notification: null, role: 'engineer' });
  });

  test('a public address is accepted', async () => {
    const key = await strict.register({ handle: 'public@acme' });
    const res = await fetch(`${strict.url}/agents/me/card`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ notification_url: 'https://93.184.215.14/hook' }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).notification).toEqual({ url: 'https://93.184.215.14/hook', verified: false });
  });
});

describe('admin delivery routes refuse bad input', () => {
  test.each([
    ['GET', '/admin/deliveries?status=lost', 400, /^query\.status/],
    ['GET', '/admin/deliveries?limit=0', 400, /^query\.limit/],
    ['GET', '/admin/deliveries?limit=abc', 400, /^query\.limit/],
    ['GET', '/admin/deliveries?handle=not-a-handle', 400, /^query\.handle/],
    ['GET', '/admin/deliveries?color=red', 400, /^query/],
    ['POST', '/admin/deliveries/not-a-delivery/redrive', 400, /^path\.id: must be a delivery id/],
    ['GET', '/admin/deliveries/123', 400, /^path\.id/],
    ['POST', '/admin/deliveries/00000000-0000-4000-8000-000000000000.ghost@acme/redrive', 404, /No delivery/],
  ])('%s %s → %i', async (method, path, status, message) => {
    const res = await rest(method, path, relay.adminKey);
    expect(res.status).toBe(status);
    expect(res.body.message).toMatch(message);
  });

  test('without the admin key every delivery route is 401', async () => {
    for (const [method, path] of [
      ['GET', '/admin/deliveries'],
      ['POST', '/admin/deliveries/redrive-all'],
      ['GET', '/admin/deliveries/x'],
    ] as const) {
      expect((await rest(method, path, undefined)).status).toBe(401);
      expect((await rest(method, path, 'hra_wrong_key_wrong_key_wrong_key')).status).toBe(401);
    }
  });

  test('a delivered delivery cannot be re-driven (409) and stays delivered', async () => {
    const delivered = await rest('GET', '/admin/deliveries?status=delivered&limit=1', relay.adminKey);
    const id = delivered.body.deliveries[0].id;
    const res = await rest('POST', `/admin/deliveries/${id}/redrive`, relay.adminKey);
    expect(res.status).toBe(409);
    expect(res.body.message).toMatch(/is delivered; only failed deliveries can be re-driven/);
    expect((await rest('GET', `/admin/deliveries/${id}`, relay.adminKey)).body.status).toBe('delivered');
  });
});

describe('webhooks of approvals', () => {
  test('a held create goes to the sender and the approver, never the recipient, until approved; approval.requested reaches the approver', async () => {
    const [leadHook, senderHook, recipientHook] = [await receiver(), await receiver(), await receiver()];
    const lead = await teammateWithHook('wlead@acme', leadHook);
    const sender = await teammateWithHook('wsender@acme', senderHook);
    const recipient = await teammateWithHook('wrecipient@acme', recipientHook);
    expect((await rest('PUT', '/agents/me/card', recipient.key, { lead: 'wlead@acme' })).status).toBe(200);
    for (const t of [lead, sender, recipient]) await waitUntil(verified(t.key), 'endpoint verified');
    const policy = `rules:
  - { id: held-creates, match: { action: handoff.create, recipient: { handle: wrecipient@acme } }, effect: require_approval, approvers: [recipient_lead] }
  - { id: held-accepts, match: { action: handoff.accept, recipient: { handle: wrecipient@acme } }, effect: require_approval, approvers: [recipient_lead] }
`;
    expect((await rest('PUT', '/admin/policy', relay.adminKey, { source: policy })).status).toBe(200);
    const created = await call(sender.key, 'message/send', {
      recipient: 'wrecipient@acme',
      intent: 'inform',
      message: text('held'),
    });
    const types = (hook: WebhookReceiver) => hook.events().map((r) => r.json?.type);
    await waitUntil(
      async () =>
        (types(leadHook).includes('thread.awaiting_approval') &&
          types(senderHook).includes('thread.awaiting_approval')) ||
        undefined,
      'approver and sender told',
    );
    verifyWebhook(
      lead.secret,
      leadHook.events().find((r) => r.json?.type === 'thread.awaiting_approval')!,
    );
    expect(leadHook.events().find((r) => r.json?.type === 'thread.awaiting_approval')!.json!.data).toMatchObject({
      thread_id: created.task_id,
      summary: 'held',
      status: 'awaiting_approval',
    });

    const approved = await rest('POST', `/approvals/${created.approval.approval_id}/approve`, lead.key, {});
    expect(approved.status).toBe(200);
    await waitUntil(
      async () => types(recipientHook).includes('thread.created') || undefined,
      'the recipient told once approved',
    );
    expect(types(recipientHook)).toEqual(['thread.created']);

    const asked = await relay.rpc(recipient.key, 'tasks/update', { task_id: created.task_id, transition: 'accept' });
    expect(asked.body.error).toMatchObject({ code: -32021 });
    await waitUntil(
      async () => types(leadHook).includes('approval.requested') || undefined,
      'the approver asked about the accept',
    );
    // The actor (a participant) hears that its accept waits, as its call was answered.
    await waitUntil(async () => types(recipientHook).includes('approval.requested') || undefined, 'the actor told');
    expect(types(recipientHook)).toEqual(['thread.created', 'approval.requested']);
    expect((await rest('PUT', '/admin/policy', relay.adminKey, { source: 'rules: []\n' })).status).toBe(200);
  });
});
