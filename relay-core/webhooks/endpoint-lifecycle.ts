// A teammate's webhook endpoint from set to gone: new URL and secret, rotation, verified, disabled on 410 Gone.
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { systemClock, type Clock } from '../domain/clock';
import type { NotificationEndpoint } from '../domain/documents';
import { RelayError } from '../domain/errors';
import type { Teammates } from '../service/teammates';
import type { MongoStore } from '../store/mongo-store';
import { assertAllowedTarget, WebhookTargetError, type TargetPolicy } from './ssrf-guard';

// An endpoint is verified once it answers its challenge (endpoint-challenge.ts).

/** How long a rotated-out webhook secret keeps signing beside the new one. */
export const WEBHOOK_SECRET_OVERLAP_MS = 24 * 3600 * 1000;

function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/**
 * The endpoint a card update sets for `url`, unverified, with a new signing secret (returned this once).
 * Refuses targets on loopback, private, link-local, metadata… addresses (unless the policy allows them).
 */
export async function newWebhookEndpoint(
  url: string,
  policy: TargetPolicy,
  now: Date,
): Promise<{ endpoint: NotificationEndpoint; secret: string }> {
  try {
    await assertAllowedTarget(url, policy);
  } catch (error) {
    if (error instanceof WebhookTargetError)
      throw new RelayError('invalid_params', `body.notification_url: ${error.message}`);
    throw error;
  }
  const secret = newSecret();
  return { endpoint: { url, secret, verified: false, updated_at: now }, secret };
}

export interface WebhookEndpointsDeps {
  store: MongoStore;
  /** The cached cards these writes make stale, and the caller's active card. */
  teammates: Pick<Teammates, 'forget' | 'requireActive'>;
  log: Logger;
  clock?: Clock;
}

export class WebhookEndpoints {
  private readonly store: MongoStore;
  private readonly teammates: WebhookEndpointsDeps['teammates'];
  private readonly log: Logger;
  private readonly clock: Clock;

  constructor(deps: WebhookEndpointsDeps) {
    this.store = deps.store;
    this.teammates = deps.teammates;
    this.log = deps.log;
    this.clock = deps.clock ?? systemClock;
  }

  /**
   * A new signing secret for the caller's webhook, returned this once. The old one keeps signing beside it (every
   * delivery carries both signatures) for WEBHOOK_SECRET_OVERLAP_MS, so the receiver can switch without losing a call.
   */
  async rotateSecret(handle: string): Promise<{ notification_secret: string; previous_secret_expires_at: string }> {
    const current = await this.teammates.requireActive(handle);
    const endpoint = current.notification;
    if (!endpoint)
      throw new RelayError(
        'invalid_params',
        'no webhook is set on your card (PUT /agents/me/card with notification_url first)',
      );
    const now = this.clock.now();
    const secret = newSecret();
    const expires = new Date(now.getTime() + WEBHOOK_SECRET_OVERLAP_MS);
    // Conditioned on the secret it replaces: of two rotations at once, one wins and the other is told to retry.
    const { after } = await this.store.writeAgent(handle, (doc) =>
      doc.notification?.secret === endpoint.secret
        ? {
            ...doc,
            notification: {
              ...doc.notification,
              secret,
              previous_secret: endpoint.secret,
              previous_secret_expires_at: expires,
            },
            updated_at: now,
          }
        : undefined,
    );
    this.teammates.forget(handle);
    if (!after) throw new RelayError('state_changed', 'the webhook changed while rotating its secret; try again');
    this.log.info({ handle }, 'webhook secret rotated');
    return { notification_secret: secret, previous_secret_expires_at: expires.toISOString() };
  }

  /** The endpoint set at `endpointUpdatedAt` answered its challenge; a URL changed since stays unverified. */
  async markVerified(handle: string, endpointUpdatedAt: Date): Promise<boolean> {
    const { after } = await this.store.writeAgent(handle, (doc) =>
      doc.notification?.updated_at.getTime() === endpointUpdatedAt.getTime()
        ? { ...doc, notification: { ...doc.notification, verified: true } }
        : undefined,
    );
    this.teammates.forget(handle);
    return after !== null;
  }

  /** The endpoint answered 410 Gone: no more deliveries until its owner sets a URL again. */
  async markGone(handle: string, endpointUpdatedAt: Date): Promise<void> {
    await this.store.writeAgent(handle, (doc) =>
      doc.notification?.updated_at.getTime() === endpointUpdatedAt.getTime()
        ? { ...doc, notification: { ...doc.notification, verified: false, disabled_at: this.clock.now() } }
        : undefined,
    );
    this.teammates.forget(handle);
    this.log.warn({ handle }, 'webhook endpoint answered 410 Gone; disabled until a new URL is set');
  }
}
