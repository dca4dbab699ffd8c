// The verify queue's `endpoint-challenge` job: proves a newly set webhook URL is the teammate's receiver.
import { randomBytes } from 'node:crypto';
import type { Job } from 'bullmq';
import type { Logger } from 'pino';
import { systemClock, type Clock } from '../domain/clock';
import { signingSecrets } from '../domain/documents';
import { parseJob } from '../queues/parse-job';
import type { MongoStore } from '../store/mongo-store';
import type { WebhookEndpoints } from './endpoint-lifecycle';
import { postSigned } from './signed-post';
import type { TargetPolicy } from './ssrf-guard';
import { challengeJobSchema } from './webhook-queues';

// A signed POST of a random challenge, which the receiver must echo back with a 2xx.

export interface EndpointChallengeDeps {
  store: MongoStore;
  endpoints: Pick<WebhookEndpoints, 'markVerified'>;
  policy: TargetPolicy;
  log: Logger;
  /** Called once an endpoint is verified, to run the deliveries held for it. */
  onEndpointVerified(handle: string): Promise<unknown>;
  clock?: Clock;
  timeoutMs?: number;
}

export function endpointChallengeHandler(deps: EndpointChallengeDeps): (job: Job) => Promise<'verified' | 'stale'> {
  const clock = deps.clock ?? systemClock;
  return async function endpointChallenge(job: Job): Promise<'verified' | 'stale'> {
    const { handle, endpoint_updated_at } = parseJob(challengeJobSchema, job);
    const agent = await deps.store.agents.findOne({ _id: handle });
    const endpoint = agent?.status === 'active' ? agent.notification : null;
    // The URL changed or was removed since this job was enqueued: its own challenge job covers the new one.
    if (!endpoint || endpoint.disabled_at || endpoint.updated_at.toISOString() !== endpoint_updated_at) return 'stale';
    if (endpoint.verified) return 'verified';

    const challenge = randomBytes(24).toString('base64url');
    const body = JSON.stringify({ type: 'endpoint.challenge', timestamp: clock.now().toISOString(), challenge });
    const answer = await postSigned({
      url: endpoint.url,
      secrets: signingSecrets(endpoint, clock.now()),
      id: `${job.id}.${job.attemptsMade}`,
      body,
      policy: deps.policy,
      timeoutMs: deps.timeoutMs,
    });
    let echoed: unknown;
    try {
      echoed = (JSON.parse(answer.body) as { challenge?: unknown }).challenge;
    } catch {
      echoed = undefined;
    }
    if (answer.status < 200 || answer.status >= 300 || echoed !== challenge) {
      throw new Error(
        `endpoint of ${handle} answered HTTP ${answer.status} without echoing the challenge as {"challenge": …}`,
      );
    }
    if (await deps.endpoints.markVerified(handle, endpoint.updated_at)) {
      deps.log.info({ handle }, 'webhook endpoint verified');
      await deps.onEndpointVerified(handle);
    }
    return 'verified';
  };
}
