// One try of a delivery job (a card webhook or an A2A push): the delivery must still be this job's to send, the POST
// is signed and guarded (signed-post.ts), and its outcome is recorded on the delivery — delivered, gone (410), or a
// failed attempt that fails the job to be retried, and for good (dead-lettered) on its last attempt.
import type { Logger } from 'pino';
import type { Clock } from '../domain/clock';
import type { WebhookAttempt } from '../domain/documents';
import type { WebhookDeliveries } from './deliveries';
import { postSigned, type SignedPost } from './signed-post';

export interface DeliveryAttempt {
  /** Records a failed attempt and fails the job (for good on its last attempt: logged as `gaveUp`). */
  fail(attempt: Omit<WebhookAttempt, 'at'>, message: string): Promise<never>;
  /**
   * POSTs the delivery and records what came of it: a 2xx is delivered; a 410 is gone, once `gone` has acted on it
   * (its answer is the attempt's error); anything else, a redirect or no answer, is a failed attempt.
   */
  post(request: SignedPost, gone: () => Promise<string>): Promise<'delivered' | 'gone'>;
}

/**
 * The attempt of `job` at delivery `id`, or null when it is no longer this job's to send (delivered, dead-lettered or
 * superseded by a re-drive: a re-enqueued job must not send it again).
 */
export async function openAttempt(
  deps: { deliveries: WebhookDeliveries; clock: Clock; log: Logger },
  id: string,
  job: { attemptsMade: number; opts: { attempts?: number } },
  data: { redrive: number; handle: string; type: string },
  gaveUp: string,
): Promise<DeliveryAttempt | null> {
  const { deliveries, clock, log } = deps;
  const doc = await deliveries.get(id);
  if (!doc || doc.status !== 'pending' || doc.redrives !== data.redrive) return null;
  const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
  const fail: DeliveryAttempt['fail'] = async (attempt, message) => {
    await deliveries.record(id, { at: clock.now(), ...attempt }, lastAttempt ? 'failed' : 'pending');
    if (lastAttempt) log.warn({ delivery_id: id, handle: data.handle, event: data.type, error: attempt.error }, gaveUp);
    throw new Error(message);
  };
  return {
    fail,
    async post(request, gone) {
      let status: number;
      try {
        ({ status } = await postSigned(request));
      } catch (error) {
        const message = (error as Error).message;
        return fail({ outcome: 'failed', http_status: null, error: message.slice(0, 300) }, message);
      }
      if (status >= 200 && status < 300) {
        await deliveries.record(
          id,
          { at: clock.now(), outcome: 'delivered', http_status: status, error: null },
          'delivered',
        );
        return 'delivered';
      }
      if (status === 410) {
        const error = await gone();
        await deliveries.record(id, { at: clock.now(), outcome: 'gone', http_status: 410, error }, 'gone');
        return 'gone';
      }
      const why = status >= 300 && status < 400 ? `HTTP ${status} (redirects are not followed)` : `HTTP ${status}`;
      return fail({ outcome: 'failed', http_status: status, error: why }, why);
    },
  };
}
