// The `verify` queue's processor: one handler per job name. `endpoint-challenge` proves a newly set webhook
// URL is the teammate's receiver: a signed POST of a random challenge it must echo back with a 2xx.
import { randomBytes } from 'node:crypto';
import { UnrecoverableError, type Job } from 'bullmq';
import type { Logger } from 'pino';
import { signingSecrets } from '../domain/documents';
import type { MongoStore } from '../store/mongo-store';
import type { TargetPolicy } from '../webhooks/ssrf-guard';
import { systemClock, type Clock } from '../domain/clock';
import type { Teammates } from '../service/teammates';
import { postSigned } from '../webhooks/signed-post';
import { challengeJobSchema, ENDPOINT_CHALLENGE_JOB } from '../webhooks/webhook-queues';

export type VerifyJobHandler = (job: Job) => Promise<unknown>;

export interface VerifyJobsDeps {
  store: MongoStore;
  teammates: Teammates;
  policy: TargetPolicy;
  log: Logger;
  /** Called once an endpoint is verified, to run the deliveries held for it. */
  onEndpointVerified(handle: string): Promise<unknown>;
  clock?: Clock;
  timeoutMs?: number;
}

export function endpointChallengeHandler(deps: VerifyJobsDeps): VerifyJobHandler {
  const clock = deps.clock ?? systemClock;
  return async function endpointChallenge(job: Job): Promise<'verified' | 'stale'> {
    const parsed = challengeJobSchema.safeParse(job.data);
    if (!parsed.success) throw new UnrecoverableError(`verify job ${job.id}: malformed data (${parsed.error.issues[0]?.message})`);
    const { handle, endpoint_updated_at } = parsed.data;
    const agent = await deps.store.agents.findOne({ _id: handle });
    const endpoint = agent?.status === 'active' ? agent.notification : null;
    // The URL changed or was removed since this job was enqueued: its own challenge job covers the new one.
    if (!endpoint || endpoint.disabled_at || endpoint.updated_at.toISOString() !== endpoint_updated_at) return 'stale';
    if (endpoint.verified) return 'verified';

    const challenge = randomBytes(24).toString('base64url');
    const body = JSON.stringify({ type: 'endpoint.challenge', timestamp: clock.now().toISOString(), challenge });
    const answer = await postSigned({ url: endpoint.url, secrets: signingSecrets(endpoint, clock.now()), id: `${job.id}.${job.attemptsMade}`, body, policy: deps.policy, timeoutMs: deps.timeoutMs });
    let echoed: unknown;
    try {
      echoed = (JSON.parse(answer.body) as { challenge?: unknown }).challenge;
    } catch {
      echoed = undefined;
    }
    if (answer.status < 200 || answer.status >= 300 || echoed !== challenge) {
      throw new Error(`endpoint of ${handle} answered HTTP ${answer.status} without echoing the challenge as {"challenge": …}`);
    }
    if (await deps.teammates.markEndpointVerified(handle, endpoint.updated_at)) {
      deps.log.info({ handle }, 'webhook endpoint verified');
      await deps.onEndpointVerified(handle);
    }
    return 'verified';
  };
}

/**
 * The verify queue's processor: dispatches on the job name. Kinds that live outside relay-core (the Slack
 * Accept verdict in bot/) come in as `more`.
 */
export function createVerifyProcessor(deps: VerifyJobsDeps, more: Record<string, VerifyJobHandler> = {}) {
  const handlers: Record<string, VerifyJobHandler> = {
    ...more,
    [ENDPOINT_CHALLENGE_JOB]: endpointChallengeHandler(deps),
  };
  return async function processVerifyJob(job: Job): Promise<unknown> {
    const handler = handlers[job.name];
    if (!handler) throw new UnrecoverableError(`verify job ${job.id}: unknown kind "${job.name}"`);
    return handler(job);
  };
}
