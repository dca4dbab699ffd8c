// A teammate registered with a webhook endpoint on a test receiver (its path is the handle's name), once the relay
// has verified the endpoint by its challenge.
import type { WebhookReceiver } from '../../scripts/webhook-receiver';
import type { TestRelay } from './relay-harness';
import { waitUntil } from './wait-until';

export async function withVerifiedHook(
  relay: TestRelay,
  hooks: WebhookReceiver,
  handle: string,
  card: { slack_user_id?: string } = {},
): Promise<{ key: string; secret: string }> {
  const key = await relay.register({ handle, ...card });
  const rest = (method: string, body?: unknown) =>
    fetch(`${relay.url}${method === 'PUT' ? '/agents/me/card' : '/agents/me'}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    }).then(async (r) => (await r.json()) as any);
  const put = await rest('PUT', { notification_url: hooks.url(`/${handle.split('@')[0]}`) });
  await waitUntil(async () => (await rest('GET')).notification?.verified === true, `${handle}'s webhook verified`);
  return { key, secret: put.notification_secret };
}
